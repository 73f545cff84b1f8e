//! The HDDS-16811 conformance suites: the catalogue's container scenarios whose parties
//! are the replica's own entry points, its loom models and a differential property test,
//! run against any [`KeyValueContainerApi`] (every replica of the scenarios' datanodes
//! being the implementation).
//!
//! **The race.** A replica's block deleting service deletes a block while a
//! reconciliation copies the same block from a peer: deleted before its repair, the block
//! is copied back; deleted during it, its metadata is committed without its file.
//!
//! **What holds an implementation to the fix.** Its replicas run the seed's reproductions
//! (MC2, MC3 and its MISSING_CHUNK variant), a reconciliation racing a deleting pass, a
//! scan racing a deleting pass (HDDS-7300), two reconciliations of one container at once and three replicas under random deletions,
//! repairs and scans, judged by the scenarios' invariants (no deleted block live, no
//! metadata without its file, no live block lost, every deletion in the tree, replicas
//! converge, none UNHEALTHY) under loom and shuttle, and step by step against the crate's
//! replica running the reference behavior.
//!
//! Three scenarios of the catalogue are not in these suites ([`NOT_IN_SUITE`]): two
//! reconciliations around the replica's own guard (`reconcileContainerInternal` called
//! directly, which no entry point of the boundary does), the data checksum's three copies
//! under concurrent tree writes (HDDS-16808: the in-memory and persisted copies are this
//! crate's layout), and a deleting pass whose tree write fails (a fault injected in this
//! crate's store).
//!
//! [`KeyValueContainerApi`]: crate::datanode::container::KeyValueContainerApi

use crate::check::catalogue;
use crate::datanode::container::{ContainerBehavior, ReplicaFactory};
use crate::scenarios::Violation;
use crate::scenarios::container::{
    ContainerClusterShape, block_deleted_during_reconciliation_is_not_committed_on,
    concurrent_reconciliations_on, delete_during_repair_on,
    deleted_block_is_not_restored_by_reconciliation_on,
    deletes_and_repairs_keep_replicas_consistent_on, scan_during_block_deletion_on,
};

#[cfg(loom)]
use super::report::Checker;
#[cfg(feature = "shuttle")]
use super::report::SuiteConfig;
#[cfg(any(loom, feature = "shuttle"))]
use super::report::{CaseReport, SuiteReport};

pub use crate::scenarios::container::SEED_KEY;

/// One scenario of the catalogue's HDDS-16811 list, over any implementation: how shuttle
/// runs it (with the scenario seed), how loom does where it is a loom model, and whether it
/// is sequential.
#[derive(Debug)]
pub struct Scenario<F> {
    /// The catalogue's name for it.
    pub name: &'static str,
    /// The run, as the catalogue runs it.
    pub run: fn(F, u64) -> Result<(), Violation>,
    /// Whether it is a loom model (`loom-tests/delete_during_repair.rs`).
    pub loom: bool,
    /// A fixed sequence of steps on one thread: one execution says all.
    pub sequential: bool,
}

/// The catalogue's container scenarios in the suites, over the replicas `F` starts: the
/// seed's sequential reproductions, then the races.
pub fn scenarios<F: ReplicaFactory>() -> Vec<Scenario<F>> {
    let scenario = |name, run, loom, sequential| Scenario {
        name,
        run,
        loom,
        sequential,
    };
    vec![
        scenario(
            "deleted_block_not_restored",
            |f: F, _| deleted_block_is_not_restored_by_reconciliation_on(&f),
            false,
            true,
        ),
        scenario(
            "block_deleted_during_reconciliation",
            |f, _| block_deleted_during_reconciliation_is_not_committed_on(&f, false),
            false,
            true,
        ),
        scenario(
            "block_deleted_during_partial_reconciliation",
            |f, _| block_deleted_during_reconciliation_is_not_committed_on(&f, true),
            false,
            true,
        ),
        scenario(
            "delete_during_repair",
            |f, _| delete_during_repair_on(&f, 0),
            true,
            false,
        ),
        scenario(
            "delete_during_partial_repair",
            |f, _| delete_during_repair_on(&f, 1),
            true,
            false,
        ),
        scenario(
            "concurrent_reconciliations",
            |f, _| concurrent_reconciliations_on(&f),
            true,
            false,
        ),
        scenario(
            "scan_during_block_deletion",
            |f, _| scan_during_block_deletion_on(&f),
            true,
            false,
        ),
        scenario(
            "deletes_and_repairs_keep_replicas_consistent",
            |f, seed| {
                deletes_and_repairs_keep_replicas_consistent_on(
                    &f,
                    seed,
                    ContainerClusterShape::default(),
                )
            },
            false,
            false,
        ),
    ]
}

/// The catalogue's container scenarios left out of these suites (see the module docs).
pub const NOT_IN_SUITE: [&str; 3] = [
    "concurrent_reconciliations_unguarded",
    "data_checksum_follows_concurrent_tree_writes",
    "failed_deletion_tree_write_never_orphans_a_repair",
];

/// Whether `reference` must hold `scenario` in the catalogue: an implementation held to
/// `reference` is held to exactly those (`Legacy`, which holds none, claims nothing).
pub fn claimed(scenario: &str, reference: ContainerBehavior) -> bool {
    super::catalogue_holds(&catalogue::container(), scenario, reference.name())
}

#[cfg(any(loom, feature = "shuttle"))]
fn report<F: ReplicaFactory>(reference: ContainerBehavior, cases: Vec<CaseReport>) -> SuiteReport {
    SuiteReport {
        seed_key: SEED_KEY,
        implementation: std::any::type_name::<F::Replica>().to_owned(),
        reference: reference.name(),
        cases,
    }
}

/// The loom models of HDDS-16811 (a reconciliation racing a deleting pass, with the
/// block absent or partly present, and two reconciliations of one container) run
/// exhaustively against the replicas `factory` starts; those `reference` itself breaks are
/// not claimed. Two spawned threads each. In the loom build (`RUSTFLAGS="--cfg loom"`).
#[cfg(loom)]
pub fn loom_suite<F>(factory: F, reference: ContainerBehavior) -> SuiteReport
where
    F: ReplicaFactory + Copy + Send + Sync + 'static,
{
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

/// Every container scenario of the suites against the replicas `factory` starts: the
/// concurrent ones under shuttle's random and PCT schedulers (`config.iterations`
/// schedules each, stopping at a violation), the seed's sequential reproductions once;
/// those `reference` itself breaks are not claimed. In the shuttle build
/// (`--features shuttle`).
#[cfg(feature = "shuttle")]
pub fn shuttle_suite<F>(
    factory: F,
    reference: ContainerBehavior,
    config: &SuiteConfig,
) -> SuiteReport
where
    F: ReplicaFactory + Copy + Send + Sync + 'static,
{
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
