//! The commands that work on one saved schedule: replay it with its story, shrink it, and
//! explain it (its step table and an HTML timeline).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use hadoop_ref::check::explore::CounterexampleFile;
use hadoop_ref::check::shuttle::explore::replay_counterexample;
use hadoop_ref::check::shuttle::{
    Listeners, ReplayOutcome, Replayed, explain_file, replay_file_with, schedule_file,
};
use hadoop_ref::story::{self, EventLogWriter, Story};

use crate::shrink;

/// Replays `file` and prints the story of the violation it reproduces; with `events`,
/// writes the execution's event log there, and with `monitors`, prints the event
/// monitors' verdicts over it.
pub fn replay(file: &Path, events: Option<&Path>, monitors: bool) -> ExitCode {
    let log = match events.map(EventLogWriter::create).transpose() {
        Ok(log) => log,
        Err(error) => {
            eprintln!("soak: cannot write the event log: {error}");
            return ExitCode::from(2);
        }
    };
    let listeners = Listeners {
        story: true,
        sink: log
            .clone()
            .map(|log| Box::new(log) as Box<dyn hadoop_ref::story::EventSink>),
        monitors,
    };
    let replayed = if CounterexampleFile::is_one(file) {
        replay_counterexample(file, listeners).map_err(|e| e.to_string())
    } else {
        replay_file_with(file, listeners).map_err(|e| e.to_string())
    };
    let replayed = match replayed {
        Ok(replayed) => replayed,
        Err(error) => {
            eprintln!("soak: {error}");
            return ExitCode::from(2);
        }
    };
    if let (Some(log), Some(path)) = (&log, events) {
        match log.flush() {
            Ok(()) => eprintln!("event log: {} ({} events)", path.display(), log.lines()),
            Err(error) => {
                eprintln!("soak: cannot write {}: {error}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    let code = report_replay(file, &replayed);
    for judgement in &replayed.judgements {
        println!("monitor  {judgement}");
    }
    code
}

/// Prints how a replay ended; its exit code.
fn report_replay(file: &Path, replayed: &Replayed) -> ExitCode {
    match &replayed.outcome {
        ReplayOutcome::Violation(violation) => {
            print!("{}", replayed.story.ending_at(violation));
            println!("\nreplayed {}: fails again: {violation}", file.display());
            ExitCode::FAILURE
        }
        ReplayOutcome::Clean => {
            println!("replayed {}: the schedule runs clean now", file.display());
            ExitCode::SUCCESS
        }
        ReplayOutcome::OtherFailure(message) => {
            eprintln!(
                "soak: {} does not replay as a violation (a stale schedule, or a panic): {message}",
                file.display()
            );
            ExitCode::from(2)
        }
    }
}

/// Shrinks the schedule in `file` and writes the shrunk one over it; exits as a replay
/// of a violation does (1), or 2 when the file cannot be shrunk.
pub fn minimize(file: &Path) -> ExitCode {
    match shrink::shrink_file(file) {
        Ok(shrunk) => {
            println!(
                "minimized {} ({} replays): {}\n{}",
                file.display(),
                shrunk.replays,
                shrink::summary(&shrunk),
                shrunk.violation
            );
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("soak: {error}");
            ExitCode::from(2)
        }
    }
}

/// Replays `file` (a schedule or an explorer's counterexample), prints its step table
/// and writes its timeline to `html` (default `FILE.html`); exits as [`replay`] does.
pub fn explain(file: &Path, html: Option<&Path>) -> ExitCode {
    let explained = if CounterexampleFile::is_one(file) {
        explain_counterexample(file)
    } else {
        schedule_file::read(file)
            .map_err(|e| e.to_string())
            .and_then(|read| {
                explain_file(file)
                    .map(|(outcome, story)| (read.case.id(), outcome, story))
                    .map_err(|e| e.to_string())
            })
    };
    let (case, outcome, story) = match explained {
        Ok(explained) => explained,
        Err(error) => {
            eprintln!("soak: {error}");
            return ExitCode::from(2);
        }
    };
    let violation = match &outcome {
        ReplayOutcome::Violation(violation) => Some(violation.as_str()),
        ReplayOutcome::Clean => None,
        ReplayOutcome::OtherFailure(message) => {
            eprintln!(
                "soak: {} does not replay as a violation (a stale schedule, or a panic): {message}",
                file.display()
            );
            return ExitCode::from(2);
        }
    };
    match violation {
        Some(violation) => print!("{}", story.ending_at(violation)),
        None => print!("{}\nthe schedule runs clean now\n", story.table()),
    }
    let path = html.map_or_else(|| html_path(file), Path::to_path_buf);
    let page = story::timeline(&story, violation, &case, &file.display().to_string());
    if let Err(error) = std::fs::write(&path, page) {
        eprintln!("soak: cannot write {}: {error}", path.display());
        return ExitCode::from(2);
    }
    println!("\ntimeline: {}", path.display());
    if violation.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// An explorer's counterexample replayed with its story: the case's id, the outcome, the
/// story.
fn explain_counterexample(file: &Path) -> Result<(String, ReplayOutcome, Story), String> {
    let read = CounterexampleFile::read(file).map_err(|e| e.to_string())?;
    let listeners = Listeners {
        story: true,
        ..Listeners::default()
    };
    let replayed = replay_counterexample(file, listeners).map_err(|e| e.to_string())?;
    let id = format!("{}/{} (explorer)", read.scenario, read.variant);
    Ok((id, replayed.outcome, replayed.story))
}

/// `FILE.html`, beside the schedule.
fn html_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".html");
    PathBuf::from(name)
}
