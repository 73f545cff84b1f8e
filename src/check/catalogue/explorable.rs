//! The cluster cases the explorer runs (`check::explore`): every `MiniOzoneCluster` case
//! of the catalogue, each variant with the expectation the catalogue gives it, built in
//! the parts an explorer needs (`scenarios::cluster::explorable`). The random cluster's
//! choices are drawn from scenario seed 0.
//!
//! `stale_force_delete_during_repair` runs a single datanode's components by hand, not a
//! cluster; its steps are loom's to explore (`loom-tests/cross_seed_race.rs`, exhaustive).

use crate::check::explore::ExploreCase;
use crate::datanode::container::ContainerBehavior;
use crate::datanode::state_context::StateContextBehavior;
use crate::scenarios::cluster::{
    DeletingContainerBehavior, FailoverDeleteBehavior, OzoneBehavior,
    deletions_across_transfer_restart_and_repair_explorable,
    deposed_leaders_force_delete_through_the_cluster_explorable,
    emptied_container_deleted_despite_a_restored_block_explorable,
    key_deleted_from_a_quasi_closed_container_during_reconcile_explorable,
    keys_deleted_while_leadership_moves_explorable, keys_written_while_leadership_moves_explorable,
    over_replicated_container_across_a_leader_change_explorable,
    over_replicated_container_while_the_deposed_leader_processes_explorable,
    random_cluster_with_faults_explorable,
};
use crate::scm::ScmBehavior;

/// Pushes one [`ExploreCase`] per variant of `$kind` listed, each built by `$build` with
/// `$behavior` bound to the variant.
macro_rules! explore_cases {
    ($into:ident, $scenario:literal, $kind:ident, |$behavior:ident| $build:expr,
     [$(($variant:ident, $expect:ident)),+ $(,)?]) => {
        $(
            $into.push(ExploreCase::new(
                $scenario,
                $kind::$variant.name(),
                super::case::Expectation::$expect,
                || {
                    let $behavior = $kind::$variant;
                    $build
                },
            ));
        )+
    };
}

/// Every cluster case the explorer runs.
pub fn explorable() -> Vec<ExploreCase> {
    let mut cases = Vec::new();
    deletions_and_failovers(&mut cases);
    repairs_and_allocation(&mut cases);
    for case in &mut cases {
        case.reaches = !DEEPER_THAN_A_SHORT_SEARCH.contains(&(case.scenario, case.variant));
    }
    cases
}

/// The caught cases whose shortest counterexample lies deeper than a search of a few
/// seconds goes (measured with `soak explore --time 60` on two cores; shuttle catches
/// each of them):
/// - the lagging replica's deletion before the patch needs its delete transaction taken,
///   stored and run, the reconcile commands sent, the restart and the transfer, then the
///   reconcile taken and stepped through the copy of the block: caught at depth 9, after
///   7.6 s of two workers (21 s of one);
/// - the random cluster's patches alone need a grant, a close and an election in one
///   order among its client's and faults' steps (held to depth 11 in 206 s); its legacy
///   code is caught at depth 10, after 15 s of two workers.
const DEEPER_THAN_A_SHORT_SEARCH: [(&str, &str); 3] = [
    ("deletions_across_transfer_restart_and_repair", "Legacy"),
    ("random_cluster_with_faults", "SeedPatch"),
    ("random_cluster_with_faults", "Legacy"),
];

fn deletions_and_failovers(cases: &mut Vec<ExploreCase>) {
    explore_cases!(
        cases,
        "keys_deleted_while_leadership_moves",
        StateContextBehavior,
        |behavior| keys_deleted_while_leadership_moves_explorable(behavior),
        [(SeedPatch, Holds), (Hardened, Holds)]
    );
    explore_cases!(
        cases,
        "deposed_leaders_force_delete_through_the_cluster",
        StateContextBehavior,
        |behavior| deposed_leaders_force_delete_through_the_cluster_explorable(behavior),
        [
            (SeedPatch, Holds),
            (Hardened, Holds),
            (Legacy, Caught),
            (LegacyIgnoreHeartbeatTermBeforeInit, Caught),
            (LegacyNoTermFence, Caught),
            (LegacyTermFromCommandsOnly, Caught),
        ]
    );
    explore_cases!(
        cases,
        "over_replicated_container_across_a_leader_change",
        FailoverDeleteBehavior,
        |behavior| over_replicated_container_across_a_leader_change_explorable(behavior),
        [
            (SeedPatch, Holds),
            (Hardened, Holds),
            (LegacyTermFence, Holds),
            (LegacyExcessOrder, Holds),
            (Legacy, Caught),
        ]
    );
    explore_cases!(
        cases,
        "over_replicated_container_while_the_deposed_leader_processes",
        FailoverDeleteBehavior,
        |behavior| over_replicated_container_while_the_deposed_leader_processes_explorable(
            behavior
        ),
        [
            (SeedPatch, Holds),
            (Hardened, Holds),
            (LegacyTermFence, Holds),
            (LegacyExcessOrder, Caught),
            (Legacy, Caught),
        ]
    );
}

fn repairs_and_allocation(cases: &mut Vec<ExploreCase>) {
    explore_cases!(
        cases,
        "keys_written_while_leadership_moves",
        ScmBehavior,
        |behavior| keys_written_while_leadership_moves_explorable(behavior),
        [
            (Hardened, Holds),
            (SeedPatch, Holds),
            (LegacyNoRebuild, Caught),
            (LegacyRebuildWithoutGate, Caught),
        ]
    );
    explore_cases!(
        cases,
        "deletions_across_transfer_restart_and_repair",
        ContainerBehavior,
        |behavior| deletions_across_transfer_restart_and_repair_explorable(behavior),
        [(SeedPatch, Holds), (Hardened, Holds), (Legacy, Caught)]
    );
    explore_cases!(
        cases,
        "key_deleted_from_a_quasi_closed_container_during_reconcile",
        ContainerBehavior,
        |behavior| key_deleted_from_a_quasi_closed_container_during_reconcile_explorable(behavior),
        [(SeedPatch, Holds), (Hardened, Holds), (Legacy, Caught)]
    );
    explore_cases!(
        cases,
        "emptied_container_deleted_despite_a_restored_block",
        DeletingContainerBehavior,
        |behavior| emptied_container_deleted_despite_a_restored_block_explorable(behavior),
        [
            (SeedPatch, Holds),
            (Hardened, Holds),
            (LegacyReplica, Holds),
            (LegacyClosedOnlyRule, Holds),
            (Legacy, Caught),
        ]
    );
    explore_cases!(
        cases,
        "random_cluster_with_faults",
        OzoneBehavior,
        |behavior| random_cluster_with_faults_explorable(behavior, 0),
        [(Hardened, Holds), (SeedPatch, Caught), (Legacy, Caught)]
    );
}
