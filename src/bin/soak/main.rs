//! The soak tool: runs every scenario of the catalogue under shuttle for a number of
//! schedules or a time budget. Fixed variants must hold, legacy variants must be caught.
//!
//! Each run goes to a child process of its own (`--jobs` of them at once), whose output
//! is kept out of the terminal: an expected catch prints no backtrace, and its story (the
//! child's output, the violation) goes to a `.log` file beside its schedule. The terminal
//! shows a progress bar per run (or a short line every few seconds when it is not a
//! terminal) and, at the end, the table; `--json` also writes the table for CI.
//!
//! ```text
//! cargo soak                                  # every case, random + PCT, 20 000 schedules each
//! cargo soak run --time 600 --filter heartbeat  # ten minutes over the matching cases
//! cargo soak run --shard 0/2 --json shard0.json # half of the runs, for a CI matrix
//! cargo soak replay soak-failures/concurrent_leader_heartbeats_keep_the_highest_term.Legacy.random.schedule
//! cargo soak list
//! ```

mod child;
mod cli;
mod pool;
mod report;
mod shrink;

use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use hadoop_ref::check::catalogue;
use hadoop_ref::check::shuttle::{ReplayOutcome, explain_file};

use cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        None => pool::soak(&cli.run),
        Some(Command::Run(options)) => pool::soak(&options),
        Some(Command::Replay { file, minimize }) => {
            if minimize {
                minimize_file(&file)
            } else {
                replay(&file)
            }
        }
        Some(Command::List) => list(),
        Some(Command::RunOne(run)) => child::run_one(&run),
    }
}

fn list() -> ExitCode {
    let cases = catalogue::all();
    let width = cases.iter().map(|c| c.scenario.len()).max().unwrap_or(0);
    for case in cases {
        println!(
            "{:<width$} {:<40} {:?}",
            case.scenario, case.variant, case.expectation
        );
    }
    ExitCode::SUCCESS
}

/// Replays `file` and prints the story of the violation it reproduces.
fn replay(file: &Path) -> ExitCode {
    match explain_file(file) {
        Ok((ReplayOutcome::Violation(violation), story)) => {
            print!("{}", story.ending_at(&violation));
            println!("\nreplayed {}: fails again: {violation}", file.display());
            ExitCode::FAILURE
        }
        Ok((ReplayOutcome::Clean, _)) => {
            println!("replayed {}: the schedule runs clean now", file.display());
            ExitCode::SUCCESS
        }
        Ok((ReplayOutcome::OtherFailure(message), _)) => {
            eprintln!(
                "soak: {} does not replay as a violation (a stale schedule, or a panic): {message}",
                file.display()
            );
            ExitCode::from(2)
        }
        Err(error) => {
            eprintln!("soak: {error}");
            ExitCode::from(2)
        }
    }
}

/// Shrinks the schedule in `file` and writes the shrunk one over it; exits as a replay
/// of a violation does (1), or 2 when the file cannot be shrunk.
fn minimize_file(file: &Path) -> ExitCode {
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
