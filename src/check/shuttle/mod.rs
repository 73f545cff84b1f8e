//! Runs a [`Case`] under shuttle (random or PCT schedules), counts executions, saves a
//! failing schedule to a file that [`replay_file`] runs again, and shrinks a failing
//! schedule ([`minimize`]). Used by the shuttle tests and the soak tool.

mod minimize;
mod runner;
pub mod schedule_file;

use std::path::{Path, PathBuf};
use std::time::Duration;

use shuttle::scheduler::{PctScheduler, RandomScheduler, ReplayScheduler};
use shuttle_engine::scheduler::Schedule;

use super::catalogue::Case;
use super::plan::SchedulerKind;
use crate::unmodelled::Stopwatch;

pub use minimize::{MinimizeError, Minimized, minimize};
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
            RandomScheduler::new_from_seed(spec.seed, spec.iterations),
            spec.max_time,
        ),
        SchedulerKind::Pct { depth } => runner::explore(
            case,
            PctScheduler::new_from_seed(spec.seed, depth, spec.iterations),
            spec.max_time,
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
    }
}

/// What replaying a schedule did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayOutcome {
    /// The schedule broke an invariant again: the violation's message.
    Violation(String),
    /// The run failed another way: the schedule no longer fits the code (shuttle finds a
    /// scheduling point that is not where the file says: the code moved its scheduling
    /// points since the file was written), or a scenario thread panicked.
    OtherFailure(String),
    /// The schedule ran to its end and every invariant held.
    Clean,
}

impl ReplayOutcome {
    fn of(failure: Option<String>) -> Self {
        match failure {
            None => ReplayOutcome::Clean,
            Some(message) if property_of(&message).is_some() => ReplayOutcome::Violation(message),
            Some(message) => ReplayOutcome::OtherFailure(message),
        }
    }
}

/// The seed key and property a [`Violation`](crate::scenarios::Violation)'s message names
/// (`<seed>: property `<name>` violated: <detail>`); `None` for any other message.
pub fn property_of(message: &str) -> Option<(&str, &str)> {
    let (seed, rest) = message.split_once(": property `")?;
    let (property, _) = rest.split_once("` violated: ")?;
    (!seed.contains(' ')).then_some((seed, property))
}

/// Replays `schedule` of `case` exactly, as shuttle's replay does, and quietly: the
/// outcome is returned, nothing is printed.
pub fn replay_schedule(case: Case, schedule: Schedule) -> ReplayOutcome {
    let mut replay = ReplayScheduler::new_from_schedule(schedule);
    // The schedule ends where the violation was found; the execution's own teardown
    // after that point is not part of it.
    replay.set_allow_incomplete();
    match runner::run_quietly(case, replay) {
        Ok(found) => ReplayOutcome::of(found),
        Err(panic) => ReplayOutcome::OtherFailure(panic),
    }
}

/// Replays a schedule file written by [`run_case`].
pub fn replay_file(path: &Path) -> Result<ReplayOutcome, ScheduleFileError> {
    let file = schedule_file::read(path)?;
    Ok(replay_schedule(file.case, file.schedule))
}
