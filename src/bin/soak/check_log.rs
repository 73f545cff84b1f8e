//! `check-log`: the event monitors over recorded event logs (`docs/event-log.md`). Per
//! log, each monitor's verdict and, for a violation, the step table of the events that
//! led to it; with several logs, a tally per monitor.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use hadoop_ref::check::monitor::offline::{LogCheck, check_log, evidence_story};
use hadoop_ref::check::monitor::{Judgement, Verdict};
use hadoop_ref::unmodelled::Stopwatch;

use crate::cli::CheckLogOptions;

/// Checks every log `options` names; exit 2 if one cannot be read, else 1 if one breaks a
/// property, else 0.
pub fn check_logs(options: &CheckLogOptions) -> ExitCode {
    let files = match expand(&options.files) {
        Ok(files) => files,
        Err(error) => {
            eprintln!("soak check-log: {error}");
            return ExitCode::from(2);
        }
    };
    let stopwatch = Stopwatch::start();
    let mut tally = Tally::default();
    for file in &files {
        match check_log(file) {
            Ok(check) => {
                let violated = if options.summary {
                    print_summary(file, &check)
                } else {
                    print_check(file, &check)
                };
                tally.add(&check, violated);
            }
            Err(error) => {
                eprintln!("soak check-log: {error}");
                tally.unreadable += 1;
            }
        }
    }
    if files.len() > 1 || options.summary {
        tally.print(stopwatch.elapsed().as_secs_f64());
    }
    match (tally.unreadable, tally.violated) {
        (0, 0) => ExitCode::SUCCESS,
        (0, _) => ExitCode::FAILURE,
        _ => ExitCode::from(2),
    }
}

/// The files named, a directory standing for its `.ndjson` files (sorted).
fn expand(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(path)?
                .map(|entry| entry.map(|e| e.path()))
                .collect::<Result<_, _>>()?;
            inside.retain(|p| p.extension().is_some_and(|e| e == "ndjson"));
            inside.sort();
            files.extend(inside);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Prints every verdict of `check`, then each violation's step table; whether a property
/// was violated.
fn print_check(file: &Path, check: &LogCheck) -> bool {
    println!("{}: {} events", file.display(), check.events);
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
        match evidence_story(file, finding) {
            Ok(story) => print!("{}", story.ending_at(&finding.violation.to_string())),
            Err(error) => println!("(its events cannot be read again: {error})"),
        }
    }
    violated
}

/// Prints one line for `check`: the violated properties, and how many held or were
/// undecided; whether a property was violated.
fn print_summary(file: &Path, check: &LogCheck) -> bool {
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
        "{}: {} events, {} ok, {} undecided, VIOLATED [{}]",
        file.display(),
        check.events,
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
