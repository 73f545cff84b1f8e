//! The soak tool: runs every scenario of the catalogue under shuttle for a number of
//! schedules or a time budget. Fixed variants must hold, legacy variants must be caught.
//!
//! Each run goes to a child process of its own (`--jobs` of them at once), whose output
//! is kept out of the terminal: an expected catch prints no backtrace; its schedule is
//! shrunk and its story (the step table of protocol events ending at the violation) goes
//! to a `.story` file beside it. The terminal
//! shows a progress bar per run (or a short line every few seconds when it is not a
//! terminal) and, at the end, the table; `--json` also writes the table for CI.
//!
//! The table also says what each run explored (`check::exploration`): `seqs`, the distinct
//! sequences of protocol events (kinds per node) its executions took; `pairs`, the
//! distinct ordered pairs of event kinds that followed each other on different threads;
//! `windows`, how many of its case's named race windows it reached. Below the table, each
//! window with the executions that reached it; a window a fixed variant never reached is
//! flagged. `--no-coverage` leaves the counting out (it costs schedules per second).
//!
//! ```text
//! cargo soak                                  # every case, random + PCT, 20 000 schedules each
//! cargo soak run --time 600 --filter heartbeat  # ten minutes over the matching cases
//! cargo soak run --shard 0/2 --json shard0.json # half of the runs, for a CI matrix
//! cargo soak replay soak-failures/concurrent_leader_heartbeats_keep_the_highest_term.Legacy.random.schedule
//! cargo soak replay --minimize FILE             # shrink a schedule in place
//! cargo soak explain FILE                       # its step table, and FILE.html: a timeline
//! cargo soak replay --events run.ndjson FILE    # its event log (docs/event-log.md)
//! cargo soak check-log run.ndjson               # the seeds' properties over an event log
//! cargo soak explore deletions_across --depth 12 --time 60  # every interleaving, to depth 12
//! cargo soak list
//! cargo soak board --markdown docs/scoreboard.md --json docs/scoreboard.json
//! ```

mod board;
mod board_logs;
mod board_row;
mod board_summary;
mod check_log;
mod child;
mod cli;
mod explore;
mod pool;
mod replay;
mod report;
mod shrink;
mod tla_trace;

use std::process::ExitCode;

use clap::Parser;
use hadoop_ref::check::catalogue;

use cli::{Cli, Command};

fn main() -> ExitCode {
    end_quietly_on_a_closed_pipe();
    let cli = Cli::parse();
    match cli.command {
        None => pool::soak(&cli.run),
        Some(Command::Run(options)) => pool::soak(&options),
        Some(Command::Replay {
            file,
            minimize,
            events,
            monitors,
        }) => {
            if minimize {
                replay::minimize(&file)
            } else {
                replay::replay(&file, events.as_deref(), monitors)
            }
        }
        Some(Command::CheckLog(options)) => check_log::check_logs(&options),
        Some(Command::TlaTrace(options)) => tla_trace::tla_trace(&options),
        Some(Command::Explain { file, html }) => replay::explain(&file, html.as_deref()),
        Some(Command::Explore(options)) => explore::explore(&options),
        Some(Command::List) => list(),
        Some(Command::Board(options)) => board::board(&options),
        Some(Command::RunOne(run)) => child::run_one(&run),
    }
}

/// A reader that closes the pipe early (`cargo soak list | head`, `cargo soak explore |
/// head`) ends the tool as it ends `cat`: quietly, by SIGPIPE's default action. Rust's
/// runtime ignores the signal, so that a write to a closed pipe fails instead, and
/// `println!` panics on that failure, backtrace and all.
fn end_quietly_on_a_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: `signal` with `SIG_DFL` installs no handler of ours; it runs first thing in
    // `main`, before any thread of the tool starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Prints the catalogue, one case a line.
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
