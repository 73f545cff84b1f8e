//! The soak tool's command line: every subcommand's options, and an example line under
//! each one's `--help`. Nothing here runs anything, so the crate's tests read this file
//! as it is (`tests/docs/readme_commands.rs`) to check the README's commands against it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use hadoop_ref::check::plan::{SchedulerKind, Shard};

/// Runs the catalogue's scenarios under shuttle: fixed variants must hold, legacy variants
/// must be caught. With no command, `run`.
#[derive(Debug, Parser)]
#[command(
    name = "soak",
    args_conflicts_with_subcommands = true,
    // `soak X --help` stays; without a `help` subcommand a mistyped command's tip names
    // the one command it is close to.
    disable_help_subcommand = true,
    after_help = "Examples:\n  cargo soak                      # every case, 100 s, both schedulers\n  cargo soak run --time 600       # ten minutes\n  cargo soak list                 # the cases and what each must do"
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The options of `run`, when no command is given.
    #[command(flatten)]
    pub run: RunOptions,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the catalogue (the default).
    #[command(
        after_help = "Examples:\n  cargo soak run --time 20 --filter heartbeat_term\n  cargo soak run --iterations 20000            # the long soak\n  cargo soak run --seed 7 --shard 0/4 --json shard0.json"
    )]
    Run(RunOptions),
    /// Replay a saved failing schedule: exit 1 if it breaks its invariant again, 0 if it
    /// runs clean, 2 if it no longer replays.
    #[command(
        after_help = "Examples:\n  cargo soak replay soak-failures/heartbeat_term_fences_believing_old_leader.Legacy.random.schedule\n  cargo soak replay --minimize FILE\n  cargo soak replay --events run.ndjson --monitors FILE"
    )]
    Replay {
        /// The schedule file.
        file: PathBuf,
        /// Shrink the schedule first (fewer context switches, the same property broken),
        /// and write the shrunk one over the file.
        #[arg(long)]
        minimize: bool,
        /// Write the replayed execution's protocol events to this file as an event log
        /// (NDJSON, `docs/event-log.md`).
        #[arg(long, conflicts_with = "minimize")]
        events: Option<PathBuf>,
        /// Also run the event monitors over the replayed execution and print their
        /// verdicts.
        #[arg(long, conflicts_with = "minimize")]
        monitors: bool,
    },
    /// Check recorded event logs (NDJSON, `docs/event-log.md`), or upstream's own logs
    /// (`--format`), against the seeds' properties: each monitor's verdict (ok, VIOLATED,
    /// undecided) and, for a violation, the events that led to it. Exit 1 if a property is
    /// violated, 2 if a log cannot be read (its line is named).
    #[command(
        after_help = "Examples:\n  cargo soak check-log run.ndjson\n  cargo soak check-log --summary soak-events/\n  cargo soak check-log --format hdfs-namenode hadoop-hdfs-namenode-nn2.log\n  cargo soak check-log --merge ozone-scm:scm1.log ozone-datanode:dn1.log"
    )]
    CheckLog(CheckLogOptions),
    /// Write the trace of a log's datanode term-fencing steps (HDDS-17268) for TLA+ trace
    /// validation: one JSON object a line, the action and the specification variables it
    /// updates (docs/event-log.md). Exit 2 if the log cannot be read or a step lacks a
    /// value its action needs.
    #[command(
        after_help = "Examples:\n  cargo soak tla-trace run.ndjson --out trace.ndjson\n  cargo soak tla-trace --format ozone-datanode ozone-hadoop-datanode-dn1.log"
    )]
    TlaTrace(TlaTraceOptions),
    /// Replay a saved failing schedule and explain it: print its step table and write an
    /// HTML swimlane timeline of it (exit codes as `replay`).
    #[command(
        after_help = "Examples:\n  cargo soak explain soak-failures/heartbeat_term_fences_believing_old_leader.Legacy.random.schedule\n  cargo soak explain --html timeline.html FILE"
    )]
    Explain {
        /// The schedule file.
        file: PathBuf,
        /// Where to write the timeline (default: FILE.html, beside the schedule).
        #[arg(long)]
        html: Option<PathBuf>,
    },
    /// Explore every interleaving of a cluster case's protocol steps up to a depth,
    /// breadth first over the real components, each state once (its fingerprint) and one
    /// order of independent steps (partial-order reduction); the shortest counterexample
    /// of a caught case is saved for `replay`. Exit 1 when a case does not do as expected.
    #[command(
        after_help = "Examples:\n  cargo soak explore deletions_across --depth 12 --time 60\n  cargo soak explore --variant Legacy --depth 8 --json explore.json"
    )]
    Explore(ExploreOptions),
    /// List the scenarios, their variants and what each must do.
    #[command(after_help = "Example:\n  cargo soak list | grep cluster")]
    List,
    /// The scoreboard: every caught case under every shuttle engine from several seeds
    /// (docs/scoreboard.md), or, with --check, whether a committed board's catches hold.
    #[command(
        after_help = "Examples:\n  cargo soak board --seeds 5 --markdown docs/scoreboard.md --json docs/scoreboard.json\n  cargo soak board --check docs/scoreboard.json"
    )]
    Board(BoardOptions),
    /// One run, in a child process of `run` (not for direct use).
    #[command(hide = true)]
    RunOne(RunOne),
}

/// How a soak runs.
#[derive(Debug, Clone, Args)]
pub struct RunOptions {
    /// Most schedules per case and scheduler (default 20000; unbounded with --time
    /// alone). Alone, it bounds schedules only: `--iterations 20000` is the long soak.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub iterations: Option<u64>,
    /// Wall-time budget in seconds for the whole soak (default 100 when --iterations is
    /// not given either): legacy and sequential runs go first, each until its catch, and
    /// the fixed runs share what is left evenly; with --iterations, whichever ends first.
    #[arg(long)]
    pub time: Option<u64>,
    /// Which schedulers: random, pct or both.
    #[arg(long, default_value = "both", value_parser = ["random", "pct", "both"])]
    pub scheduler: String,
    /// PCT bug depth.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    pub pct_depth: u64,
    /// Scheduler seed (default: from the clock, printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Only cases whose scenario/variant contains this text.
    #[arg(long)]
    pub filter: Option<String>,
    /// Where failing schedules (and their stories) are written.
    #[arg(long, default_value = "soak-failures")]
    pub out: PathBuf,
    /// Runs at once, each in its own process (default: the number of cores).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// Only this shard of the runs, i/n: with the same seed the shards' runs together are
    /// the unsharded soak's.
    #[arg(long, default_value_t = Shard::ALL)]
    pub shard: Shard,
    /// Also write the table as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Keep each catch's schedule as found, without shrinking it.
    #[arg(long)]
    pub no_minimize: bool,
    /// Write event logs (NDJSON, `docs/event-log.md`) to this directory: each run's
    /// first --events-per-run executions (`SCENARIO.VARIANT.SCHEDULER.NNNNN.ndjson`),
    /// and each catch's execution, replayed from its saved schedule
    /// (`SCENARIO.VARIANT.SCHEDULER.catch.ndjson`).
    #[arg(long)]
    pub events: Option<PathBuf>,
    /// With --events, how many executions of each run are logged.
    #[arg(long, default_value_t = 1, requires = "events")]
    pub events_per_run: u64,
    /// Run the event monitors inline over every execution and report, per run, the
    /// properties they found violated and in how many executions (they do not change a
    /// run's result).
    #[arg(long)]
    pub monitors: bool,
    /// Do not count what the runs explored (distinct event sequences, racing pairs, the
    /// cases' race windows reached): to measure what counting costs.
    #[arg(long)]
    pub no_coverage: bool,
}

/// How `explore` searches.
#[derive(Debug, Clone, Args)]
pub struct ExploreOptions {
    /// The scenario (a part of its name is enough; every cluster case when none is given).
    pub case: Option<String>,
    /// Only this variant.
    #[arg(long)]
    pub variant: Option<String>,
    /// Most actions from the case's set-up.
    #[arg(long, default_value_t = 12)]
    pub depth: usize,
    /// Wall-time budget in seconds per case; the depth completed is reported.
    #[arg(long, default_value_t = 60)]
    pub time: u64,
    /// Without partial-order reduction (sleep sets).
    #[arg(long)]
    pub no_por: bool,
    /// Without state hashing: every path expanded (and no partial-order reduction).
    #[arg(long)]
    pub no_hashing: bool,
    /// Workers expanding a depth's states side by side (default: one per core).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Audit the fingerprints: two paths reaching one fingerprint must have one future
    /// (the same actions enabled, each leading to one fingerprint); an error otherwise.
    #[arg(long)]
    pub audit_fingerprints: bool,
    /// Where counterexamples are written (`SCENARIO.VARIANT.explore.actions`).
    #[arg(long, default_value = "soak-failures")]
    pub out: PathBuf,
    /// Also write the table as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the table into this board (`docs/scoreboard.md`): its section on the
    /// exhaustive exploration, between the section's markers, is replaced (or added at
    /// its end).
    #[arg(long)]
    pub board: Option<PathBuf>,
}

/// How `check-log` reads and reports.
#[derive(Debug, Clone, Args)]
pub struct CheckLogOptions {
    /// The logs; a directory stands for every `.ndjson` file in it (every `.log` file for
    /// an upstream format). `FORMAT:PATH` reads one file in another format than
    /// `--format` (to merge an SCM's log with a datanode's).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The logs' format: this crate's event log, or an upstream process's own log (an
    /// Ozone datanode's or SCM's, an HDFS NameNode's; docs/event-log.md lists the lines
    /// each maps and the log levels to enable).
    #[arg(long, default_value = "ndjson", value_parser = ["ndjson", "ozone-datanode", "ozone-scm", "hdfs-namenode"])]
    pub format: String,
    /// The process an upstream log is of (its events' node); default: from the file's
    /// name (`ozone-hadoop-datanode-dn1.log` → `dn1`). Only with one file.
    #[arg(long)]
    pub node: Option<String>,
    /// Judge the given upstream logs as one run, merged by their timestamps (the
    /// processes' clocks must agree): what one process's log cannot show, another's may.
    #[arg(long)]
    pub merge: bool,
    /// One line per log (its verdicts in short), no step tables: for many logs.
    #[arg(long)]
    pub summary: bool,
}

/// What `tla-trace` reads and writes.
#[derive(Debug, Clone, Args)]
pub struct TlaTraceOptions {
    /// The log: this crate's event log, or an Ozone datanode's own log (`--format`).
    pub file: PathBuf,
    /// The log's format.
    #[arg(long, default_value = "ndjson", value_parser = ["ndjson", "ozone-datanode"])]
    pub format: String,
    /// The datanode an upstream log is of; default: from the file's name.
    #[arg(long)]
    pub node: Option<String>,
    /// Where the trace goes (default: standard output).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

impl RunOptions {
    /// The schedulers asked for.
    pub fn schedulers(&self) -> Vec<SchedulerKind> {
        let depth = usize::try_from(self.pct_depth).unwrap_or(usize::MAX);
        match self.scheduler.as_str() {
            "random" => vec![SchedulerKind::Random],
            "pct" => vec![SchedulerKind::Pct { depth }],
            _ => vec![SchedulerKind::Random, SchedulerKind::Pct { depth }],
        }
    }
}

/// One run, as the parent hands it to a child process.
#[derive(Debug, Clone, Args)]
pub struct RunOne {
    /// The case's scenario.
    #[arg(long)]
    pub scenario: String,
    /// The case's variant.
    #[arg(long)]
    pub variant: String,
    /// The scheduler's label (`random`, `pct3`).
    #[arg(long)]
    pub scheduler: String,
    /// The run's seed.
    #[arg(long)]
    pub seed: u64,
    /// Most schedules.
    #[arg(long)]
    pub iterations: u64,
    /// Time budget in milliseconds.
    #[arg(long)]
    pub time_ms: Option<u64>,
    /// Where a failing schedule is written.
    #[arg(long)]
    pub out: PathBuf,
    /// Where the child reports its progress and its result (one JSON line each).
    #[arg(long)]
    pub status: PathBuf,
    /// Keep a catch's schedule as found, without shrinking it.
    #[arg(long)]
    pub no_minimize: bool,
    /// Where event logs are written, if they are.
    #[arg(long)]
    pub events: Option<PathBuf>,
    /// How many executions are logged.
    #[arg(long, default_value_t = 1)]
    pub events_per_run: u64,
    /// Run the event monitors inline.
    #[arg(long)]
    pub monitors: bool,
    /// Do not count coverage.
    #[arg(long)]
    pub no_coverage: bool,
}

/// How the scoreboard runs.
#[derive(Debug, Clone, Args)]
pub struct BoardOptions {
    /// Seeds per case and engine.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub seeds: u64,
    /// Most schedules a run explores before the case counts as not caught from its seed.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub iterations: u64,
    /// Most seconds a run takes before the case counts as not caught from its seed.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub time_per_run: u64,
    /// The board's seed: every run's seed derives from it and the run's place.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Runs at once, each in its own process (default: the number of cores).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// Only cases whose scenario/variant contains this text.
    #[arg(long)]
    pub filter: Option<String>,
    /// Write the board as Markdown to this file.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// Write the board as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Run again, from one seed, every engine this committed board (JSON) says catches a
    /// case from every seed, and exit 1 if one no longer catches it.
    #[arg(long)]
    pub check: Option<PathBuf>,
    /// The output of a loom run (`ci/loom`), for the board's loom column: the execution
    /// at which each case's loom model caught it.
    #[arg(long)]
    pub loom_log: Option<PathBuf>,
    /// The output of `board-production threaded`, for the board's column of real
    /// threads; with --check, the log of the CI's run of the cases it must catch.
    #[arg(long)]
    pub threaded_log: Option<PathBuf>,
    /// The output of `board-production proptest`, for the board's differential column;
    /// with --check, as --threaded-log.
    #[arg(long)]
    pub proptest_log: Option<PathBuf>,
    /// With --check: print the cases the committed board says this production engine
    /// (`threaded`, `proptest`) must catch in CI, one a line, and run nothing.
    #[arg(long, requires = "check")]
    pub list_checked: Option<String>,
}
