//! One run in a child process: explores a case under one scheduler in chunks, writing its
//! progress and its result to a status file the parent polls, and shrinks a catch's
//! schedule. Its stdout and stderr (what
//! shuttle prints about a failure) go where the parent says: a log, not the terminal.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use hadoop_ref::check::catalogue::{self, Case};
use hadoop_ref::check::exploration::Coverage;
use hadoop_ref::check::plan::SchedulerKind;
use hadoop_ref::check::shuttle::{
    EventLogs, InlineMonitors, Listeners, Observe, ReplayOutcome, RunSpec, explain_file,
    replay_file_with, run_case,
};
use hadoop_ref::scenarios::rng::SeededRng;
use hadoop_ref::story::EventLogWriter;
use hadoop_ref::unmodelled::Stopwatch;

use crate::cli::RunOne;
use crate::report::{CoverageStatus, RunStatus, Shrink};
use crate::shrink;

/// Chunks a run is explored in: each writes a progress update.
const CHUNKS: u64 = 10;

/// Runs `run` and reports through its status file; exit 2 on a run that cannot start.
pub fn run_one(run: &RunOne) -> ExitCode {
    let case = catalogue::all()
        .into_iter()
        .find(|c| c.scenario == run.scenario && c.variant == run.variant);
    let (Some(case), Some(scheduler)) = (case, SchedulerKind::from_label(&run.scheduler)) else {
        eprintln!(
            "soak run-one: no case {}/{} under {}",
            run.scenario, run.variant, run.scheduler
        );
        return ExitCode::from(2);
    };
    if run.monitors || run.events.is_some() || !run.no_coverage {
        // One case a process: its recorder and its coverage hook need no scoped dispatcher
        // for shuttle to park.
        hadoop_ref::check::shuttle::relay_events_globally();
    }
    let status = explore(case, scheduler, run);
    match write_status(&run.status, &status) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!(
                "soak run-one: cannot write {}: {error}",
                run.status.display()
            );
            ExitCode::from(2)
        }
    }
}

/// Explores `case` in chunks of fresh seeds until a failure, the iterations or the time
/// budget end it.
fn explore(case: Case, scheduler: SchedulerKind, run: &RunOne) -> RunStatus {
    let stopwatch = Stopwatch::start();
    let budget = run.time_ms.map(Duration::from_millis);
    let chunk_iterations = run.iterations.div_ceil(CHUNKS).max(1);
    let mut seeds = SeededRng::new(run.seed);
    let mut status = RunStatus::default();
    // One count over every chunk: a sequence seen in two chunks is one sequence.
    let coverage = (!run.no_coverage).then(|| Coverage::new(case.windows));
    // One set of monitors over every chunk: a sequence judged in one is a repeat in the
    // next.
    let monitors = run.monitors.then(InlineMonitors::default);
    for chunk in 0..CHUNKS {
        let remaining = run.iterations.saturating_sub(status.schedules);
        let remaining_time = budget.map(|b| b.saturating_sub(stopwatch.elapsed()));
        if remaining == 0 || remaining_time.is_some_and(|t| t.is_zero()) {
            break;
        }
        let spec = RunSpec {
            scheduler,
            iterations: usize::try_from(chunk_iterations.min(remaining)).unwrap_or(usize::MAX),
            max_time: remaining_time.map(|t| t / u32::try_from(CHUNKS - chunk).unwrap_or(1)),
            seed: seeds.next_u64(),
            schedule_dir: Some(run.out.clone()),
            // The first chunk's first executions are logged: numbering restarts each chunk.
            observe: Observe {
                coverage: coverage.clone(),
                monitors: monitors.clone(),
                ..observe(run, &case, chunk == 0)
            },
        };
        let result = run_case(case, &spec);
        status.schedules += result.iterations;
        status.monitored += result.observed.monitored;
        status.monitored_repeats += result.observed.monitored_repeats;
        status.event_logs += result.observed.logs_written;
        for (property, count) in &result.observed.violations {
            *status
                .monitor_violations
                .entry(property.clone())
                .or_default() += count;
        }
        status.elapsed_ms = millis(stopwatch.elapsed());
        if result.failure.is_some() {
            status.failure = result.failure;
            status.schedule_file = result.schedule_file;
            if !run.no_minimize {
                status.shrink = shrink_saved(status.schedule_file.as_deref());
            }
            if let Some(file) = &status.schedule_file {
                write_story(file);
                if let Some(dir) = &run.events {
                    write_catch_log(
                        file,
                        &dir.join(format!("{}.catch.ndjson", log_name(&case, run))),
                    );
                }
            }
            break;
        }
        // Progress is best effort: the final status is what counts.
        let _ = write_status(&run.status, &status);
    }
    status.elapsed_ms = millis(stopwatch.elapsed());
    status.coverage = coverage.map(|c| CoverageStatus::from(&c.summary()));
    status.done = true;
    status
}

/// Shrinks the saved schedule in place; a catch whose schedule cannot be shrunk keeps it
/// as found, and says why in the run's log.
fn shrink_saved(file: Option<&Path>) -> Option<Shrink> {
    match shrink::shrink_file(file?) {
        Ok(shrunk) => Some(shrink::summary(&shrunk)),
        Err(error) => {
            eprintln!("soak run-one: schedule kept as found: {error}");
            None
        }
    }
}

/// Writes the story of the saved schedule beside it (`FILE.story`): its protocol events
/// and the violation they end at. A story that cannot be written is reported in the run's
/// log; the schedule is what counts.
fn write_story(file: &Path) {
    let text = match explain_file(file) {
        Ok((ReplayOutcome::Violation(violation), story)) => story.ending_at(&violation).to_string(),
        Ok((outcome, _)) => {
            format!("the saved schedule does not replay to a violation: {outcome:?}\n")
        }
        Err(error) => format!("the saved schedule cannot be read: {error}\n"),
    };
    if let Err(error) = std::fs::write(story_path(file), text) {
        eprintln!(
            "soak run-one: cannot write the story of {}: {error}",
            file.display()
        );
    }
}

/// The name a run's event logs start with: `SCENARIO.VARIANT.SCHEDULER`.
fn log_name(case: &Case, run: &RunOne) -> String {
    format!("{}.{}.{}", case.scenario, case.variant, run.scheduler)
}

/// What a chunk of `run` observes of itself alone: event logs (for the first chunk).
fn observe(run: &RunOne, case: &Case, first_chunk: bool) -> Observe {
    Observe {
        event_logs: run
            .events
            .as_ref()
            .filter(|_| first_chunk)
            .map(|dir| EventLogs {
                dir: dir.clone(),
                name: log_name(case, run),
                executions: usize::try_from(run.events_per_run).unwrap_or(usize::MAX),
            }),
        monitors: None,
        coverage: None,
    }
}

/// Replays the saved schedule and writes its execution's event log to `path`; a log that
/// cannot be written is reported in the run's log.
fn write_catch_log(schedule: &Path, path: &Path) {
    let written = EventLogWriter::create(path).and_then(|log| {
        let listeners = Listeners {
            sink: Some(Box::new(log.clone())),
            ..Listeners::default()
        };
        replay_file_with(schedule, listeners).map_err(std::io::Error::other)?;
        log.flush()
    });
    if let Err(error) = written {
        eprintln!(
            "soak run-one: cannot write the event log of {}: {error}",
            schedule.display()
        );
    }
}

/// Where the story of a failing schedule is kept: beside it.
pub fn story_path(schedule: &Path) -> std::path::PathBuf {
    let mut name = schedule.as_os_str().to_owned();
    name.push(".story");
    std::path::PathBuf::from(name)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Replaces the status file atomically, so the parent never reads half of it.
fn write_status(path: &Path, status: &RunStatus) -> std::io::Result<()> {
    let text = serde_json::to_string(status).map_err(std::io::Error::other)?;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}
