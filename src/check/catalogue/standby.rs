//! The catalogue of the HA standby's handling of early datanode messages (HDFS-2742).

use crate::check::catalogue::case::Case;
use crate::namenode::namesystem::NamesystemBehavior;
use crate::scenarios::standby::{
    AppendClusterShape, StandbyClusterShape, appends_leave_no_stale_location,
    deleted_blocks_leave_no_queued_reports, departed_datanode_leaves_no_queued_report,
    failover_judges_queued_reports_after_catch_up, failovers_lose_no_replica_and_keep_counts,
    queued_reports_judged_at_their_block_edit, rbw_report_before_close_loses_no_replica,
    rbw_report_races_completion, replica_reported_between_genstamp_and_block_edits_is_recorded,
    replica_reported_between_split_batches_is_recorded,
    safe_mode_credits_replicas_reported_before_close, stale_replica_queued_as_reported,
    superseded_queued_report_is_purged,
};

/// The HA standby scenarios (HDFS-2742).
pub fn standby() -> Vec<Case> {
    let mut cases = Vec::new();
    scripted_reproductions(&mut cases);
    rbw_report_race(&mut cases);
    split_batch_race(&mut cases);
    random_failovers(&mut cases);
    appends_leaving_a_datanode_out(&mut cases);
    deleted_blocks_heal_phase(&mut cases);
    cases
}

/// The seed's scripted reproductions: no thread, one execution says all.
fn scripted_reproductions(cases: &mut Vec<Case>) {
    let first = cases.len();
    cases!(
        cases,
        "rbw_report_before_close_loses_no_replica",
        NamesystemBehavior,
        |behavior, _seed| rbw_report_before_close_loses_no_replica(behavior),
        [(Trunk, Holds), (LegacyWholeMessageQueue, Caught)]
    );
    cases!(
        cases,
        "safe_mode_credits_replicas_reported_before_close",
        NamesystemBehavior,
        |behavior, _seed| safe_mode_credits_replicas_reported_before_close(behavior),
        [
            (Trunk, Holds),
            (LegacyEarlyDrain, Caught),
            (LegacyWholeMessageQueue, Caught)
        ]
    );
    cases!(
        cases,
        "failover_judges_queued_reports_after_catch_up",
        NamesystemBehavior,
        |behavior, _seed| failover_judges_queued_reports_after_catch_up(behavior),
        [(Trunk, Holds), (LegacyHaStateCheck, Caught)]
    );
    cases!(
        cases,
        "superseded_queued_report_is_purged",
        NamesystemBehavior,
        |behavior, _seed| superseded_queued_report_is_purged(behavior),
        [(Trunk, Holds), (LegacyNoStaleEntryPurge, Caught)]
    );
    cases!(
        cases,
        "replica_reported_between_genstamp_and_block_edits_is_recorded",
        NamesystemBehavior,
        |behavior, _seed| replica_reported_between_genstamp_and_block_edits_is_recorded(behavior),
        [(Trunk, Holds), (LegacyNoImpendingGenstamp, Caught)]
    );
    cases!(
        cases,
        "queued_reports_judged_at_their_block_edit",
        NamesystemBehavior,
        |behavior, _seed| queued_reports_judged_at_their_block_edit(behavior),
        [
            (Trunk, Holds),
            (LegacyEarlyDrain, Caught),
            (LegacyWholeMessageQueue, Caught)
        ]
    );
    cases!(
        cases,
        "departed_datanode_leaves_no_queued_report",
        NamesystemBehavior,
        |behavior, _seed| departed_datanode_leaves_no_queued_report(behavior),
        [(Trunk, Holds), (LegacyKeepDepartedDatanodeMessages, Caught)]
    );
    cases!(
        cases,
        "stale_replica_queued_as_reported",
        NamesystemBehavior,
        |behavior, _seed| stale_replica_queued_as_reported(behavior),
        [(Trunk, Holds), (LegacyQueueStoredBlock, Caught)]
    );
    for case in &mut cases[first..] {
        case.sequential = true;
    }
}

/// An RBW report racing the replay of its block's completion, small enough for loom. The
/// purge defect needs the tailer to replay every batch before the datanode's first report:
/// PCT finds it within 3 schedules, the random scheduler took 49 067 in one soak run and
/// none within the shuttle tests' bound of 20 000 for their seed.
fn rbw_report_race(cases: &mut Vec<Case>) {
    cases!(
        cases,
        "rbw_report_races_completion",
        NamesystemBehavior,
        |behavior, _seed| rbw_report_races_completion(behavior),
        [
            (Trunk, Holds),
            (LegacyWholeMessageQueue, Caught),
            (LegacyNoStaleEntryPurge, Caught)
        ]
    );
    beyond_random(cases, NamesystemBehavior::LegacyNoStaleEntryPurge);
}

/// HDFS-14941: a RECEIVED report racing a tailer that replays one edit a batch, so that a
/// batch ends between the block's GS edit and its block edit.
fn split_batch_race(cases: &mut Vec<Case>) {
    cases!(
        cases,
        "replica_reported_between_split_batches_is_recorded",
        NamesystemBehavior,
        |behavior, _seed| replica_reported_between_split_batches_is_recorded(behavior),
        [(Trunk, Holds), (LegacyNoImpendingGenstamp, Caught)]
    );
}

/// Writers, the tailer, three datanodes, replication changes and failovers. The early-drain
/// defect needs the writer to close a file while its replicas' reports wait: PCT finds it
/// within 3 schedules, the random scheduler took 3 182 in one soak run and none within the
/// shuttle tests' bound of 20 000 for their seed. HDFS-3605 (`LegacyHaStateCheck`) needs a
/// failover while the standby lags with queued reports: in one soak run (seed 1) the
/// random scheduler caught it at schedule 3 896, PCT at 105, the sequential reproduction
/// at its only one.
fn random_failovers(cases: &mut Vec<Case>) {
    cases!(
        cases,
        "failovers_lose_no_replica_and_keep_counts",
        NamesystemBehavior,
        |behavior, seed| failovers_lose_no_replica_and_keep_counts(
            behavior,
            seed,
            StandbyClusterShape::default()
        ),
        [
            (Trunk, Holds),
            (LegacyWholeMessageQueue, Caught),
            (LegacyEarlyDrain, Caught),
            (LegacyHaStateCheck, Caught)
        ]
    );
    beyond_random(cases, NamesystemBehavior::LegacyEarlyDrain);
}

/// Appends whose pipelines leave a datanode out, its old replica still reported, racing the
/// tailer and failover, then the replication lowered to 1. Not a seed's defect, so no
/// legacy variant: every behavior has trunk's append path. Before the reopen named
/// expected replicas and the pipeline update dropped the stale ones, both schedulers
/// caught trunk at the first schedule (no stale location; with that invariant off, no
/// data-loss chain, also at the first).
fn appends_leaving_a_datanode_out(cases: &mut Vec<Case>) {
    cases!(
        cases,
        "appends_leave_no_stale_location",
        NamesystemBehavior,
        |behavior, seed| appends_leave_no_stale_location(
            behavior,
            seed,
            AppendClusterShape::default()
        ),
        [(Trunk, Holds)]
    );
}

/// HDFS-17905, a leak: reports queued for a block whose pipeline recovery was abandoned,
/// the file deleted, then a heal phase and the liveness property "the standby's queue
/// empties". Not a race: every schedule that abandons a recovery leaves the entry, so
/// every engine catches the legacy queue at its first schedule.
fn deleted_blocks_heal_phase(cases: &mut Vec<Case>) {
    cases!(
        cases,
        "deleted_blocks_leave_no_queued_reports",
        NamesystemBehavior,
        |behavior, seed| deleted_blocks_leave_no_queued_reports(behavior, seed),
        [(Trunk, Holds), (LegacyKeepRemovedBlockMessages, Caught)]
    );
}

/// The last scenario's `variant` needs one thread to run many steps alone: PCT's strength,
/// a long shot for the random scheduler within the shuttle tests' bound.
fn beyond_random(cases: &mut [Case], variant: NamesystemBehavior) {
    let scenario = cases.last().map(|c| c.scenario);
    for case in cases.iter_mut().rev() {
        if Some(case.scenario) != scenario {
            break;
        }
        if case.variant == variant.name() {
            case.random_reaches = false;
        }
    }
}
