//! Runs a [`Case`] under shuttle (random or PCT schedules), counts executions, saves a
//! failing schedule to a file that [`replay_file`] runs again, and shrinks a failing
//! schedule ([`minimize`]). Used by the shuttle tests and the soak tool.

pub mod explore;
mod minimize;
pub mod observe;
mod relay;
mod replay;
mod runner;
pub mod schedule_file;
pub(crate) mod worker;

use std::path::{Path, PathBuf};
use std::time::Duration;

use shuttle::scheduler::{PctScheduler, RandomScheduler, UrwRandomScheduler};

use super::catalogue::Case;
use super::plan::SchedulerKind;
use crate::scenarios::Violation;
use crate::story::Story;
use crate::unmodelled::Stopwatch;

pub use minimize::{MinimizeError, Minimized, context_switches, minimize};
pub use observe::{EventLogs, InlineMonitors, Observe, Observed};
pub use relay::relay_events_globally;
pub use replay::{ReplayOutcome, Replayed, property_of, replay, replay_schedule, replay_story};
pub use runner::{ChoicesOnly, Listeners};
pub use schedule_file::ScheduleFileError;

/// How long and how a case is explored.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The scheduler.
    pub scheduler: SchedulerKind,
    /// Most executions.
    pub iterations: usize,
    /// Stop earlier once this much wall time has passed.
    pub max_time: Option<Duration>,
    /// Seed of the scheduler (scenario seeds are drawn from it, so a run is reproducible).
    pub seed: u64,
    /// Where a failing schedule is written; `None` keeps it in memory only.
    pub schedule_dir: Option<PathBuf>,
    /// What is observed of the executions: event logs, inline monitors.
    pub observe: Observe,
}

/// What a run found.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// Executions run, up to and including a failing one.
    pub iterations: u64,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// The first violation (or other panic) seen, if any.
    pub failure: Option<String>,
    /// The failing schedule, as shuttle encodes it.
    pub schedule: Option<String>,
    /// The schedule file written for the failure.
    pub schedule_file: Option<PathBuf>,
    /// The event logs written.
    pub observed: Observed,
}

impl RunResult {
    /// Executions per second.
    pub fn rate_per_s(&self) -> f64 {
        self.iterations as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Runs `case` under `spec`, on an OS thread of its own, one run at a time per process.
pub fn run_case(case: Case, spec: &RunSpec) -> RunResult {
    let stopwatch = Stopwatch::start();
    let explored = match spec.scheduler {
        SchedulerKind::Random => runner::explore(
            case,
            ChoicesOnly(RandomScheduler::new_from_seed(spec.seed, spec.iterations)),
            spec.max_time,
            spec.observe.clone(),
        ),
        SchedulerKind::Pct { depth } => runner::explore(
            case,
            ChoicesOnly(PctScheduler::new_from_seed(
                spec.seed,
                depth,
                spec.iterations,
            )),
            spec.max_time,
            spec.observe.clone(),
        ),
        SchedulerKind::Urw => runner::explore(
            case,
            UrwRandomScheduler::new_from_seed(spec.seed, spec.iterations),
            spec.max_time,
            spec.observe.clone(),
        ),
    };
    let schedule_file = match (&explored.schedule, &spec.schedule_dir) {
        (Some(schedule), Some(dir)) => {
            let path = schedule_file::path_for(dir, &case, &spec.scheduler.label());
            schedule_file::write(&path, &case, schedule)
                .ok()
                .map(|()| path)
        }
        _ => None,
    };
    RunResult {
        iterations: explored.executions,
        elapsed: stopwatch.elapsed(),
        failure: explored.failure,
        schedule: explored.schedule,
        schedule_file,
        observed: explored.observed,
    }
}

/// Runs the scenario `run` (given the scenario seed) under `spec`, as [`run_case`] runs a
/// catalogue case: what a conformance suite runs against another implementation. The
/// failing schedule is kept in memory ([`RunResult::schedule`]), never written to a file:
/// the soak tool could not replay it without the implementation.
pub fn run_scenario(
    run: impl Fn(u64) -> Result<(), Violation> + Send + Sync + 'static,
    spec: &RunSpec,
) -> RunResult {
    let stopwatch = Stopwatch::start();
    let explored = match spec.scheduler {
        SchedulerKind::Random => runner::explore_run(
            run,
            ChoicesOnly(RandomScheduler::new_from_seed(spec.seed, spec.iterations)),
            spec.max_time,
            spec.observe.clone(),
        ),
        SchedulerKind::Pct { depth } => runner::explore_run(
            run,
            ChoicesOnly(PctScheduler::new_from_seed(
                spec.seed,
                depth,
                spec.iterations,
            )),
            spec.max_time,
            spec.observe.clone(),
        ),
        SchedulerKind::Urw => runner::explore_run(
            run,
            UrwRandomScheduler::new_from_seed(spec.seed, spec.iterations),
            spec.max_time,
            spec.observe.clone(),
        ),
    };
    RunResult {
        iterations: explored.executions,
        elapsed: stopwatch.elapsed(),
        failure: explored.failure,
        schedule: explored.schedule,
        schedule_file: None,
        observed: explored.observed,
    }
}

/// Replays `schedule` (as [`RunResult::schedule`] encodes it) of the scenario `run`,
/// recording the story of its execution; `None` when the text is no schedule.
pub fn replay_scenario_story(
    run: impl Fn(u64) -> Result<(), Violation> + Send + Sync + 'static,
    schedule: &str,
) -> Option<(ReplayOutcome, Story)> {
    let schedule = schedule_file::decode(schedule)?;
    let listeners = Listeners {
        story: true,
        ..Listeners::default()
    };
    Some(replay::replay_with(run, schedule, listeners))
}

/// Replays a schedule file written by [`run_case`].
pub fn replay_file(path: &Path) -> Result<ReplayOutcome, ScheduleFileError> {
    let file = schedule_file::read(path)?;
    Ok(replay_schedule(file.case, file.schedule))
}

/// Replays a schedule file written by [`run_case`], recording the story of its execution.
pub fn explain_file(path: &Path) -> Result<(ReplayOutcome, Story), ScheduleFileError> {
    let file = schedule_file::read(path)?;
    Ok(replay_story(file.case, file.schedule))
}

/// Replays a schedule file written by [`run_case`] with `listeners` on its events.
pub fn replay_file_with(path: &Path, listeners: Listeners) -> Result<Replayed, ScheduleFileError> {
    let file = schedule_file::read(path)?;
    Ok(replay(file.case, file.schedule, listeners))
}
