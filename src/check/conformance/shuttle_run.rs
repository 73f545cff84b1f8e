//! How the conformance suites run one scenario under shuttle, and what they keep of a
//! catch: the schedule's replay with its story.
//!
//! **The race** is the scenario's; shuttle's random and PCT schedulers look for it in
//! another implementation as they do in the crate's own variants (the soak's schedulers).
//!
//! **What a catch keeps** is the violation and the step table of its execution, replayed
//! from the failing schedule in memory (no file: only this process knows the implementation).

use super::report::{CaseOutcome, CaseReport, Checker, SuiteConfig};
use crate::check::plan::SchedulerKind;
use crate::check::shuttle::{Observe, ReplayOutcome, RunSpec, replay_scenario_story, run_scenario};
use crate::scenarios::Violation;

/// The schedulers each concurrent case runs under: random, then PCT.
pub(super) fn schedulers(config: &SuiteConfig) -> [SchedulerKind; 2] {
    [
        SchedulerKind::Random,
        SchedulerKind::Pct {
            depth: config.pct_depth,
        },
    ]
}

/// A scenario's cases in a suite: one run if it is `sequential`, else one under each of
/// [`schedulers`]; each [`CaseReport::not_claimed`] (and not run) unless `claimed`.
pub(super) fn cases(
    name: &'static str,
    sequential: bool,
    claimed: bool,
    config: &SuiteConfig,
    scenario: impl Fn(u64) -> Result<(), Violation> + Send + Sync + Clone + 'static,
) -> Vec<CaseReport> {
    let schedulers: Vec<_> = match sequential {
        true => vec![None],
        false => schedulers(config).map(Some).to_vec(),
    };
    schedulers
        .into_iter()
        .map(|scheduler| match claimed {
            true => run(name, scheduler, config, scenario.clone()),
            false => CaseReport::not_claimed(
                name,
                scheduler.map_or(Checker::Sequential, Checker::Shuttle),
            ),
        })
        .collect()
}

/// Runs `scenario` under `scheduler` for `config.iterations` schedules (one, for a
/// `Checker::Sequential` case: pass `None`), stopping at a violation.
pub(super) fn run(
    name: &'static str,
    scheduler: Option<SchedulerKind>,
    config: &SuiteConfig,
    scenario: impl Fn(u64) -> Result<(), Violation> + Send + Sync + Clone + 'static,
) -> CaseReport {
    let spec = RunSpec {
        scheduler: scheduler.unwrap_or(SchedulerKind::Random),
        iterations: if scheduler.is_some() {
            config.iterations
        } else {
            1
        },
        max_time: None,
        seed: config.seed,
        schedule_dir: None,
        observe: Observe::default(),
    };
    let result = run_scenario(scenario.clone(), &spec);
    let outcome = match result.failure {
        None => CaseOutcome::Held,
        Some(violation) => {
            let story = result
                .schedule
                .as_deref()
                .and_then(|schedule| replay_scenario_story(scenario, schedule))
                .map(|(replayed, story)| match replayed {
                    ReplayOutcome::Violation(again) => story.ending_at(&again).to_string(),
                    _ => story.ending_at(&violation).to_string(),
                })
                .unwrap_or_else(|| violation.clone());
            CaseOutcome::Caught { violation, story }
        }
    };
    CaseReport {
        scenario: name,
        checker: scheduler.map_or(Checker::Sequential, Checker::Shuttle),
        executions: result.iterations,
        outcome,
    }
}
