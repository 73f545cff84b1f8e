//! The catalogue of the SCM pending container allocations (HDDS-16891).

use crate::check::catalogue::case::Case;
use crate::scenarios::allocation::{
    AllocationClusterShape, ScmFailover, allocation_waits_for_the_rebuild,
    failover_keeps_slots_of_unwritten_containers, random_failovers_never_over_grant,
    rebuild_sees_allocation_committed_across_reelection, space_check_sees_created_container,
};
use crate::scm::ScmBehavior;

/// The SCM pending-allocation scenarios (HDDS-16891).
pub fn allocation() -> Vec<Case> {
    let mut cases = Vec::new();
    failover_reproductions(&mut cases);
    rebuild_races(&mut cases);
    random_cluster(&mut cases);
    cases
}

/// The seed's MC8: a leader transfer, one SCM's restart, every SCM's restart. They spawn
/// no thread: one execution says all, and PCT does not apply.
fn failover_reproductions(cases: &mut Vec<Case>) {
    let first = cases.len();
    cases!(
        cases,
        "transfer_keeps_unwritten_slots",
        ScmBehavior,
        |behavior, _seed| failover_keeps_slots_of_unwritten_containers(
            behavior,
            ScmFailover::Transfer
        ),
        [(Fixed, Holds), (LegacyNoRebuild, Caught)]
    );
    cases!(
        cases,
        "single_scm_restart_keeps_unwritten_slots",
        ScmBehavior,
        |behavior, _seed| failover_keeps_slots_of_unwritten_containers(
            behavior,
            ScmFailover::RestartSingleScm
        ),
        [(Fixed, Holds), (LegacyNoRebuild, Caught)]
    );
    cases!(
        cases,
        "all_scms_restart_keeps_unwritten_slots",
        ScmBehavior,
        |behavior, _seed| failover_keeps_slots_of_unwritten_containers(
            behavior,
            ScmFailover::RestartAllScms
        ),
        [(Fixed, Holds), (LegacyNoRebuild, Caught)]
    );
    for case in &mut cases[first..] {
        case.sequential = true;
    }
}

/// The races around the rebuild, each small enough for loom too.
fn rebuild_races(cases: &mut Vec<Case>) {
    cases!(
        cases,
        "allocation_waits_for_the_rebuild",
        ScmBehavior,
        |behavior, _seed| allocation_waits_for_the_rebuild(behavior),
        [
            (Fixed, Holds),
            (LegacyRebuildWithoutGate, Caught),
            (LegacyNoRebuild, Caught)
        ]
    );
    cases!(
        cases,
        "rebuild_sees_allocation_committed_across_reelection",
        ScmBehavior,
        |behavior, _seed| rebuild_sees_allocation_committed_across_reelection(behavior),
        [(Fixed, Holds)]
    );
    cases!(
        cases,
        "space_check_sees_created_container",
        ScmBehavior,
        |behavior, _seed| space_check_sees_created_container(behavior),
        [(Fixed, Holds)]
    );
}

/// SCMs failing over at random while datanodes create the containers they were granted.
fn random_cluster(cases: &mut Vec<Case>) {
    cases!(
        cases,
        "random_failovers_never_over_grant",
        ScmBehavior,
        |behavior, seed| random_failovers_never_over_grant(
            behavior,
            seed,
            AllocationClusterShape::default()
        ),
        [
            (Fixed, Holds),
            (LegacyNoRebuild, Caught),
            (LegacyRebuildWithoutGate, Caught)
        ]
    );
}
