//! The soak tool: runs every scenario of the catalogue under shuttle for a number of
//! schedules or a time budget. Fixed variants must hold, legacy variants must be caught.
//! Prints progress on stderr and a table on stdout, writes each failing schedule to a
//! file, replays such a file, and exits non-zero when a fixed variant fails or a legacy
//! variant escapes.
//!
//! ```text
//! cargo soak                              # every case, random + PCT, 20 000 schedules each
//! cargo soak run --time 600 --filter leader_heartbeats  # ten minutes over the matching cases
//! cargo soak replay soak-failures/concurrent_leader_heartbeats_keep_the_highest_term.LegacyUnlockedTermUpdate.random.schedule
//! cargo soak list
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use hadoop_ref::check::catalogue::{self, Case, Expectation};
use hadoop_ref::check::shuttle::{
    ReplayOutcome, RunResult, RunSpec, SchedulerKind, replay_file, run_case,
};
use hadoop_ref::scenarios::rng::SeededRng;
use hadoop_ref::unmodelled::Stopwatch;

const USAGE: &str = "\
usage:
  soak [run] [options]   run the catalogue (the default command)
  soak replay FILE       replay a saved failing schedule (exit 1 if it fails again)
  soak list              list scenarios, variants and expectations

options of run:
  --iterations N    schedules per case and scheduler (default 20000)
  --time SECONDS    wall-time budget for the whole run, shared evenly by the runs;
                    with --iterations, whichever ends first
  --scheduler S     random, pct or both (default both)
  --pct-depth D     PCT bug depth (default 3)
  --seed S          scheduler seed (default: from the clock, printed)
  --filter TEXT     only cases whose scenario/variant contains TEXT
  --out DIR         where failing schedules are written (default soak-failures)";

/// Progress lines per run: a run is explored in this many chunks of fresh seeds.
const CHUNKS: usize = 10;

#[derive(Debug)]
struct Options {
    iterations: usize,
    time: Option<Duration>,
    schedulers: Vec<SchedulerKind>,
    seed: u64,
    filter: Option<String>,
    out: PathBuf,
}

enum Command {
    Run(Options),
    Replay(PathBuf),
    List,
    Help,
}

fn parse(args: &[String]) -> Result<Command, String> {
    let mut args = args.iter().peekable();
    match args.peek().map(|s| s.as_str()) {
        Some("replay") => {
            args.next();
            let file = args.next().ok_or("replay needs a FILE")?;
            if let Some(extra) = args.next() {
                return Err(format!("unexpected argument {extra:?}"));
            }
            return Ok(Command::Replay(PathBuf::from(file)));
        }
        Some("list") => return Ok(Command::List),
        Some("-h" | "--help" | "help") => return Ok(Command::Help),
        Some("run") => {
            args.next();
        }
        _ => {}
    }
    parse_run_options(args).map(Command::Run)
}

/// The flags of `run`, as given on the command line.
struct RunFlags {
    iterations: Option<usize>,
    scheduler: String,
    depth: usize,
}

fn parse_run_options<'a>(mut args: impl Iterator<Item = &'a String>) -> Result<Options, String> {
    let mut options = Options {
        iterations: 20_000,
        time: None,
        schedulers: Vec::new(),
        seed: hadoop_ref::sync::system_time_ms(),
        filter: None,
        out: PathBuf::from("soak-failures"),
    };
    let mut flags = RunFlags {
        iterations: None,
        scheduler: "both".to_owned(),
        depth: 3,
    };
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        parse_flag(flag, value, &mut options, &mut flags)?;
    }
    if flags.depth == 0 {
        return Err("--pct-depth must be at least 1".into());
    }
    options.iterations = match (flags.iterations, options.time) {
        (Some(0), _) => return Err("--iterations must be at least 1".into()),
        (Some(n), _) => n,
        (None, Some(_)) => usize::MAX,
        (None, None) => options.iterations,
    };
    options.schedulers = schedulers(&flags.scheduler, flags.depth)?;
    Ok(options)
}

fn parse_flag(
    flag: &str,
    value: &str,
    options: &mut Options,
    flags: &mut RunFlags,
) -> Result<(), String> {
    let number = || {
        value
            .parse::<u64>()
            .map_err(|_| format!("{flag} takes a whole number, not {value:?}"))
    };
    let size = || usize::try_from(number()?).map_err(|_| format!("{flag} is too large"));
    match flag {
        "--iterations" => flags.iterations = Some(size()?),
        "--time" => options.time = Some(Duration::from_secs(number()?)),
        "--scheduler" => flags.scheduler = value.to_owned(),
        "--pct-depth" => flags.depth = size()?,
        "--seed" => options.seed = number()?,
        "--filter" => options.filter = Some(value.to_owned()),
        "--out" => options.out = PathBuf::from(value),
        other => return Err(format!("unknown option {other:?}")),
    }
    Ok(())
}

fn schedulers(name: &str, depth: usize) -> Result<Vec<SchedulerKind>, String> {
    match name {
        "random" => Ok(vec![SchedulerKind::Random]),
        "pct" => Ok(vec![SchedulerKind::Pct { depth }]),
        "both" => Ok(vec![SchedulerKind::Random, SchedulerKind::Pct { depth }]),
        other => Err(format!("--scheduler is random, pct or both, not {other:?}")),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse(&args) {
        Ok(Command::Run(options)) => run(&options),
        Ok(Command::Replay(file)) => replay(&file),
        Ok(Command::List) => {
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
        Ok(Command::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("soak: {message}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn replay(file: &std::path::Path) -> ExitCode {
    match replay_file(file) {
        Ok(ReplayOutcome::Violation(violation)) => {
            println!("replayed {}: fails again: {violation}", file.display());
            ExitCode::FAILURE
        }
        Ok(ReplayOutcome::Clean) => {
            println!("replayed {}: the schedule runs clean now", file.display());
            ExitCode::SUCCESS
        }
        Ok(ReplayOutcome::OtherFailure(message)) => {
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

/// One row of the report.
struct Row {
    case: Case,
    scheduler: SchedulerKind,
    schedules: u64,
    elapsed: Duration,
    first_catch: Option<u64>,
    failure: Option<String>,
    schedule_file: Option<PathBuf>,
}

impl Row {
    /// A legacy defect this scheduler is documented not to reach (see
    /// `Case::pct_reaches` and `Case::random_reaches`).
    fn beyond_scheduler(&self) -> bool {
        match self.scheduler {
            SchedulerKind::Pct { .. } => !self.case.pct_reaches,
            SchedulerKind::Random => !self.case.random_reaches,
        }
    }

    fn ok(&self) -> bool {
        match self.case.expectation {
            Expectation::Holds => self.failure.is_none(),
            Expectation::Caught => self.failure.is_some() || self.beyond_scheduler(),
        }
    }

    fn result(&self) -> &'static str {
        match (self.case.expectation, self.failure.is_some()) {
            (Expectation::Holds, false) => "held",
            (Expectation::Holds, true) => "FAILED",
            (Expectation::Caught, true) => "caught",
            (Expectation::Caught, false) if self.beyond_scheduler() => "unreached",
            (Expectation::Caught, false) => "ESCAPED",
        }
    }
}

fn run(options: &Options) -> ExitCode {
    let cases: Vec<Case> = catalogue::all()
        .into_iter()
        .filter(|c| {
            options
                .filter
                .as_ref()
                .is_none_or(|f| c.id().contains(f.as_str()))
        })
        .collect();
    if cases.is_empty() {
        eprintln!("soak: no case matches the filter");
        return ExitCode::from(2);
    }
    if let Err(error) = std::fs::create_dir_all(&options.out) {
        eprintln!("soak: cannot create {}: {error}", options.out.display());
        return ExitCode::from(2);
    }
    let plan: Vec<(Case, SchedulerKind)> = cases
        .iter()
        .flat_map(|&case| schedulers_of(options, case).map(move |s| (case, s)))
        .collect();
    if plan.is_empty() {
        eprintln!(
            "soak: nothing to run (sequential scenarios run under the random scheduler only)"
        );
        return ExitCode::from(2);
    }
    let runs = plan.len();
    let share = options
        .time
        .map(|t| t / u32::try_from(runs).unwrap_or(u32::MAX));
    eprintln!(
        "soak: {runs} run(s), seed {}, {}",
        options.seed,
        budget(options, share)
    );
    let mut seeds = SeededRng::new(options.seed);
    let rows: Vec<Row> = plan
        .into_iter()
        .enumerate()
        .map(|(i, (case, scheduler))| {
            soak_one(options, case, scheduler, share, &mut seeds, (i + 1, runs))
        })
        .collect();
    print_table(&rows);
    report(&rows)
}

/// The schedulers `case` runs under: a sequential scenario has one schedule, and PCT
/// needs threads to prioritise.
fn schedulers_of(options: &Options, case: Case) -> impl Iterator<Item = SchedulerKind> + '_ {
    options
        .schedulers
        .iter()
        .copied()
        .filter(move |s| !(case.sequential && matches!(s, SchedulerKind::Pct { .. })))
}

fn budget(options: &Options, share: Option<Duration>) -> String {
    match (options.iterations, share) {
        (usize::MAX, Some(share)) => format!("{share:.1?} each"),
        (n, Some(share)) => format!("{n} schedules or {share:.1?} each"),
        (n, None) => format!("{n} schedules each"),
    }
}

fn report(rows: &[Row]) -> ExitCode {
    let runs = rows.len();
    let bad = rows.iter().filter(|r| !r.ok()).count();
    if bad == 0 {
        println!(
            "\nall {runs} run(s) as expected: fixed variants held, legacy variants caught \
             (`unreached`: beyond that scheduler within the bound, documented per case)"
        );
        ExitCode::SUCCESS
    } else {
        println!(
            "\n{bad} of {runs} run(s) NOT as expected (FAILED: a fixed variant broke; ESCAPED: a legacy defect went unseen)"
        );
        ExitCode::FAILURE
    }
}

fn soak_one(
    options: &Options,
    case: Case,
    scheduler: SchedulerKind,
    share: Option<Duration>,
    seeds: &mut SeededRng,
    (index, runs): (usize, usize),
) -> Row {
    let stopwatch = Stopwatch::start();
    // A sequential scenario runs the same steps every time: once is enough.
    let iterations = if case.sequential {
        1
    } else {
        options.iterations
    };
    let chunk_iterations = iterations.div_ceil(CHUNKS).max(1);
    let mut row = Row {
        case,
        scheduler,
        schedules: 0,
        elapsed: Duration::ZERO,
        first_catch: None,
        failure: None,
        schedule_file: None,
    };
    for chunk in 0..CHUNKS {
        let remaining_iterations = iterations.saturating_sub(row.schedules as usize);
        let remaining_time = share.map(|s| s.saturating_sub(stopwatch.elapsed()));
        if remaining_iterations == 0 || remaining_time.is_some_and(|t| t.is_zero()) {
            break;
        }
        let spec = RunSpec {
            scheduler,
            iterations: chunk_iterations.min(remaining_iterations),
            max_time: remaining_time.map(|t| t / u32::try_from(CHUNKS - chunk).unwrap_or(1)),
            seed: seeds.next_u64(),
            schedule_dir: Some(options.out.clone()),
        };
        let result: RunResult = run_case(case, &spec);
        row.schedules += result.iterations;
        if let Some(failure) = result.failure {
            row.first_catch = Some(row.schedules);
            row.failure = Some(failure);
            row.schedule_file = result.schedule_file;
        }
        eprintln!(
            "[{index}/{runs}] {} {}: {} schedules, {:.0}/s{}",
            case.id(),
            scheduler.label(),
            row.schedules,
            row.schedules as f64 / stopwatch.elapsed().as_secs_f64().max(1e-9),
            if row.failure.is_some() {
                ", failure found"
            } else {
                ""
            }
        );
        if row.failure.is_some() {
            break;
        }
    }
    row.elapsed = stopwatch.elapsed();
    row
}

fn print_table(rows: &[Row]) {
    // The scenario column is as wide as its longest name.
    let width = rows
        .iter()
        .map(|r| r.case.scenario.len())
        .max()
        .unwrap_or(0)
        .max("scenario".len());
    println!(
        "\n{:<width$} {:<36} {:<7} {:<7} {:>10} {:>10} {:<8} {:>11}",
        "scenario", "variant", "sched", "expect", "schedules", "sched/s", "result", "first catch"
    );
    for row in rows {
        println!(
            "{:<width$} {:<36} {:<7} {:<7} {:>10} {:>10.0} {:<8} {:>11}",
            row.case.scenario,
            row.case.variant,
            row.scheduler.label(),
            match row.case.expectation {
                Expectation::Holds => "hold",
                Expectation::Caught => "catch",
            },
            row.schedules,
            row.schedules as f64 / row.elapsed.as_secs_f64().max(1e-9),
            row.result(),
            row.first_catch.map_or("-".to_owned(), |n| n.to_string()),
        );
    }
    let failures: Vec<_> = rows.iter().filter(|r| r.failure.is_some()).collect();
    if !failures.is_empty() {
        println!("\nfailing schedules (replay with `cargo soak replay FILE`):");
        for row in failures {
            println!(
                "  {} [{}] {}: {}",
                row.case.id(),
                row.scheduler.label(),
                row.schedule_file
                    .as_ref()
                    .map_or("(not saved)".to_owned(), |p| p.display().to_string()),
                row.failure.as_deref().unwrap_or_default()
            );
        }
    }
}
