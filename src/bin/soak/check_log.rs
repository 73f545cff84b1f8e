//! `check-log`: the event monitors over recorded logs, this crate's event logs
//! (`docs/event-log.md`) or upstream's own logs (`--format`). Per log (or per merged run),
//! each monitor's verdict and, for a violation, the step table of the events that led to
//! it; with several logs, a tally per monitor.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use hadoop_ref::check::monitor::offline::{LogCheck, LogChecker, LogSource, evidence_of_run};
use hadoop_ref::check::monitor::{Judgement, Verdict};
use hadoop_ref::story::LogFormat;
use hadoop_ref::unmodelled::Stopwatch;

use crate::cli::CheckLogOptions;

/// Checks every log `options` names; exit 2 if one cannot be read, else 1 if one breaks a
/// property, else 0.
pub fn check_logs(options: &CheckLogOptions) -> ExitCode {
    let sources = match sources(options) {
        Ok(sources) => sources,
        Err(error) => {
            eprintln!("soak check-log: {error}");
            return ExitCode::from(2);
        }
    };
    let runs: Vec<Vec<LogSource>> = if options.merge {
        vec![sources]
    } else {
        sources.into_iter().map(|s| vec![s]).collect()
    };
    let stopwatch = Stopwatch::start();
    let mut tally = Tally::default();
    let mut checker = LogChecker::default();
    for run in &runs {
        match checker.check_run(run) {
            Ok(check) => {
                let violated = if options.summary {
                    print_summary(run, &check)
                } else {
                    print_check(run, &check)
                };
                tally.add(&check, violated);
            }
            Err(error) => {
                eprintln!("soak check-log: {error}");
                tally.unreadable += 1;
            }
        }
    }
    if runs.len() > 1 || options.summary {
        tally.print(stopwatch.elapsed().as_secs_f64());
    }
    match (tally.unreadable, tally.violated) {
        (0, 0) => ExitCode::SUCCESS,
        (0, _) => ExitCode::FAILURE,
        _ => ExitCode::from(2),
    }
}

/// The logs named, each with its format and process.
fn sources(options: &CheckLogOptions) -> Result<Vec<LogSource>, String> {
    let default = LogFormat::from_name(&options.format)
        .ok_or_else(|| format!("unknown format {}", options.format))?;
    let mut sources = Vec::new();
    for arg in &options.files {
        let (format, path) = with_format(arg, default);
        for file in expand(&path, format).map_err(|e| format!("{}: {e}", path.display()))? {
            sources.push(LogSource::new(format, &file));
        }
    }
    if let Some(node) = &options.node {
        if sources.len() != 1 {
            return Err("--node names the process of one file".to_owned());
        }
        sources = sources.into_iter().map(|s| s.with_node(node)).collect();
    }
    if options.merge && sources.iter().any(|s| s.format == LogFormat::Ndjson) {
        return Err("--merge reads upstream logs (an event log is a whole run)".to_owned());
    }
    Ok(sources)
}

/// `FORMAT:PATH` → that format and path; anything else → `default` and the argument.
fn with_format(arg: &Path, default: LogFormat) -> (LogFormat, PathBuf) {
    if let Some((name, path)) = arg.to_str().and_then(|a| a.split_once(':')) {
        if let Some(format) = LogFormat::from_name(name) {
            return (format, PathBuf::from(path));
        }
    }
    (default, arg.to_owned())
}

/// The file named, or a directory's logs of `format` (sorted).
fn expand(path: &Path, format: LogFormat) -> std::io::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let mut inside: Vec<PathBuf> = std::fs::read_dir(path)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    inside.retain(|p| {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        match format {
            LogFormat::Ndjson => p.extension().is_some_and(|e| e == "ndjson"),
            LogFormat::Upstream(_) => name.is_some_and(|n| n.contains(".log")),
        }
    });
    // By their bytes: the files of one directory share their parent, and comparing
    // paths component by component costs more than the check of a small log.
    inside.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
    Ok(inside)
}

/// The run's name: its file, or its files.
fn title(run: &[LogSource]) -> String {
    let names: Vec<String> = run
        .iter()
        .map(|s| match s.format {
            LogFormat::Ndjson => s.path.display().to_string(),
            format => format!("{} ({format}, {})", s.path.display(), s.node),
        })
        .collect();
    names.join(" + ")
}

/// What was read: events, and for upstream logs the lines behind them.
fn read_line(check: &LogCheck) -> String {
    match check.lines {
        None => format!("{} events", check.events),
        Some(lines) => format!(
            "{} events from {} lines ({} of a statement mapped, {} skipped)",
            check.events,
            lines.lines,
            lines.matched,
            lines.skipped()
        ),
    }
}

/// Prints every verdict of `check`, then each violation's step table; whether a property
/// was violated.
fn print_check(run: &[LogSource], check: &LogCheck) -> bool {
    println!("{}: {}", title(run), read_line(check));
    for judgement in &check.judgements {
        println!("  {judgement}");
    }
    let mut violated = false;
    for judgement in &check.judgements {
        let Verdict::Violated(finding) = &judgement.verdict else {
            continue;
        };
        violated = true;
        println!();
        match evidence_of_run(run, finding) {
            Ok(story) => print!("{}", story.ending_at(&finding.violation.to_string())),
            Err(error) => println!("(its events cannot be read again: {error})"),
        }
    }
    violated
}

/// Prints one line for `check`: the violated properties, and how many held or were
/// undecided; whether a property was violated.
fn print_summary(run: &[LogSource], check: &LogCheck) -> bool {
    let violated: Vec<String> = check
        .judgements
        .iter()
        .filter(|j| matches!(j.verdict, Verdict::Violated(_)))
        .map(|j| format!("{}: {}", j.seed, j.property))
        .collect();
    let count = |word: &str| {
        check
            .judgements
            .iter()
            .filter(|j| j.verdict.word() == word)
            .count()
    };
    println!(
        "{}: {}, {} ok, {} undecided, VIOLATED [{}]",
        title(run),
        read_line(check),
        count("ok"),
        count("undecided"),
        violated.join("; ")
    );
    !violated.is_empty()
}

/// Verdicts per monitor over every log checked.
#[derive(Default)]
struct Tally {
    per_monitor: BTreeMap<(&'static str, &'static str), [usize; 3]>,
    logs: usize,
    events: usize,
    violated: usize,
    unreadable: usize,
}

impl Tally {
    fn add(&mut self, check: &LogCheck, violated: bool) {
        self.logs += 1;
        self.events += check.events;
        self.violated += usize::from(violated);
        for Judgement {
            seed,
            property,
            verdict,
        } in &check.judgements
        {
            let counts = self.per_monitor.entry((seed, property)).or_default();
            let slot = match verdict {
                Verdict::Ok { .. } => 0,
                Verdict::Violated(_) => 1,
                Verdict::Undecided { .. } => 2,
            };
            counts[slot] += 1;
        }
    }

    fn print(&self, seconds: f64) {
        println!(
            "\n{} log(s), {} events in {seconds:.2} s ({:.0} events/s): {} with a violation, {} unreadable",
            self.logs,
            self.events,
            self.events as f64 / seconds.max(1e-9),
            self.violated,
            self.unreadable
        );
        println!("{:>6} {:>9} {:>10}  monitor", "ok", "VIOLATED", "undecided");
        for ((seed, property), [ok, violated, undecided]) in &self.per_monitor {
            println!("{ok:>6} {violated:>9} {undecided:>10}  {seed}: {property}");
        }
    }
}
