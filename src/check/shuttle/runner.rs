//! One exploration of a case under a shuttle scheduler, on an OS thread of its own and one
//! at a time per process, with shuttle persisting the failing schedule, which is read back.
//!
//! Shuttle reports a failing schedule through a process-wide panic hook that keeps the
//! configuration of the first run, so every run of a process names the same directory and
//! the run's own file is the one that appeared during it; runs are therefore exclusive.

use std::collections::BTreeSet;
use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Duration;

use shuttle::rand::{RngCore, thread_rng};
use shuttle::scheduler::Scheduler;
use shuttle::{Config, FailurePersistence, Runner};

use crate::check::catalogue::Case;
use crate::story::{Recorder, Story};
use crate::unmodelled::{
    Counter, ExpectedPanic, Shared, exclusive, on_new_os_thread, quiet_expected_panics,
};

/// How an exploration ended.
#[derive(Debug, Clone, Default)]
pub struct Explored {
    /// Executions run, up to and including a failing one.
    pub executions: u64,
    /// The first failure (a violation's message, or another panic's).
    pub failure: Option<String>,
    /// The failing schedule, as shuttle encodes it.
    pub schedule: Option<String>,
}

/// Explores `case` under `scheduler` until it ends, a failure, or `max_time`.
pub fn explore<S: Scheduler + Send + 'static>(
    case: Case,
    scheduler: S,
    max_time: Option<Duration>,
) -> Explored {
    exclusive(|| explore_exclusively(case, scheduler, max_time))
}

/// The one directory shuttle persists failing schedules to in this process.
fn failure_dir() -> PathBuf {
    std::env::temp_dir().join(format!("hadoop-ref-shuttle-{}", std::process::id()))
}

fn files_in(dir: &Path) -> BTreeSet<PathBuf> {
    fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

fn explore_exclusively<S: Scheduler + Send + 'static>(
    case: Case,
    scheduler: S,
    max_time: Option<Duration>,
) -> Explored {
    // Leaked so the 'static test body can count across executions; outside the model.
    let executions: &'static Counter = Box::leak(Box::new(Counter::new()));
    let dir = failure_dir();
    let persistence = match fs::create_dir_all(&dir) {
        Ok(()) => FailurePersistence::File(Some(dir.clone())),
        Err(_) => FailurePersistence::Print,
    };
    let before = files_in(&dir);
    let found = Shared::new(None);
    let inbox = found.clone();
    quiet_expected_panics();
    let outcome = on_new_os_thread(move || {
        let mut config = quiet_config();
        config.max_time = max_time;
        config.failure_persistence = persistence;
        let body = move || {
            executions.increment();
            let seed = thread_rng().next_u64();
            if let Err(violation) = case.run(seed) {
                // Kept here; the panic only ends the run (and makes shuttle persist the
                // schedule), quietly.
                inbox.put(violation.to_string());
                std::panic::panic_any(ExpectedPanic);
            }
        };
        catch_unwind(AssertUnwindSafe(|| {
            Runner::new(scheduler, config).run(body)
        }))
        .err()
        .map(|payload| panic_message(payload.as_ref()))
    });
    let failure = found
        .take()
        .or_else(|| outcome.unwrap_or_else(|payload| Some(panic_message(payload.as_ref()))));
    let written: Vec<PathBuf> = files_in(&dir).difference(&before).cloned().collect();
    let schedule = match (&failure, written.first()) {
        (Some(_), Some(file)) => fs::read_to_string(file).ok(),
        _ => None,
    };
    for file in written {
        // Best effort: a leftover file in the temporary directory is harmless.
        let _ = fs::remove_file(file);
    }
    Explored {
        executions: executions.get(),
        failure,
        schedule,
    }
}

/// What a quiet run found: the first violation, with the story of its execution when
/// one was recorded.
#[derive(Debug, Clone, Default)]
pub struct Quiet {
    /// The first violation's message.
    pub violation: Option<String>,
    /// The protocol events of the violating execution (empty unless recorded).
    pub story: Story,
}

/// Runs the executions `scheduler` asks for and returns the first violation, without a
/// panic: a violation is handed out of the run instead of failing it, so nothing is
/// printed and no schedule is persisted (the caller's scheduler knows what it did). With
/// `record_story`, every execution's protocol events are recorded and the violating
/// one's are kept. A panic of another kind still fails the run and is returned as `Err`.
pub fn run_quietly<S: Scheduler + Send + 'static>(
    case: Case,
    scheduler: S,
    record_story: bool,
) -> Result<Quiet, String> {
    let found = Shared::new(None);
    let inbox = found.clone();
    let outcome = on_new_os_thread(move || {
        // Installed around the whole run, not inside an execution: shuttle starts every
        // task with the dispatcher the run was started under.
        let recorder = record_story.then(Recorder::default);
        let in_body = recorder.clone();
        let body = move || {
            let seed = thread_rng().next_u64();
            if let Some(recorder) = &in_body {
                recorder.take();
            }
            if let Err(violation) = case.run(seed) {
                inbox.put(Quiet {
                    violation: Some(violation.to_string()),
                    story: in_body.as_ref().map(Recorder::take).unwrap_or_default(),
                });
            }
        };
        let run = || Runner::new(scheduler, quiet_config()).run(body);
        catch_unwind(AssertUnwindSafe(|| match recorder {
            Some(recorder) => recorder.install(run),
            None => run(),
        }))
        .map_err(|payload| panic_message(payload.as_ref()))
    });
    outcome
        .map_err(|payload| panic_message(payload.as_ref()))
        .and_then(|run| run)?;
    Ok(found.take().unwrap_or_default())
}

/// Shuttle's configuration without its warning that it treats every atomic ordering as
/// `SeqCst`: weaker orderings are loom's job here (the loom models explore them).
fn quiet_config() -> Config {
    let mut config = Config::new();
    config.silence_warnings = true;
    config
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "panic without a message".to_owned())
}
