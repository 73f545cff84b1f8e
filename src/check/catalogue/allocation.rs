//! The catalogue of the SCM pending container allocations (HDDS-16891): the seed's MC8
//! after a transfer and restarts, re-registrations with changed details, the races around
//! the rebuild and the space check, what the pending slots hold, and the random cluster. Every scenario lists every
//! `ScmBehavior`: `Hardened` holds everywhere; `SeedPatch` is caught by each race this crate
//! found beyond the seed (report order, re-election, re-registration, a closed container
//! not yet reported).

use crate::check::catalogue::case::Case;
use crate::scenarios::allocation::{
    AllocationClusterShape, ScmFailover, allocation_waits_for_the_rebuild,
    failover_keeps_slots_of_unwritten_containers, pending_slots_are_the_unwritten_grants,
    random_failovers_never_over_grant, rebuild_sees_allocation_committed_across_reelection,
    reregistration_during_allocation_keeps_the_slot, reregistration_keeps_unwritten_slots,
    space_check_sees_created_container, unreported_closing_container_keeps_its_slot,
};
use crate::scm::{RegistrationChange, ScmBehavior};

/// The SCM pending-allocation scenarios (HDDS-16891).
pub fn allocation() -> Vec<Case> {
    let mut cases = Vec::new();
    failover_reproductions(&mut cases);
    reregistrations(&mut cases);
    slot_accounting(&mut cases);
    rebuild_races(&mut cases);
    space_check_races(&mut cases);
    random_cluster(&mut cases);
    cases
}

/// The seed's MC8: a leader transfer, one SCM's restart, every SCM's restart. They spawn
/// no thread: one execution says all, and PCT does not apply. Without a second thread the
/// ungated rebuild is done before the first allocation, so only the missing rebuild fails.
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
        [
            (Hardened, Holds),
            (SeedPatch, Holds),
            (LegacyNoRebuild, Caught),
            (LegacyRebuildWithoutGate, Holds)
        ]
    );
    cases!(
        cases,
        "single_scm_restart_keeps_unwritten_slots",
        ScmBehavior,
        |behavior, _seed| failover_keeps_slots_of_unwritten_containers(
            behavior,
            ScmFailover::RestartSingleScm
        ),
        [
            (Hardened, Holds),
            (SeedPatch, Holds),
            (LegacyNoRebuild, Caught),
            (LegacyRebuildWithoutGate, Holds)
        ]
    );
    cases!(
        cases,
        "all_scms_restart_keeps_unwritten_slots",
        ScmBehavior,
        |behavior, _seed| failover_keeps_slots_of_unwritten_containers(
            behavior,
            ScmFailover::RestartAllScms
        ),
        [
            (Hardened, Holds),
            (SeedPatch, Holds),
            (LegacyNoRebuild, Caught),
            (LegacyRebuildWithoutGate, Holds)
        ]
    );
    mark_sequential(&mut cases[first..]);
}

/// What the serving leader's pending slots hold: a container a former leader closed
/// before its replicas' reports (the hardened rebuild reserves it, the seed's skips a
/// non-OPEN container), and, on a second schedule, a partial reservation undone, reported
/// replicas not reserved again by the rebuild, and a grant never written dropped two roll
/// intervals later. Sequential.
fn slot_accounting(cases: &mut Vec<Case>) {
    let first = cases.len();
    cases!(
        cases,
        "unreported_closing_container_keeps_its_slot",
        ScmBehavior,
        |behavior, _seed| unreported_closing_container_keeps_its_slot(behavior),
        [
            (Hardened, Holds),
            (SeedPatch, Caught),
            (LegacyNoRebuild, Caught),
            (LegacyRebuildWithoutGate, Caught)
        ]
    );
    cases!(
        cases,
        "pending_slots_are_the_unwritten_grants",
        ScmBehavior,
        |behavior, _seed| pending_slots_are_the_unwritten_grants(behavior),
        [
            (Hardened, Holds),
            (SeedPatch, Holds),
            (LegacyNoRebuild, Caught),
            (LegacyRebuildWithoutGate, Holds)
        ]
    );
    mark_sequential(&mut cases[first..]);
}

/// Beyond the seed: every datanode of the pipeline registers again with a changed address,
/// version or port set while C1 is granted and unwritten. Ozone's fresh `DatanodeInfo`
/// forgets C1's slots in every behavior but `Hardened`. Sequential.
fn reregistrations(cases: &mut Vec<Case>) {
    let first = cases.len();
    cases!(
        cases,
        "address_change_keeps_unwritten_slots",
        ScmBehavior,
        |behavior, _seed| reregistration_keeps_unwritten_slots(
            behavior,
            RegistrationChange::Address
        ),
        [
            (Hardened, Holds),
            (SeedPatch, Caught),
            (LegacyNoRebuild, Caught),
            (LegacyRebuildWithoutGate, Caught)
        ]
    );
    cases!(
        cases,
        "version_change_keeps_unwritten_slots",
        ScmBehavior,
        |behavior, _seed| reregistration_keeps_unwritten_slots(
            behavior,
            RegistrationChange::Version
        ),
        [
            (Hardened, Holds),
            (SeedPatch, Caught),
            (LegacyNoRebuild, Caught),
            (LegacyRebuildWithoutGate, Caught)
        ]
    );
    cases!(
        cases,
        "port_change_keeps_unwritten_slots",
        ScmBehavior,
        |behavior, _seed| reregistration_keeps_unwritten_slots(behavior, RegistrationChange::Ports),
        [
            (Hardened, Holds),
            (SeedPatch, Caught),
            (LegacyNoRebuild, Caught),
            (LegacyRebuildWithoutGate, Caught)
        ]
    );
    mark_sequential(&mut cases[first..]);
}

fn mark_sequential(cases: &mut [Case]) {
    for case in cases {
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
            (Hardened, Holds),
            (SeedPatch, Holds),
            (LegacyRebuildWithoutGate, Caught),
            (LegacyNoRebuild, Caught)
        ]
    );
    // Beyond the seed (the re-election race). Without a rebuild nothing drops the old
    // term's reservation, so the missing rebuild holds here.
    cases!(
        cases,
        "rebuild_sees_allocation_committed_across_reelection",
        ScmBehavior,
        |behavior, _seed| rebuild_sees_allocation_committed_across_reelection(behavior),
        [
            (Hardened, Holds),
            (SeedPatch, Caught),
            (LegacyNoRebuild, Holds),
            (LegacyRebuildWithoutGate, Caught)
        ]
    );
}

/// Races of the space check against reports and registrations (beyond the seed), small
/// enough for loom too: every behavior but `Hardened` reads the reports before the bucket
/// and replaces the bucket of a re-registered datanode.
fn space_check_races(cases: &mut Vec<Case>) {
    cases!(
        cases,
        "space_check_sees_created_container",
        ScmBehavior,
        |behavior, _seed| space_check_sees_created_container(behavior),
        [
            (Hardened, Holds),
            (SeedPatch, Caught),
            (LegacyNoRebuild, Caught),
            (LegacyRebuildWithoutGate, Caught)
        ]
    );
    cases!(
        cases,
        "reregistration_during_allocation_keeps_the_slot",
        ScmBehavior,
        |behavior, _seed| reregistration_during_allocation_keeps_the_slot(behavior),
        [
            (Hardened, Holds),
            (SeedPatch, Caught),
            (LegacyNoRebuild, Caught),
            (LegacyRebuildWithoutGate, Caught)
        ]
    );
}

/// SCMs failing over at random while datanodes create the containers they were granted
/// and register again with changed details.
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
            (Hardened, Holds),
            (SeedPatch, Caught),
            (LegacyNoRebuild, Caught),
            (LegacyRebuildWithoutGate, Caught)
        ]
    );
}
