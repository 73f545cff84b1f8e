//! The named race windows of the catalogue's cases: for each seed, the interleavings its
//! defect needs, as predicates over the protocol events (`docs/event-log.md`), and which
//! scenarios must reach which. A fixed variant's soak proves nothing about a window it
//! never reached; the soak's report says, per case, how often each was.

use crate::check::catalogue::case::Case;
pub use crate::check::catalogue::scm_windows::{
    ALLOCATION_BEFORE_COPY_REPORT, ALLOCATION_BEFORE_CREATION_REPORT, ALLOCATION_BEFORE_REBUILD,
    LEADER_CHANGE_BEFORE_COPY_REPORT, LEADER_CHANGE_BEFORE_CREATION, LEADER_CHANGE_BEFORE_REPORT,
    REREGISTRATION_BEFORE_CREATION, STALE_REPLICATE_AND_REELECTION,
};
pub use crate::check::catalogue::standby_windows::{
    CATCH_UP_WITH_QUEUED_REPORTS, DELETION_WITH_QUEUED_REPORTS, FINALIZED_BEFORE_COMPLETION,
    RBW_AFTER_COMPLETION, REMOVAL_WITH_QUEUED_REPORTS, REPORT_BETWEEN_GENSTAMP_AND_BLOCK_EDITS,
    REPORT_QUEUED_AHEAD_OF_ITS_BLOCK_EDIT, STALE_REPORT_QUEUED, SUPERSEDED_QUEUED_REPORT,
};
use crate::check::exploration::{RaceWindow, Seen, WindowState};

/// HDDS-17268: a heartbeat's term arrives while the datanode's term is unset, then a
/// command of a lower term is queued before the term is initialised (the seed's MC4).
pub const TERM_BEFORE_INIT: RaceWindow = RaceWindow {
    seed: "HDDS-17268",
    name: "heartbeat term before init, then a stale command",
    reads: &[
        "heartbeat term recorded for init",
        "heartbeat term ignored before init",
        "command queued",
        "term initialised",
        "restarted: term and queue lost",
    ],
    fields: &["term"],
    step: term_before_init,
};

fn term_before_init(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let node = event.node_key();
    match event.name {
        "heartbeat term recorded for init" | "heartbeat term ignored before init" => {
            let term = event.number("term").unwrap_or(0);
            if state.stage == 0 || state.slots[1] != node {
                *state = WindowState::default();
            }
            state.stage = 1;
            state.slots[0] = state.slots[0].max(term);
            state.slots[1] = node;
            false
        }
        "command queued" => {
            state.stage == 1
                && state.slots[1] == node
                && event.number("term").is_some_and(|t| t < state.slots[0])
        }
        _ if state.slots[1] == node => {
            *state = WindowState::default();
            false
        }
        _ => false,
    }
}

/// HDDS-7619: a command of a lower term waits in a datanode's queue when a command of a
/// higher term is queued behind it.
pub const NEWER_COMMAND_QUEUED_BEHIND: RaceWindow = RaceWindow {
    seed: "HDDS-17268",
    name: "a newer term's command queued behind a waiting older one",
    reads: &[
        "command queued",
        "command dispatched",
        "command dropped as stale",
    ],
    fields: &["term"],
    step: newer_command_queued_behind,
};

/// Slot 0: the node whose older command waits; slot 1: its term.
fn newer_command_queued_behind(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let node = event.node_key();
    let term = event.number("term").unwrap_or(0);
    match event.name {
        "command queued" if state.stage == 1 && state.slots[0] == node => term > state.slots[1],
        "command queued" => {
            state.stage = 1;
            state.slots[0] = node;
            state.slots[1] = term;
            false
        }
        _ if state.slots[0] == node => {
            *state = WindowState::default();
            false
        }
        _ => false,
    }
}

/// HDDS-17268: two heartbeat threads hold different terms at once, one between receiving
/// its term and applying it while the other receives its own (the seed's MC5).
pub const HEARTBEAT_TERMS_IN_FLIGHT: RaceWindow = RaceWindow {
    seed: "HDDS-17268",
    name: "two heartbeat terms in flight at once",
    reads: &[
        "heartbeat term received",
        "term set",
        "term set without the lock",
        "term read without the lock",
        "heartbeat term recorded for init",
        "heartbeat term ignored before init",
        "command queued",
    ],
    fields: &["term"],
    step: heartbeat_terms_in_flight,
};

fn heartbeat_terms_in_flight(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let in_flight = state.stage == 1;
    let term = event.number("term").unwrap_or(0);
    match event.name {
        "heartbeat term received" if in_flight && event.thread != state.slots[0] => {
            term != state.slots[1]
        }
        "heartbeat term received" => {
            state.stage = 1;
            state.slots[0] = event.thread;
            state.slots[1] = term;
            false
        }
        // The holder applied its term (or read it unlocked, then set it: still in flight).
        "term read without the lock" => false,
        _ => {
            if in_flight && event.thread == state.slots[0] {
                state.stage = 0;
            }
            false
        }
    }
}

/// HDDS-17268: after a datanode restart, a command of a leader already deposed is queued
/// before the datanode initialised its term (the window the seed's patch leaves open: it
/// initialises from that command when no heartbeat term came first).
pub const DEPOSED_COMMAND_AFTER_RESTART: RaceWindow = RaceWindow {
    seed: "HDDS-17268",
    name: "restart, then a deposed leader's command before the term's init",
    reads: &[
        "stepped down",
        "restarted: term and queue lost",
        "command queued",
        "term initialised",
    ],
    fields: &["term"],
    step: deposed_command_after_restart,
};

fn deposed_command_after_restart(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let node = event.node_key();
    let term = event.number("term").unwrap_or(0);
    // slots: 0 the highest deposed term, 1 the restarted node.
    match event.name {
        "stepped down" => {
            state.slots[0] = state.slots[0].max(term);
            false
        }
        "restarted: term and queue lost" => {
            state.stage = 1;
            state.slots[1] = node;
            false
        }
        "command queued" => state.stage == 1 && state.slots[1] == node && term <= state.slots[0],
        "term initialised" if state.slots[1] == node => {
            state.stage = 0;
            false
        }
        _ => false,
    }
}

/// HDDS-3988: a restarted datanode queues a command before its term is initialised (the
/// command must wait until a majority of its SCMs heartbeat).
pub const COMMAND_BEFORE_INIT_AFTER_RESTART: RaceWindow = RaceWindow {
    seed: "HDDS-17268",
    name: "restart, then a command queued before the term's init",
    reads: &[
        "restarted: term and queue lost",
        "command queued",
        "term initialised",
    ],
    fields: &[],
    step: command_before_init_after_restart,
};

fn command_before_init_after_restart(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let node = event.node_key();
    // slots: 0 the restarted node.
    match event.name {
        "restarted: term and queue lost" => {
            state.stage = 1;
            state.slots[0] = node;
            false
        }
        "command queued" => state.stage == 1 && state.slots[0] == node,
        _ => {
            if state.slots[0] == node {
                state.stage = 0;
            }
            false
        }
    }
}

/// The key of the replica an event names: its node and container.
fn replica_key(event: &Seen<'_>) -> u64 {
    event.node_key() ^ event.key("container").rotate_left(21)
}

/// HDDS-16811: the block deleting service deletes a block of a replica whose repair has
/// begun pulling (the trees compared, or a chunk pulled) and not yet decided its commit.
pub const DELETE_BETWEEN_PULL_AND_COMMIT: RaceWindow = RaceWindow {
    seed: "HDDS-16811",
    name: "deletion between a repair's pull and its commit",
    reads: &[
        "trees compared",
        "chunk pulled",
        "block deleted",
        "commit decided",
        "reconciliation finished",
    ],
    fields: &["container"],
    step: delete_between_pull_and_commit,
};

/// The shape of a replica's window that one of the `opens` events opens, and any other
/// event it reads on that replica closes, except the reaching ones: `reaches` says of
/// those (`None` for the rest) whether one on the same replica reaches the window while
/// it is open.
fn reached_while_open(
    state: &mut WindowState,
    event: &Seen<'_>,
    opens: &[&str],
    reaches: impl Fn(&Seen<'_>) -> Option<bool>,
) -> bool {
    let key = replica_key(event);
    if opens.contains(&event.name) {
        state.stage = 1;
        state.slots[0] = key;
        return false;
    }
    if let Some(reached) = reaches(event) {
        return reached && state.stage == 1 && state.slots[0] == key;
    }
    if state.slots[0] == key {
        state.stage = 0;
    }
    false
}

fn delete_between_pull_and_commit(state: &mut WindowState, event: &Seen<'_>) -> bool {
    reached_while_open(state, event, &["trees compared", "chunk pulled"], |e| {
        (e.name == "block deleted").then_some(true)
    })
}

/// HDDS-16811: a block of a replica is deleted while a reconciliation of that replica
/// runs (between its start and its end).
pub const DELETE_DURING_RECONCILIATION: RaceWindow = RaceWindow {
    seed: "HDDS-16811",
    name: "deletion during a reconciliation of the replica",
    reads: &[
        "reconciliation started",
        "block deleted",
        "reconciliation finished",
    ],
    fields: &["container"],
    step: delete_during_reconciliation,
};

fn delete_during_reconciliation(state: &mut WindowState, event: &Seen<'_>) -> bool {
    reached_while_open(state, event, &["reconciliation started"], |e| {
        (e.name == "block deleted").then_some(true)
    })
}

/// HDDS-7300: a deleting round unlinks a block of a replica, then a scan of that replica
/// ends (its second look at the block came after the unlink, before or after the
/// round's metadata batch).
pub const SCAN_AFTER_UNLINK: RaceWindow = RaceWindow {
    seed: "HDDS-16811",
    name: "scan ending after a block's unlink on the replica",
    reads: &["block deleted", "container scanned"],
    fields: &["container"],
    step: deletion_then_the_same_replica,
};

/// HDDS-16811: a block is deleted on a replica, then reconciliation compares that
/// replica's tree with a peer that still has the block.
pub const DELETE_BEFORE_COMPARE: RaceWindow = RaceWindow {
    seed: "HDDS-16811",
    name: "deletion before the repair compares trees",
    reads: &["block deleted", "trees compared"],
    fields: &["container"],
    step: deletion_then_the_same_replica,
};

/// A `block deleted` on a replica, then the window's other event (the only other one it
/// reads) on the same replica.
fn deletion_then_the_same_replica(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let key = replica_key(event);
    match event.name {
        "block deleted" => {
            state.stage = 1;
            state.slots[0] = key;
            false
        }
        _ => state.stage == 1 && state.slots[0] == key,
    }
}

/// HDDS-16811: a second reconciliation of a replica is asked for while one runs (it
/// starts, or the handler refuses it as one already in flight).
pub const CONCURRENT_RECONCILIATIONS: RaceWindow = RaceWindow {
    seed: "HDDS-16811",
    name: "a second reconciliation of the replica while one runs",
    reads: &[
        "reconciliation started",
        "reconciliation refused",
        "reconciliation finished",
    ],
    fields: &["container"],
    step: concurrent_reconciliations,
};

fn concurrent_reconciliations(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let key = replica_key(event);
    match event.name {
        "reconciliation started" | "reconciliation refused"
            if state.stage == 1 && state.slots[0] == key =>
        {
            true
        }
        "reconciliation refused" => false,
        "reconciliation started" => {
            state.stage = 1;
            state.slots[0] = key;
            false
        }
        _ => {
            if state.slots[0] == key {
                state.stage = 0;
            }
            false
        }
    }
}

/// HDDS-17268: a command of a deposed leader is queued on a datanode that already heard
/// a newer leader's term (the command the term fence must drop).
pub const DEPOSED_COMMAND_AFTER_NEWER_TERM: RaceWindow = RaceWindow {
    seed: "HDDS-17268",
    name: "a deposed leader's command queued after a newer term reached the datanode",
    reads: &["stepped down", "heartbeat term received", "command queued"],
    fields: &["term"],
    step: deposed_command_after_newer_term,
};

fn deposed_command_after_newer_term(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let term = event.number("term").unwrap_or(0);
    // slots: 0 the highest deposed term, 1 the datanode that last heard a newer one.
    match event.name {
        "stepped down" => {
            state.slots[0] = state.slots[0].max(term);
            false
        }
        "heartbeat term received" if state.slots[0] > 0 && term > state.slots[0] => {
            state.slots[1] = event.node_key();
            false
        }
        "command queued" => {
            state.slots[1] == event.node_key() && state.slots[0] > 0 && term <= state.slots[0]
        }
        _ => false,
    }
}

/// HDDS-16811 (and the tree writes beyond HDDS-16808): the block deleting service's round
/// writes a replica's checksum tree (or fails to) while a reconciliation of that replica
/// runs.
pub const DELETING_ROUND_DURING_RECONCILIATION: RaceWindow = RaceWindow {
    seed: "HDDS-16811",
    name: "a deleting round's tree write during a reconciliation of the replica",
    reads: &[
        "reconciliation started",
        "tree written",
        "tree write failed",
        "reconciliation finished",
    ],
    fields: &["container", "by"],
    step: deleting_round_during_reconciliation,
};

fn deleting_round_during_reconciliation(state: &mut WindowState, event: &Seen<'_>) -> bool {
    reached_while_open(state, event, &["reconciliation started"], |e| {
        matches!(e.name, "tree written" | "tree write failed")
            .then(|| e.text("by") == Some("deleting round"))
    })
}

/// HDDS-17268 with HDDS-16449: a replication manager's pass queued a container, a newer
/// leader was elected, and the queuing SCM's processor then handled it (at its old term
/// if it has not heard, or from the old queue once re-elected).
pub const LEADER_DEPOSED_BETWEEN_QUEUE_AND_ACT: RaceWindow = RaceWindow {
    seed: "HDDS-17268",
    name: "a leader deposed between queueing and acting",
    reads: &["became leader", "queued container processed"],
    fields: &["term", "queued_term"],
    step: leader_deposed_between_queue_and_act,
};

fn leader_deposed_between_queue_and_act(state: &mut WindowState, event: &Seen<'_>) -> bool {
    // slots: 0 the highest term a leader was elected in.
    match event.name {
        "became leader" => {
            state.slots[0] = state.slots[0].max(event.number("term").unwrap_or(0));
            false
        }
        _ => event
            .number("queued_term")
            .is_some_and(|queued| queued < state.slots[0]),
    }
}

const TERM_FENCING: &[RaceWindow] = &[TERM_BEFORE_INIT];
const MC5: &[RaceWindow] = &[HEARTBEAT_TERMS_IN_FLIGHT];
const QUEUED_AHEAD: &[RaceWindow] = &[NEWER_COMMAND_QUEUED_BEHIND];
const RESTART: &[RaceWindow] = &[DEPOSED_COMMAND_AFTER_RESTART];
const FENCING_CLUSTER: &[RaceWindow] = &[
    TERM_BEFORE_INIT,
    HEARTBEAT_TERMS_IN_FLIGHT,
    DEPOSED_COMMAND_AFTER_RESTART,
];
const REPAIR: &[RaceWindow] = &[DELETE_BETWEEN_PULL_AND_COMMIT, DELETE_DURING_RECONCILIATION];
const SCAN: &[RaceWindow] = &[SCAN_AFTER_UNLINK];
const RESTORE: &[RaceWindow] = &[DELETE_BEFORE_COMPARE];
const CLUSTER_DELETES: &[RaceWindow] = &[DELETE_BEFORE_COMPARE, DELETE_DURING_RECONCILIATION];
const RECONCILE: &[RaceWindow] = &[CONCURRENT_RECONCILIATIONS];
const REREGISTRATION: &[RaceWindow] = &[REREGISTRATION_BEFORE_CREATION];
const REBUILD: &[RaceWindow] = &[ALLOCATION_BEFORE_REBUILD];
const SLOTS: &[RaceWindow] = &[LEADER_CHANGE_BEFORE_CREATION];
const UNREPORTED: &[RaceWindow] = &[LEADER_CHANGE_BEFORE_REPORT];
const FAILOVERS: &[RaceWindow] = &[ALLOCATION_BEFORE_REBUILD, LEADER_CHANGE_BEFORE_CREATION];
const COPIES: &[RaceWindow] = &[ALLOCATION_BEFORE_COPY_REPORT];
const REELECTION: &[RaceWindow] = &[STALE_REPLICATE_AND_REELECTION];
const COPIES_ACROSS_FAILOVERS: &[RaceWindow] = &[
    ALLOCATION_BEFORE_COPY_REPORT,
    LEADER_CHANGE_BEFORE_COPY_REPORT,
];
const SAFE_MODE: &[RaceWindow] = &[FINALIZED_BEFORE_COMPLETION];
const PURGE: &[RaceWindow] = &[SUPERSEDED_QUEUED_REPORT];
const RBW_RACE: &[RaceWindow] = &[RBW_AFTER_COMPLETION, SUPERSEDED_QUEUED_REPORT];
const SPACE_CHECK: &[RaceWindow] = &[ALLOCATION_BEFORE_CREATION_REPORT];
const STANDBY: &[RaceWindow] = &[RBW_AFTER_COMPLETION, FINALIZED_BEFORE_COMPLETION];
const DEPOSED_COMMANDS: &[RaceWindow] = &[DEPOSED_COMMAND_AFTER_NEWER_TERM];
const DEPOSED_PROCESSOR: &[RaceWindow] = &[
    DEPOSED_COMMAND_AFTER_NEWER_TERM,
    LEADER_DEPOSED_BETWEEN_QUEUE_AND_ACT,
];
const RANDOM_CLUSTER: &[RaceWindow] =
    &[DEPOSED_COMMAND_AFTER_NEWER_TERM, ALLOCATION_BEFORE_REBUILD];
const TREE_WRITES: &[RaceWindow] = &[DELETING_ROUND_DURING_RECONCILIATION];
const GENSTAMP: &[RaceWindow] = &[REPORT_BETWEEN_GENSTAMP_AND_BLOCK_EDITS];
const CATCH_UP: &[RaceWindow] = &[CATCH_UP_WITH_QUEUED_REPORTS];
const LEAK: &[RaceWindow] = &[DELETION_WITH_QUEUED_REPORTS];
const RESTART_WITH_A_MINORITY: &[RaceWindow] = &[COMMAND_BEFORE_INIT_AFTER_RESTART];
const DEPARTED: &[RaceWindow] = &[REMOVAL_WITH_QUEUED_REPORTS];
const STALE_QUEUED: &[RaceWindow] = &[STALE_REPORT_QUEUED];
const BLOCK_EDIT_DRAIN: &[RaceWindow] = &[REPORT_QUEUED_AHEAD_OF_ITS_BLOCK_EDIT];
const APPENDS: &[RaceWindow] = &[RBW_AFTER_COMPLETION, SUPERSEDED_QUEUED_REPORT];

/// Each scenario's race windows.
const WINDOWS: &[(&str, &[RaceWindow])] = &[
    ("keys_deleted_while_leadership_moves", DEPOSED_COMMANDS),
    (
        "over_replicated_container_across_a_leader_change",
        DEPOSED_COMMANDS,
    ),
    (
        "over_replicated_container_while_the_deposed_leader_processes",
        DEPOSED_PROCESSOR,
    ),
    ("random_cluster_with_faults", RANDOM_CLUSTER),
    ("data_checksum_follows_concurrent_tree_writes", TREE_WRITES),
    (
        "failed_deletion_tree_write_never_orphans_a_repair",
        TREE_WRITES,
    ),
    (
        "emptied_container_deleted_despite_a_restored_block",
        RESTORE,
    ),
    (
        "replica_reported_between_genstamp_and_block_edits_is_recorded",
        GENSTAMP,
    ),
    (
        "replica_reported_between_split_batches_is_recorded",
        GENSTAMP,
    ),
    ("failover_judges_queued_reports_after_catch_up", CATCH_UP),
    ("deleted_blocks_leave_no_queued_reports", LEAK),
    ("appends_leave_no_stale_location", APPENDS),
    ("heartbeat_term_fences_believing_old_leader", TERM_FENCING),
    (
        "heartbeat_term_fences_stepped_down_old_leader",
        TERM_FENCING,
    ),
    ("deposed_leader_command_after_restart", RESTART),
    ("concurrent_leader_heartbeats_keep_the_highest_term", MC5),
    ("stale_command_queued_ahead_of_a_newer_one", QUEUED_AHEAD),
    (
        "restarted_datanode_waits_for_a_majority",
        RESTART_WITH_A_MINORITY,
    ),
    (
        "leader_transfers_never_run_a_stale_command",
        FENCING_CLUSTER,
    ),
    ("transfer_keeps_unwritten_slots", SLOTS),
    ("single_scm_restart_keeps_unwritten_slots", SLOTS),
    ("all_scms_restart_keeps_unwritten_slots", SLOTS),
    ("address_change_keeps_unwritten_slots", REREGISTRATION),
    ("version_change_keeps_unwritten_slots", REREGISTRATION),
    ("port_change_keeps_unwritten_slots", REREGISTRATION),
    ("unreported_closing_container_keeps_its_slot", UNREPORTED),
    ("pending_slots_are_the_unwritten_grants", SLOTS),
    ("allocation_waits_for_the_rebuild", REBUILD),
    (
        "rebuild_sees_allocation_committed_across_reelection",
        REBUILD,
    ),
    (
        "reregistration_during_allocation_keeps_the_slot",
        REREGISTRATION,
    ),
    ("random_failovers_never_over_grant", FAILOVERS),
    ("space_check_sees_created_container", SPACE_CHECK),
    ("superseded_queued_report_is_purged", PURGE),
    ("departed_datanode_leaves_no_queued_report", DEPARTED),
    ("stale_replica_queued_as_reported", STALE_QUEUED),
    (
        "queued_reports_judged_at_their_block_edit",
        BLOCK_EDIT_DRAIN,
    ),
    ("rbw_report_before_close_loses_no_replica", STANDBY),
    (
        "safe_mode_credits_replicas_reported_before_close",
        SAFE_MODE,
    ),
    ("rbw_report_races_completion", RBW_RACE),
    ("failovers_lose_no_replica_and_keep_counts", STANDBY),
    ("delete_during_repair", REPAIR),
    ("scan_during_block_deletion", SCAN),
    ("delete_during_partial_repair", REPAIR),
    ("deleted_block_not_restored", RESTORE),
    ("block_deleted_during_reconciliation", REPAIR),
    ("block_deleted_during_partial_reconciliation", REPAIR),
    ("deletes_and_repairs_keep_replicas_consistent", REPAIR),
    ("concurrent_reconciliations", RECONCILE),
    ("concurrent_reconciliations_unguarded", RECONCILE),
    ("stale_force_delete_during_repair", TERM_FENCING),
    (
        "deposed_leaders_force_delete_through_the_cluster",
        TERM_FENCING,
    ),
    ("keys_written_while_leadership_moves", FAILOVERS),
    ("replica_copied_while_keys_are_granted", COPIES),
    ("replica_copied_across_a_reelection", REELECTION),
    (
        "replica_copied_while_leadership_moves",
        COPIES_ACROSS_FAILOVERS,
    ),
    (
        "deletions_across_transfer_restart_and_repair",
        CLUSTER_DELETES,
    ),
    (
        "key_deleted_from_a_quasi_closed_container_during_reconcile",
        CLUSTER_DELETES,
    ),
];

/// The race windows of `scenario`.
pub fn windows_of(scenario: &str) -> &'static [RaceWindow] {
    WINDOWS
        .iter()
        .find(|(name, _)| *name == scenario)
        .map_or(&[], |(_, windows)| windows)
}

/// Gives every case the windows of its scenario.
pub(super) fn attach(cases: &mut [Case]) {
    for case in cases {
        case.windows = windows_of(case.scenario);
    }
}
