//! The HDDS-16891 conformance suites: the catalogue's pending-allocation scenarios, its
//! loom models and a differential property test, run against any
//! [`PendingContainerTrackerApi`](crate::scm::PendingContainerTrackerApi), every SCM of
//! the cluster being the implementation.
//!
//! **The race.** A container granted and not yet written has no footprint in any storage
//! report; a new leader, a restarted SCM or a re-registered datanode's fresh bucket forgets
//! its slots, and an allocation racing the rebuild or a report grants them again.
//!
//! **What holds an implementation to the fix.** Its SCMs run over the crate's simulated
//! Ratis ring with the slot datanodes, judged by the scenarios' invariants (no create
//! refused, the serving leader reserves every unwritten container) under loom and shuttle,
//! and step by step against `StorageContainerManager` itself.
//!
//! Every scenario of the catalogue's HDDS-16891 list is in these suites: the harness
//! touches an SCM only through the boundary.

use crate::check::catalogue;
use crate::scenarios::Violation;
use crate::scenarios::allocation::{
    AllocationClusterShape, ScmFailover, allocation_waits_for_the_rebuild,
    failover_keeps_slots_of_unwritten_containers, pending_slots_are_the_unwritten_grants,
    random_failovers_never_over_grant, rebuild_sees_allocation_committed_across_reelection,
    reregistration_during_allocation_keeps_the_slot, reregistration_keeps_unwritten_slots,
    space_check_sees_created_container, unreported_closing_container_keeps_its_slot,
};
use crate::scm::{RegistrationChange, ScmBehavior, ScmFactory};

#[cfg(loom)]
use super::report::Checker;
#[cfg(feature = "shuttle")]
use super::report::SuiteConfig;
#[cfg(any(loom, feature = "shuttle"))]
use super::report::{CaseReport, SuiteReport};

pub use crate::scenarios::allocation::SEED_KEY;

/// One scenario of the catalogue's HDDS-16891 list, over any implementation: how shuttle
/// runs it (with the scenario seed), how loom does where it is a loom model, and whether it
/// is sequential.
#[derive(Debug)]
pub struct Scenario<F> {
    /// The catalogue's name for it.
    pub name: &'static str,
    /// The run, as the catalogue runs it.
    pub run: fn(F, u64) -> Result<(), Violation>,
    /// Whether it is a loom model (`loom-tests/rebuild_gate_race.rs`,
    /// `reregistration_race.rs`).
    pub loom: bool,
    /// A fixed sequence of steps on one thread: one execution says all.
    pub sequential: bool,
}

/// The catalogue's pending-allocation scenarios ([`catalogue::allocation`]), with the same
/// shapes, over the SCMs `F` starts: the seed's sequential reproductions, then the races.
pub fn scenarios<F: ScmFactory>() -> Vec<Scenario<F>> {
    let mut scenarios = sequential::<F>();
    scenarios.extend(concurrent::<F>());
    scenarios
}

/// MC8 after a transfer and restarts, re-registrations with changed details, and what the
/// pending slots hold: one thread each.
fn sequential<F: ScmFactory>() -> Vec<Scenario<F>> {
    use RegistrationChange::{Address, Ports, Version};
    use ScmFailover::{RestartAllScms, RestartSingleScm, Transfer};
    let scenario = |name, run| Scenario {
        name,
        run,
        loom: false,
        sequential: true,
    };
    vec![
        scenario("transfer_keeps_unwritten_slots", |f, _| {
            failover_keeps_slots_of_unwritten_containers(f, Transfer)
        }),
        scenario("single_scm_restart_keeps_unwritten_slots", |f, _| {
            failover_keeps_slots_of_unwritten_containers(f, RestartSingleScm)
        }),
        scenario("all_scms_restart_keeps_unwritten_slots", |f, _| {
            failover_keeps_slots_of_unwritten_containers(f, RestartAllScms)
        }),
        scenario("address_change_keeps_unwritten_slots", |f, _| {
            reregistration_keeps_unwritten_slots(f, Address)
        }),
        scenario("version_change_keeps_unwritten_slots", |f, _| {
            reregistration_keeps_unwritten_slots(f, Version)
        }),
        scenario("port_change_keeps_unwritten_slots", |f, _| {
            reregistration_keeps_unwritten_slots(f, Ports)
        }),
        scenario("unreported_closing_container_keeps_its_slot", |f, _| {
            unreported_closing_container_keeps_its_slot(f)
        }),
        scenario("pending_slots_are_the_unwritten_grants", |f, _| {
            pending_slots_are_the_unwritten_grants(f)
        }),
    ]
}

/// The four loom races and the random cluster.
fn concurrent<F: ScmFactory>() -> Vec<Scenario<F>> {
    let scenario = |name, run, loom| Scenario {
        name,
        run,
        loom,
        sequential: false,
    };
    vec![
        scenario(
            "allocation_waits_for_the_rebuild",
            |f, _| allocation_waits_for_the_rebuild(f),
            true,
        ),
        scenario(
            "rebuild_sees_allocation_committed_across_reelection",
            |f, _| rebuild_sees_allocation_committed_across_reelection(f),
            true,
        ),
        scenario(
            "space_check_sees_created_container",
            |f, _| space_check_sees_created_container(f),
            true,
        ),
        scenario(
            "reregistration_during_allocation_keeps_the_slot",
            |f, _| reregistration_during_allocation_keeps_the_slot(f),
            true,
        ),
        scenario(
            "random_failovers_never_over_grant",
            |f, seed| random_failovers_never_over_grant(f, seed, AllocationClusterShape::default()),
            false,
        ),
    ]
}

/// Whether `reference` must hold `scenario` in the catalogue: an implementation held to
/// `reference` is held to exactly those (held to `SeedPatch`, the races beyond the seed are
/// not claimed; held to `Hardened`, all are).
pub fn claimed(scenario: &str, reference: ScmBehavior) -> bool {
    super::catalogue_holds(&catalogue::allocation(), scenario, reference.name())
}

#[cfg(any(loom, feature = "shuttle"))]
fn report<F: ScmFactory>(reference: ScmBehavior, cases: Vec<CaseReport>) -> SuiteReport {
    SuiteReport {
        seed_key: SEED_KEY,
        implementation: std::any::type_name::<F::Scm>().to_owned(),
        reference: reference.name(),
        cases,
    }
}

/// The loom models of HDDS-16891 (the gate race, the re-election race, the report-order
/// race, a re-registration racing an allocation) run exhaustively against the SCMs
/// `factory` starts; those `reference` itself breaks are not claimed. In the loom build
/// (`RUSTFLAGS="--cfg loom"`).
#[cfg(loom)]
pub fn loom_suite<F: ScmFactory>(factory: F, reference: ScmBehavior) -> SuiteReport {
    let mut cases = Vec::new();
    for scenario in scenarios::<F>().into_iter().filter(|s| s.loom) {
        if !claimed(scenario.name, reference) {
            cases.push(CaseReport::not_claimed(scenario.name, Checker::Loom));
            continue;
        }
        let run = scenario.run;
        cases.push(CaseReport::explored_by_loom(scenario.name, move || {
            run(factory, 0)
        }));
    }
    report::<F>(reference, cases)
}

/// Every pending-allocation scenario of the catalogue against the SCMs `factory` starts:
/// the concurrent ones under shuttle's random and PCT schedulers (`config.iterations`
/// schedules each, stopping at a violation), the seed's sequential reproductions once;
/// those `reference` itself breaks are not claimed. In the shuttle build
/// (`--features shuttle`).
#[cfg(feature = "shuttle")]
pub fn shuttle_suite<F: ScmFactory>(
    factory: F,
    reference: ScmBehavior,
    config: &SuiteConfig,
) -> SuiteReport {
    let mut cases = Vec::new();
    for scenario in scenarios::<F>() {
        let run = scenario.run;
        cases.extend(super::shuttle_run::cases(
            scenario.name,
            scenario.sequential,
            claimed(scenario.name, reference),
            config,
            move |seed| run(factory, seed),
        ));
    }
    report::<F>(reference, cases)
}

#[cfg(not(any(loom, feature = "shuttle")))]
mod differential;
#[cfg(not(any(loom, feature = "shuttle")))]
pub use differential::differential;
