//! Runs a [`Case`] under shuttle (random or PCT schedules), counts executions, and saves a
//! failing schedule to a file that [`replay_file`] runs again. Used by the shuttle tests
//! and the soak tool.

use std::collections::BTreeSet;
use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Duration;

use shuttle::rand::{RngCore, thread_rng};
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::{Config, FailurePersistence, Runner};

use super::catalogue::{self, Case};
use super::plan::SchedulerKind;
use crate::unmodelled::{Counter, Stopwatch, exclusive, on_new_os_thread};

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
    exclusive(|| run_case_exclusively(case, spec))
}

/// The one directory shuttle persists failing schedules to in this process: its panic hook
/// keeps the configuration of the first run, so every run must name the same directory.
fn shuttle_failure_dir() -> PathBuf {
    std::env::temp_dir().join(format!("hadoop-ref-shuttle-{}", std::process::id()))
}

fn schedule_files(dir: &Path) -> BTreeSet<PathBuf> {
    fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

fn run_case_exclusively(case: Case, spec: &RunSpec) -> RunResult {
    let spec = spec.clone();
    let stopwatch = Stopwatch::start();
    let iterations: &'static Counter = Box::leak(Box::new(Counter::new()));
    let failure_dir = shuttle_failure_dir();
    let persistence = match fs::create_dir_all(&failure_dir) {
        Ok(()) => FailurePersistence::File(Some(failure_dir.clone())),
        Err(_) => FailurePersistence::Print,
    };
    let before = schedule_files(&failure_dir);
    let outcome = on_new_os_thread(move || {
        let mut config = Config::new();
        config.max_time = spec.max_time;
        config.failure_persistence = persistence;
        let body = move || {
            iterations.increment();
            let seed = thread_rng().next_u64();
            if let Err(violation) = case.run(seed) {
                panic!("{violation}");
            }
        };
        catch_unwind(AssertUnwindSafe(|| match spec.scheduler {
            SchedulerKind::Random => {
                Runner::new(
                    RandomScheduler::new_from_seed(spec.seed, spec.iterations),
                    config,
                )
                .run(body);
            }
            SchedulerKind::Pct { depth } => {
                Runner::new(
                    PctScheduler::new_from_seed(spec.seed, depth, spec.iterations),
                    config,
                )
                .run(body);
            }
        }))
        .err()
        .map(|payload| panic_message(payload.as_ref()))
    });
    let failure = outcome.unwrap_or_else(|payload| Some(panic_message(payload.as_ref())));
    let written: Vec<PathBuf> = schedule_files(&failure_dir)
        .difference(&before)
        .cloned()
        .collect();
    let schedule_file = match (&failure, written.first(), &spec.schedule_dir) {
        (Some(_), Some(written), Some(out)) => save_schedule(case, spec.scheduler, written, out),
        _ => None,
    };
    for file in written {
        // Best effort: a leftover file in the temporary directory is harmless.
        let _ = fs::remove_file(file);
    }
    RunResult {
        iterations: iterations.get(),
        elapsed: stopwatch.elapsed(),
        failure,
        schedule_file,
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "panic without a message".to_owned())
}

const SCHEDULE_HEADER: &str = "# hadoop-ref shuttle schedule: replay with `soak replay FILE`";

/// Copies the schedule shuttle wrote into `out/<scenario>.<variant>.<scheduler>.schedule`,
/// with a header naming the case.
fn save_schedule(
    case: Case,
    scheduler: SchedulerKind,
    written: &Path,
    out: &Path,
) -> Option<PathBuf> {
    let schedule = fs::read_to_string(written).ok()?;
    let path = out.join(format!(
        "{}.{}.{}.schedule",
        case.scenario,
        case.variant,
        scheduler.label()
    ));
    let text = format!(
        "{SCHEDULE_HEADER}\nscenario: {}\nvariant: {}\nschedule:\n{}\n",
        case.scenario,
        case.variant,
        schedule.trim()
    );
    fs::write(&path, text).ok()?;
    Some(path)
}

/// Why a schedule file could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A header line is missing or malformed.
    #[error("{path} is not a schedule file: {reason}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// No scenario of the catalogue has that name and variant.
    #[error("no scenario {scenario}/{variant} in the catalogue")]
    UnknownCase {
        /// Scenario name.
        scenario: String,
        /// Variant name.
        variant: String,
    },
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

/// Whether a failure message is a [`Violation`](crate::scenarios::Violation)'s
/// (`<seed>: property `<name>` violated: <detail>`).
fn is_violation(message: &str) -> bool {
    message
        .split_once(": property `")
        .is_some_and(|(seed, rest)| !seed.contains(' ') && rest.contains("` violated: "))
}

/// Replays a schedule file written by [`run_case`].
pub fn replay_file(path: &Path) -> Result<ReplayOutcome, ReplayError> {
    let text = fs::read_to_string(path).map_err(|source| ReplayError::Io {
        path: path.to_owned(),
        source,
    })?;
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
            .map(str::to_owned)
            .ok_or_else(|| ReplayError::Malformed {
                path: path.to_owned(),
                reason: format!("no `{name}:` line"),
            })
    };
    let (scenario, variant) = (field("scenario")?, field("variant")?);
    // The schedule is every line after `schedule:`, as shuttle wrapped it.
    let schedule: String = text
        .lines()
        .skip_while(|line| line.trim() != "schedule:")
        .skip(1)
        .flat_map(|line| line.chars().filter(|c| !c.is_whitespace()))
        .collect();
    if schedule.is_empty() || !schedule.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(ReplayError::Malformed {
            path: path.to_owned(),
            reason: "the lines after `schedule:` must be the hex schedule shuttle printed".into(),
        });
    }
    let case = catalogue::all()
        .into_iter()
        .find(|c| c.scenario == scenario && c.variant == variant)
        .ok_or(ReplayError::UnknownCase { scenario, variant })?;
    let outcome = exclusive(|| {
        on_new_os_thread(move || {
            catch_unwind(AssertUnwindSafe(|| {
                shuttle::replay(
                    move || {
                        let seed = thread_rng().next_u64();
                        if let Err(violation) = case.run(seed) {
                            panic!("{violation}");
                        }
                    },
                    &schedule,
                )
            }))
            .err()
            .map(|payload| panic_message(payload.as_ref()))
        })
    });
    let failure = outcome.unwrap_or_else(|payload| Some(panic_message(payload.as_ref())));
    Ok(match failure {
        None => ReplayOutcome::Clean,
        Some(message) if is_violation(&message) => ReplayOutcome::Violation(message),
        Some(message) => ReplayOutcome::OtherFailure(message),
    })
}
