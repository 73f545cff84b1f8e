//! The HDFS-2742 conformance suites: the catalogue's standby scenarios, its loom models
//! and a differential property test, run against any [`NamesystemApi`] in the standby's
//! seat (NameNode 1, which fails over), the crate's own NameNode as the first active.
//!
//! **The race.** A datanode's report reaches the standby before the edits it was produced
//! under; judged after the block's completion, a healthy RBW replica is flagged corrupt,
//! and judged before it without a safe-mode credit, the standby never leaves safe mode.
//!
//! **What holds an implementation to the fix.** It replays the real shared edit log
//! through the crate's tailer and receives the simulated datanodes' reports, judged by the
//! scenarios' invariants under loom and shuttle, and step by step against `Namesystem`.
//!
//! Two scenarios of the catalogue are not in these suites: the random cluster
//! (`failovers_lose_no_replica_and_keep_counts`) and the appends
//! (`appends_leave_no_stale_location`) run the implementation as the active that serves a
//! writer and fails back, with the active's replication work (excess replica choice,
//! invalidation): beyond the standby's boundary.

use crate::check::catalogue;
use crate::namenode::GenerationStamp;
use crate::namenode::namesystem::{
    HaState, NamenodeConfig, NamesystemApi, NamesystemBehavior, NamesystemFactory,
};
use crate::scenarios::Violation;
use crate::scenarios::standby::{
    departed_datanode_leaves_no_queued_report, failover_judges_queued_reports_after_catch_up,
    queued_reports_judged_at_their_block_edit, rbw_report_before_close_loses_no_replica,
    rbw_report_races_completion, replica_reported_between_genstamp_and_block_edits_is_recorded,
    replica_reported_between_split_batches_is_recorded,
    safe_mode_credits_replicas_reported_before_close, stale_replica_queued_as_reported,
    superseded_queued_report_is_purged,
};
use crate::sync::Arc;

#[cfg(loom)]
use super::report::Checker;
#[cfg(feature = "shuttle")]
use super::report::SuiteConfig;
#[cfg(any(loom, feature = "shuttle"))]
use super::report::{CaseReport, SuiteReport};

pub use crate::scenarios::standby::SEED_KEY;

/// A namesystem factory that puts `implementation` in the standby's seat and the crate's
/// `Namesystem` running `reference` in the active's: what the suites run the scenarios with.
#[derive(Debug, Clone, Copy)]
pub struct AsStandby<F> {
    /// Builds the implementation under test (every namesystem started as standby).
    pub implementation: F,
    /// The behavior of the NameNode started as active.
    pub reference: NamesystemBehavior,
}

impl<F: NamesystemFactory> NamesystemFactory for AsStandby<F> {
    fn create(
        &self,
        ha: HaState,
        config: NamenodeConfig,
        initial_gs: GenerationStamp,
    ) -> Arc<dyn NamesystemApi> {
        match ha {
            HaState::Active => self.reference.create(ha, config, initial_gs),
            HaState::Standby => self.implementation.create(ha, config, initial_gs),
        }
    }
}

/// One scenario of the catalogue's HDFS-2742 list, over any implementation: how shuttle
/// runs it, how loom does where it is a loom model, and whether it is sequential.
#[derive(Debug)]
pub struct Scenario<F> {
    /// The catalogue's name for it.
    pub name: &'static str,
    /// The run, as the catalogue runs it (the scenario seed is unused: none is random).
    pub run: fn(F) -> Result<(), Violation>,
    /// Whether it is a loom model (`loom-tests/rbw_report_race.rs`, `split_batch_race.rs`).
    pub loom: bool,
    /// A fixed sequence of steps on one thread: one execution says all.
    pub sequential: bool,
}

/// The catalogue's standby scenarios in which the implementation is the standby and the
/// new active at failover, over the factory `F` (see the module docs for the two left out).
pub fn scenarios<F: NamesystemFactory>() -> Vec<Scenario<F>> {
    let scenario = |name, run, loom, sequential| Scenario {
        name,
        run,
        loom,
        sequential,
    };
    vec![
        scenario(
            "rbw_report_before_close_loses_no_replica",
            rbw_report_before_close_loses_no_replica::<F>,
            false,
            true,
        ),
        scenario(
            "safe_mode_credits_replicas_reported_before_close",
            safe_mode_credits_replicas_reported_before_close::<F>,
            false,
            true,
        ),
        scenario(
            "failover_judges_queued_reports_after_catch_up",
            failover_judges_queued_reports_after_catch_up::<F>,
            false,
            true,
        ),
        scenario(
            "superseded_queued_report_is_purged",
            superseded_queued_report_is_purged::<F>,
            false,
            true,
        ),
        scenario(
            "replica_reported_between_genstamp_and_block_edits_is_recorded",
            replica_reported_between_genstamp_and_block_edits_is_recorded::<F>,
            false,
            true,
        ),
        scenario(
            "queued_reports_judged_at_their_block_edit",
            queued_reports_judged_at_their_block_edit::<F>,
            false,
            true,
        ),
        scenario(
            "departed_datanode_leaves_no_queued_report",
            departed_datanode_leaves_no_queued_report::<F>,
            false,
            true,
        ),
        scenario(
            "stale_replica_queued_as_reported",
            stale_replica_queued_as_reported::<F>,
            false,
            true,
        ),
        scenario(
            "rbw_report_races_completion",
            rbw_report_races_completion::<F>,
            true,
            false,
        ),
        scenario(
            "replica_reported_between_split_batches_is_recorded",
            replica_reported_between_split_batches_is_recorded::<F>,
            true,
            false,
        ),
    ]
}

/// The catalogue's standby scenarios left out of these suites, with why.
pub const NOT_IN_SUITE: [&str; 3] = [
    "failovers_lose_no_replica_and_keep_counts",
    "appends_leave_no_stale_location",
    "deleted_blocks_leave_no_queued_reports",
];

/// Whether `reference` must hold `scenario` in the catalogue.
pub fn claimed(scenario: &str, reference: NamesystemBehavior) -> bool {
    super::catalogue_holds(&catalogue::standby(), scenario, reference.name())
}

#[cfg(any(loom, feature = "shuttle"))]
fn report<F: NamesystemFactory>(
    reference: NamesystemBehavior,
    cases: Vec<CaseReport>,
) -> SuiteReport {
    SuiteReport {
        seed_key: SEED_KEY,
        implementation: std::any::type_name::<F>().to_owned(),
        reference: reference.name(),
        cases,
    }
}

/// The loom models of HDFS-2742 (an RBW report racing its block's completion, a report
/// racing split tailer batches) run exhaustively with the implementation `factory` builds
/// as the standby. In the loom build (`RUSTFLAGS="--cfg loom"`).
#[cfg(loom)]
pub fn loom_suite<F: NamesystemFactory>(factory: F, reference: NamesystemBehavior) -> SuiteReport {
    let seat = AsStandby {
        implementation: factory,
        reference,
    };
    let mut cases = Vec::new();
    for scenario in scenarios::<AsStandby<F>>().into_iter().filter(|s| s.loom) {
        if !claimed(scenario.name, reference) {
            cases.push(CaseReport::not_claimed(scenario.name, Checker::Loom));
            continue;
        }
        let run = scenario.run;
        cases.push(CaseReport::explored_by_loom(scenario.name, move || {
            run(seat)
        }));
    }
    report::<F>(reference, cases)
}

/// The standby scenarios of the catalogue with the implementation `factory` builds as the
/// standby: the concurrent ones under shuttle's random and PCT schedulers
/// (`config.iterations` schedules each, stopping at a violation), the seed's scripted
/// reproductions once. In the shuttle build (`--features shuttle`).
#[cfg(feature = "shuttle")]
pub fn shuttle_suite<F: NamesystemFactory>(
    factory: F,
    reference: NamesystemBehavior,
    config: &SuiteConfig,
) -> SuiteReport {
    let seat = AsStandby {
        implementation: factory,
        reference,
    };
    let mut cases = Vec::new();
    for scenario in scenarios::<AsStandby<F>>() {
        let run = scenario.run;
        cases.extend(super::shuttle_run::cases(
            scenario.name,
            scenario.sequential,
            claimed(scenario.name, reference),
            config,
            move |_| run(seat),
        ));
    }
    report::<F>(reference, cases)
}

#[cfg(not(any(loom, feature = "shuttle")))]
mod differential;
#[cfg(not(any(loom, feature = "shuttle")))]
pub use differential::differential;
