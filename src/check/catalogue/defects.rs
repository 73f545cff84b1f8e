//! The defect each caught case of the catalogue shows: an upstream JIRA (the code before
//! its fix, selected as a `Legacy…` variant or a switch of the configuration) or a race
//! this crate's checkers found beyond a seed's patch (closed by a `Hardened` switch). One
//! table, so the scoreboard, the soak and a reader name a catch the same way.

use super::allocation::allocation as allocation_cases;
use super::case::{Case, Expectation};
use super::container::container as container_cases;
use super::standby::standby as standby_cases;
use super::term_fencing::term_fencing as term_fencing_cases;

/// A defect as the scoreboard names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Defect {
    /// The JIRA keys of the fixes missing in the code the case runs (`+` between them when
    /// the defect needs several missing), or `beyond <seed> (<switch>)` for a race this
    /// crate found in a seed's patch, with the `Hardened` switch that closes it.
    pub key: &'static str,
    /// What goes wrong, in a line.
    pub what: &'static str,
}

const fn defect(key: &'static str, what: &'static str) -> Option<Defect> {
    Some(Defect { key, what })
}

/// The defect `case` shows, `None` for a case that must hold.
pub fn defect_of(case: &Case) -> Option<Defect> {
    if case.expectation != Expectation::Caught {
        return None;
    }
    let scenario = case.scenario;
    let in_list = |list: fn() -> Vec<Case>| list().iter().any(|c| c.scenario == scenario);
    if in_list(term_fencing_cases) {
        term_fencing(case.variant)
    } else if in_list(allocation_cases) {
        allocation(scenario, case.variant)
    } else if in_list(container_cases) {
        container(scenario, case.variant)
    } else if in_list(standby_cases) {
        standby(case.variant)
    } else {
        cluster(scenario, case.variant)
    }
}

fn term_fencing(variant: &str) -> Option<Defect> {
    match variant {
        "Legacy" => defect(
            "HDDS-17268",
            "the heartbeat term is ignored before init and raised unlocked after: a deposed \
             leader's command runs",
        ),
        "LegacyIgnoreHeartbeatTermBeforeInit" => defect(
            "HDDS-17268 (MC4)",
            "a heartbeat term received before init is discarded: init takes a deposed \
             leader's term",
        ),
        "LegacyUnlockedTermUpdate" => defect(
            "HDDS-17268 (MC5)",
            "two heartbeat threads raise the term with an unlocked check-then-set: the \
             higher term is lost",
        ),
        "LegacyNoTermFence" => defect(
            "HDDS-3988",
            "no command is fenced by the SCM term: a deposed leader's command runs after the \
             new leader's term was heard",
        ),
        "LegacyTermFromCommandsOnly" => defect(
            "HDDS-7621",
            "a heartbeat response's term is not read: while the new leader sends no command, \
             a deposed leader's command runs",
        ),
        "LegacyTermOnPoll" => defect(
            "HDDS-7619",
            "a queued command does not raise the term: a deposed leader's command queued \
             ahead of the new leader's runs at the old term",
        ),
        "LegacyNoExecutorTermCheck" => defect(
            "HDDS-7620",
            "the delete-container handler and the replication supervisor do not read the \
             term again: a command dispatched before a new leader's term arrived runs after it",
        ),
        "SeedPatch" => defect(
            "beyond HDDS-17268 (await a leader term)",
            "the patch's residual window: init before the new leader's first term lets a \
             deposed leader's command run (closed by Hardened's wait for a leader term)",
        ),
        _ => None,
    }
}

fn allocation(scenario: &str, variant: &str) -> Option<Defect> {
    match variant {
        // Every rebuild short of the hardened one skips the closed container.
        "SeedPatch" | "LegacyRebuildWithoutGate"
            if scenario == "unreported_closing_container_keeps_its_slot" =>
        {
            defect(
                "beyond HDDS-16891 (rebuild_reserves_unreported_replicas)",
                "a container closed before its replicas reached the new leader's reports \
                 keeps no slot (closed by rebuild_reserves_unreported_replicas)",
            )
        }
        "LegacyNoRebuild" => defect(
            "HDDS-16891",
            "a new leader or a restarted SCM has no pending allocations and grants the \
             unwritten slots again",
        ),
        "LegacyRebuildWithoutGate" => defect(
            "HDDS-16891 (gate)",
            "the rebuild of the pending allocations races the first allocation of the new \
             term",
        ),
        "SeedPatch" => match scenario {
            "rebuild_sees_allocation_committed_across_reelection" => defect(
                "beyond HDDS-16891 (apply_log_before_rebuild)",
                "an allocation committed across a re-election is missed by the rebuild \
                 (closed by ScmHardening::apply_log_before_rebuild)",
            ),
            "space_check_sees_created_container" => defect(
                "beyond HDDS-16891 (read_reports_under_bucket_lock)",
                "the space check reads the reports before the bucket lock and counts a \
                 created container nowhere (closed by read_reports_under_bucket_lock)",
            ),
            "random_failovers_never_over_grant" => defect(
                "beyond HDDS-16891 (ScmHardening)",
                "the races ScmHardening closes, met in random failovers",
            ),
            _ => defect(
                "beyond HDDS-16891 (keep_space_on_reregistration)",
                "a datanode registering again gets a fresh, empty bucket (closed by \
                 ScmHardening::keep_space_on_reregistration)",
            ),
        },
        _ => None,
    }
}

fn container(scenario: &str, variant: &str) -> Option<Defect> {
    match (variant, scenario) {
        ("Legacy", _) => defect(
            "HDDS-16811",
            "a block deleted before or during its repair is restored, or its metadata \
             committed without its file",
        ),
        ("SeedPatch", "concurrent_reconciliations_unguarded") => defect(
            "beyond HDDS-16811 (fail_incomplete_blocks)",
            "a failed repair's partial commit lands after another's whole one and loses a \
             chunk (closed by ContainerConfig::fail_incomplete_blocks)",
        ),
        ("SeedPatch", "data_checksum_follows_concurrent_tree_writes") => defect(
            "beyond HDDS-16808 (refresh_checksum_in_tree_write)",
            "the data checksum refreshed outside the tree write goes stale (closed by \
             refresh_checksum_in_tree_write)",
        ),
        ("SeedPatch", "failed_deletion_tree_write_never_orphans_a_repair") => defect(
            "beyond HDDS-16811 (commit_requires_block_file)",
            "a repair commits a block whose file a failed deleting round unlinked (closed \
             by commit_requires_block_file)",
        ),
        ("LegacyRecheckWithoutLock", _) => defect(
            "HDDS-7300",
            "the scanner looks a block whose file the deleting round unlinked up again with \
             no lock, still finds its metadata, and marks the replica UNHEALTHY",
        ),
        ("HardenedCleanupUnderReadLock", _) => defect(
            "beyond HDDS-16811 (cleanup_under_write_lock)",
            "a failed repair's cleanup under the read lock unlinks the block another \
             reconciliation commits (closed by cleanup_under_write_lock)",
        ),
        _ => None,
    }
}

fn standby(variant: &str) -> Option<Defect> {
    match variant {
        "LegacyWholeMessageQueue" => defect(
            "HDFS-2742",
            "the standby judges a queued RBW report after the block completed: a healthy \
             replica marked corrupt, every replica lost",
        ),
        "LegacyEarlyDrain" => defect(
            "HDFS-2742 (first patch)",
            "the queue drained before the block is complete: replicas credited early, \
             safe mode miscounted",
        ),
        "LegacyHaStateCheck" => defect(
            "HDFS-3605",
            "queued reports judged against the HA state, not the catch-up: a replica \
             flagged during failover",
        ),
        "LegacyNoStaleEntryPurge" => defect(
            "HDFS-17453/HDFS-17477",
            "a superseded queued report is not purged and is judged later",
        ),
        "LegacyNoImpendingGenstamp" => defect(
            "HDFS-14941",
            "a report of a block the standby will learn in the next batch is not queued",
        ),
        "LegacyKeepRemovedBlockMessages" => defect(
            "HDFS-17905",
            "a deleted block's queued reports are never drained: the standby's queue leaks",
        ),
        "LegacyQueueStoredBlock" => defect(
            "HDFS-15422",
            "a stale report postponed on the standby is queued with the stored block's stamp: \
             failover takes the stale replica for a current one",
        ),
        "LegacyKeepDepartedDatanodeMessages" => defect(
            "HDFS-6289",
            "a removed datanode's queued reports stay: failover judges reports of a \
             datanode it no longer knows",
        ),
        _ => None,
    }
}

fn cluster(scenario: &str, variant: &str) -> Option<Defect> {
    match (scenario, variant) {
        ("over_replicated_container_across_a_leader_change", "Legacy") => defect(
            "HDDS-4589+HDDS-17268",
            "two leaders delete different excess replicas (HDDS-16449): the container is \
             left below its factor",
        ),
        ("over_replicated_container_while_the_deposed_leader_processes", "Legacy") => defect(
            "HDDS-4589+HDDS-17268",
            "a deposed leader's processor and the new leader's delete different excess \
             replicas (HDDS-16449): the container is left below its factor",
        ),
        ("over_replicated_container_while_the_deposed_leader_processes", "LegacyExcessOrder") => {
            defect(
                "HDDS-4589",
                "a deposed leader's delete runs before its datanode hears the new term, and \
                 the new leader picks another replica: below its factor despite the term \
                 fence",
            )
        }
        ("emptied_container_deleted_despite_a_restored_block", "Legacy") => defect(
            "HDDS-14416+HDDS-16811",
            "a restored block keeps its DELETING container for ever",
        ),
        ("random_cluster_with_faults", "SeedPatch") => defect(
            "beyond HDDS-16891 (rebuild_reserves_unreported_replicas)",
            "a container closed before its replicas reached the new leader's reports keeps \
             no slot (closed by rebuild_reserves_unreported_replicas)",
        ),
        ("random_cluster_with_faults", "Legacy") => defect(
            "HDDS-16891+HDDS-17268+HDDS-16811",
            "every seed's defect at once",
        ),
        ("replica_copied_while_keys_are_granted", "LegacyUnaccounted") => defect(
            "HDDS-14924",
            "a replicate records no pending allocation on its target: the target's room is \
             granted again before the copy lands",
        ),
        ("replica_copied_while_leadership_moves", "HardenedWithoutTargetRebuild") => defect(
            "beyond HDDS-16891 (rebuild_reserves_replication_targets)",
            "a new leader forgets the old leader's replication target and grants its room \
             again while the copy lands (closed by rebuild_reserves_replication_targets)",
        ),
        ("replica_copied_across_a_reelection", "LegacyPendingOpsKept") => defect(
            "HDDS-8473",
            "a re-elected leader keeps the pending ops of its earlier term and waits for a \
             copy its target dropped as stale: the container stays under-replicated",
        ),
        ("keys_written_while_leadership_moves", other) => allocation(scenario, other),
        ("deletions_across_transfer_restart_and_repair", other)
        | ("key_deleted_from_a_quasi_closed_container_during_reconcile", other) => {
            container(scenario, other)
        }
        (_, other) => term_fencing(other),
    }
}
