//! What a run reports, and the soak's table (on stdout, and as JSON for CI).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use hadoop_ref::check::catalogue::Expectation;
use hadoop_ref::check::exploration::CoverageSummary;
use hadoop_ref::check::plan::PlannedRun;
use serde::{Deserialize, Serialize};

/// A run's state, as its child process writes it to its status file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunStatus {
    /// Schedules explored so far.
    pub schedules: u64,
    /// Wall time so far, in milliseconds.
    pub elapsed_ms: u64,
    /// The first failure (a violation or another panic).
    pub failure: Option<String>,
    /// Where its schedule was saved.
    pub schedule_file: Option<PathBuf>,
    /// How the catch's schedule was shrunk, when it was.
    pub shrink: Option<Shrink>,
    /// Whether the run is over.
    pub done: bool,
    /// Executions the event monitors judged inline (`--monitors`).
    #[serde(default)]
    pub monitored: u64,
    /// Of those, the executions whose event sequence an earlier execution of the run
    /// had: judged by remembering its verdicts.
    #[serde(default)]
    pub monitored_repeats: u64,
    /// Per property (`SEED: property`), the executions an event monitor found it
    /// violated in.
    #[serde(default)]
    pub monitor_violations: BTreeMap<String, u64>,
    /// Event logs written (`--events`).
    #[serde(default)]
    pub event_logs: usize,
    /// What the run explored (absent with `--no-coverage`).
    #[serde(default)]
    pub coverage: Option<CoverageStatus>,
}

/// What a run explored (`check::exploration`): distinct event sequences, distinct ordered
/// pairs of racing event kinds, and the executions that reached each of its case's race
/// windows.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CoverageStatus {
    /// Executions counted.
    pub executions: u64,
    /// Distinct sequences of (node, event kind).
    pub sequences: u64,
    /// Distinct ordered pairs of event kinds that followed each other on different threads.
    pub racing_pairs: u64,
    /// New sequences past the bound kept, not counted in `sequences`.
    #[serde(default)]
    pub overflow: u64,
    /// The case's race windows.
    pub windows: Vec<WindowStatus>,
}

/// A race window and the executions of a run that reached it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct WindowStatus {
    /// The seed's key.
    pub seed: String,
    /// The window, in the seed's terms.
    pub name: String,
    /// Executions that reached it.
    pub reached: u64,
}

impl From<&CoverageSummary> for CoverageStatus {
    fn from(summary: &CoverageSummary) -> Self {
        Self {
            executions: summary.executions,
            sequences: summary.sequences,
            racing_pairs: summary.racing_pairs,
            overflow: summary.overflow,
            windows: summary
                .windows
                .iter()
                .map(|w| WindowStatus {
                    seed: w.seed.to_owned(),
                    name: w.name.to_owned(),
                    reached: w.reached,
                })
                .collect(),
        }
    }
}

impl CoverageStatus {
    /// `reached/declared` windows, `-` when the case declares none.
    fn windows_cell(&self) -> String {
        if self.windows.is_empty() {
            return "-".to_owned();
        }
        let reached = self.windows.iter().filter(|w| w.reached > 0).count();
        format!("{reached}/{}", self.windows.len())
    }
}

/// A catch's schedule before and after minimization.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Shrink {
    /// Steps (scheduling decisions and random draws) as found.
    pub steps_before: usize,
    /// Steps after shrinking.
    pub steps_after: usize,
    /// Context switches as found.
    pub switches_before: usize,
    /// Context switches after shrinking.
    pub switches_after: usize,
}

impl std::fmt::Display for Shrink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} -> {} steps, {} -> {} switches",
            self.steps_before, self.steps_after, self.switches_before, self.switches_after
        )
    }
}

/// One row of the report: a planned run and how it ended.
#[derive(Debug, Clone)]
pub struct Row {
    /// The run.
    pub run: PlannedRun,
    /// How it ended.
    pub status: RunStatus,
}

impl Row {
    /// A legacy defect this scheduler is documented not to reach (`Case::pct_reaches`,
    /// `Case::random_reaches`).
    fn beyond_scheduler(&self) -> bool {
        !self.run.scheduler_reaches()
    }

    /// Whether the run did what its case must do.
    pub fn ok(&self) -> bool {
        match self.run.case.expectation {
            Expectation::Holds => self.status.failure.is_none(),
            Expectation::Caught => self.status.failure.is_some() || self.beyond_scheduler(),
        }
    }

    fn result(&self) -> &'static str {
        match (self.run.case.expectation, self.status.failure.is_some()) {
            (Expectation::Holds, false) => "held",
            (Expectation::Holds, true) => "FAILED",
            (Expectation::Caught, true) => "caught",
            (Expectation::Caught, false) if self.beyond_scheduler() => "unreached",
            (Expectation::Caught, false) => "ESCAPED",
        }
    }

    fn rate_per_s(&self) -> f64 {
        let elapsed = Duration::from_millis(self.status.elapsed_ms).as_secs_f64();
        self.status.schedules as f64 / elapsed.max(1e-3)
    }

    fn first_catch(&self) -> Option<u64> {
        self.status.failure.as_ref().map(|_| self.status.schedules)
    }
}

/// Prints the soak's totals under the table: its runs, the schedules they explored and
/// the wall time the whole soak took.
pub fn print_totals(rows: &[Row], wall: Duration) {
    let schedules: u64 = rows.iter().map(|r| r.status.schedules).sum();
    println!(
        "\n{} run(s), {schedules} schedule(s) in {:.1} s of wall time",
        rows.len(),
        wall.as_secs_f64()
    );
}

/// Prints the table, then the failing schedules.
pub fn print_table(rows: &[Row]) {
    // The scenario column is as wide as its longest name.
    let width = rows
        .iter()
        .map(|r| r.run.case.scenario.len())
        .max()
        .unwrap_or(0)
        .max("scenario".len());
    println!(
        "\n{:<width$} {:<36} {:<7} {:<7} {:>10} {:>10} {:<8} {:>11} {:>8} {:>6} {:>7}",
        "scenario",
        "variant",
        "sched",
        "expect",
        "schedules",
        "sched/s",
        "result",
        "first catch",
        "seqs",
        "pairs",
        "windows"
    );
    for row in rows {
        let coverage = row.status.coverage.as_ref();
        println!(
            "{:<width$} {:<36} {:<7} {:<7} {:>10} {:>10.0} {:<8} {:>11} {:>8} {:>6} {:>7}",
            row.run.case.scenario,
            row.run.case.variant,
            row.run.scheduler.label(),
            expectation(row.run.case.expectation),
            row.status.schedules,
            row.rate_per_s(),
            row.result(),
            row.first_catch().map_or("-".to_owned(), |n| n.to_string()),
            coverage.map_or("-".to_owned(), |c| c.sequences.to_string()),
            coverage.map_or("-".to_owned(), |c| c.racing_pairs.to_string()),
            coverage.map_or("-".to_owned(), CoverageStatus::windows_cell),
        );
    }
    let failures: Vec<_> = rows.iter().filter(|r| r.status.failure.is_some()).collect();
    if !failures.is_empty() {
        println!(
            "\nfailing schedules (replay with `cargo soak replay FILE`; the story is in FILE.story):"
        );
        for row in failures {
            println!(
                "  {} [{}] {}: {}",
                row.run.case.id(),
                row.run.scheduler.label(),
                row.status
                    .schedule_file
                    .as_ref()
                    .map_or("(not saved)".to_owned(), |p| p.display().to_string()),
                row.status.failure.as_deref().unwrap_or_default()
            );
            if let Some(shrink) = row.status.shrink {
                println!("      minimized: {shrink}");
            }
        }
    }
}

/// Prints, per run with race windows, how many executions reached each (`seqs`, `pairs`
/// and `windows` in the table are its totals); a window a fixed variant's run never
/// reached is flagged: the run proves nothing about it.
pub fn print_windows(rows: &[Row]) {
    let with_windows: Vec<_> = rows
        .iter()
        .filter_map(|r| Some((r, r.status.coverage.as_ref()?)))
        .filter(|(_, c)| !c.windows.is_empty())
        .collect();
    if with_windows.is_empty() {
        return;
    }
    println!("\nrace windows reached (executions that reached each, of those run):");
    let mut unreached = 0;
    for (row, coverage) in with_windows {
        println!(
            "  {} [{}] ({}):",
            row.run.case.id(),
            row.run.scheduler.label(),
            expectation(row.run.case.expectation)
        );
        for window in &coverage.windows {
            let flag = if window.reached > 0 {
                ""
            } else if row.run.case.expectation == Expectation::Holds {
                unreached += 1;
                "  NOT REACHED"
            } else {
                "  not reached"
            };
            println!(
                "    {}: {}: {} of {}{flag}",
                window.seed, window.name, window.reached, coverage.executions
            );
        }
    }
    if unreached > 0 {
        println!(
            "  {unreached} window(s) never reached by a fixed variant's run: it proves nothing about them"
        );
    }
}

/// Prints what the inline event monitors found (`--monitors`): each run in which a
/// monitor judged a property violated, with how many of its executions. The monitors do
/// not decide a run's result: a fixed variant may break, by design, a property its
/// scenario does not claim (the seed's patch and HDDS-17268's restart window).
pub fn print_monitors(rows: &[Row]) {
    let monitored: u64 = rows.iter().map(|r| r.status.monitored).sum();
    if monitored == 0 {
        return;
    }
    let repeats: u64 = rows.iter().map(|r| r.status.monitored_repeats).sum();
    let flagged: Vec<_> = rows
        .iter()
        .filter(|r| !r.status.monitor_violations.is_empty())
        .collect();
    println!(
        "
event monitors, inline over {monitored} execution(s) ({repeats} of them a repeat of a sequence judged before): {} of {} run(s) with a property violated",
        flagged.len(),
        rows.len()
    );
    for row in flagged {
        for (property, count) in &row.status.monitor_violations {
            println!(
                "  {} [{}] ({}): {property} in {count} of {} execution(s)",
                row.run.case.id(),
                row.run.scheduler.label(),
                expectation(row.run.case.expectation),
                row.status.monitored
            );
        }
    }
}

fn expectation(expectation: Expectation) -> &'static str {
    match expectation {
        Expectation::Holds => "hold",
        Expectation::Caught => "catch",
    }
}

/// One row of the JSON report.
#[derive(Debug, Serialize)]
struct JsonRow<'a> {
    index: usize,
    scenario: &'a str,
    variant: &'a str,
    scheduler: String,
    seed: u64,
    expectation: &'static str,
    schedules: u64,
    elapsed_ms: u64,
    result: &'static str,
    first_catch: Option<u64>,
    failure: Option<&'a str>,
    schedule_file: Option<&'a Path>,
    shrink: Option<Shrink>,
    monitored: u64,
    monitor_violations: &'a BTreeMap<String, u64>,
    event_logs: usize,
    coverage: Option<&'a CoverageStatus>,
}

/// Writes the table as a JSON array, one object per run, in plan order.
pub fn write_json(rows: &[Row], path: &Path) -> std::io::Result<()> {
    let json: Vec<JsonRow<'_>> = rows
        .iter()
        .map(|row| JsonRow {
            index: row.run.index,
            scenario: row.run.case.scenario,
            variant: row.run.case.variant,
            scheduler: row.run.scheduler.label(),
            seed: row.run.seed,
            expectation: expectation(row.run.case.expectation),
            schedules: row.status.schedules,
            elapsed_ms: row.status.elapsed_ms,
            result: row.result(),
            first_catch: row.first_catch(),
            failure: row.status.failure.as_deref(),
            schedule_file: row.status.schedule_file.as_deref(),
            shrink: row.status.shrink,
            monitored: row.status.monitored,
            monitor_violations: &row.status.monitor_violations,
            event_logs: row.status.event_logs,
            coverage: row.status.coverage.as_ref(),
        })
        .collect();
    let text = serde_json::to_string_pretty(&json).map_err(std::io::Error::other)?;
    std::fs::write(path, text + "\n")
}

/// The soak's verdict: success only if every run did what its case must do.
pub fn verdict(rows: &[Row]) -> ExitCode {
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

#[cfg(test)]
mod tests {
    use hadoop_ref::check::catalogue;
    use hadoop_ref::check::plan::{PlannedRun, SchedulerKind};

    use super::{CoverageStatus, Row, RunStatus, WindowStatus, write_json};

    #[test]
    fn the_json_report_carries_the_coverage_of_each_run() {
        let case = catalogue::all()
            .into_iter()
            .find(|c| !c.windows.is_empty())
            .expect("a case with race windows");
        let coverage = CoverageStatus {
            executions: 10,
            sequences: 4,
            racing_pairs: 7,
            overflow: 0,
            windows: vec![WindowStatus {
                seed: case.windows[0].seed.to_owned(),
                name: case.windows[0].name.to_owned(),
                reached: 3,
            }],
        };
        let row = Row {
            run: PlannedRun {
                index: 0,
                case,
                scheduler: SchedulerKind::Random,
                seed: 1,
            },
            status: RunStatus {
                schedules: 10,
                done: true,
                coverage: Some(coverage),
                ..RunStatus::default()
            },
        };
        let path = std::env::temp_dir().join(format!("soak-json-{}.json", std::process::id()));
        write_json(&[row], &path).expect("the report is written");
        let text = std::fs::read_to_string(&path).expect("the report is read");
        let _ = std::fs::remove_file(&path);
        let json: serde_json::Value = serde_json::from_str(&text).expect("the report is JSON");
        let coverage = &json[0]["coverage"];
        assert_eq!(coverage["executions"], 10);
        assert_eq!(coverage["sequences"], 4);
        assert_eq!(coverage["racing_pairs"], 7);
        assert_eq!(coverage["windows"][0]["seed"], case.windows[0].seed);
        assert_eq!(coverage["windows"][0]["name"], case.windows[0].name);
        assert_eq!(coverage["windows"][0]["reached"], 3);
    }
}
