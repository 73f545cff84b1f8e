//! The parent of a soak: plans the runs, keeps `--jobs` child processes busy with them,
//! shows their progress, and collects their rows.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Duration;

use hadoop_ref::check::catalogue::{self, Case, Expectation};
use hadoop_ref::check::plan::{PlannedRun, plan};
use hadoop_ref::unmodelled::{Stopwatch, available_cores, pause};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::cli::RunOptions;
use crate::report::{self, Row, RunStatus};

/// Most schedules per case and scheduler when --iterations is not given.
const DEFAULT_ITERATIONS: u64 = 20_000;
/// The wall-time budget of the whole soak, in seconds, when neither --iterations nor
/// --time is given: the default soak ends within two minutes on two cores, every case in
/// it (see `Budget`).
const DEFAULT_TIME_S: u64 = 100;
/// The least wall time a fixed run is given, even when the budget is spent.
const MIN_RUN_TIME: Duration = Duration::from_millis(200);
/// How often the parent looks for a child that has ended: many runs take milliseconds.
const POLL: Duration = Duration::from_millis(10);
/// The running children's progress is read every this many polls.
const PROGRESS_EVERY_POLLS: u32 = 10;
/// How often a progress line is printed when stderr is not a terminal.
const LINE_EVERY: Duration = Duration::from_secs(5);

/// Runs the soak `options` describe and prints its table; the exit code is the verdict.
pub fn soak(options: &RunOptions) -> ExitCode {
    let seed = options
        .seed
        .unwrap_or_else(hadoop_ref::sync::system_time_ms);
    let cases: Vec<Case> = catalogue::all()
        .into_iter()
        .filter(|c| {
            options
                .filter
                .as_ref()
                .is_none_or(|f| c.id().contains(f.as_str()))
        })
        .collect();
    let planned = plan(&cases, &options.schedulers(), seed);
    let total = planned.len();
    let runs = options.shard.select(planned);
    if runs.is_empty() {
        eprintln!(
            "soak: nothing to run (no case matches, or the shard is empty; sequential scenarios run under the random scheduler only)"
        );
        return ExitCode::from(2);
    }
    let work = std::env::temp_dir().join(format!("hadoop-ref-soak-{}", std::process::id()));
    for dir in [Some(&options.out), Some(&work), options.events.as_ref()]
        .into_iter()
        .flatten()
    {
        if let Err(error) = fs::create_dir_all(dir) {
            eprintln!("soak: cannot create {}: {error}", dir.display());
            return ExitCode::from(2);
        }
    }
    let jobs = options.jobs.map_or_else(available_cores, |j| {
        usize::try_from(j).unwrap_or(usize::MAX)
    });
    let budget = Budget::new(options);
    eprintln!(
        "soak: {} of {total} run(s) (shard {}), seed {seed}, {jobs} job(s), {}",
        runs.len(),
        options.shard,
        budget.describe()
    );
    let pool = Pool {
        out: options.out.clone(),
        work: work.clone(),
        jobs,
        budget,
        no_minimize: options.no_minimize,
        events: options
            .events
            .clone()
            .map(|dir| (dir, options.events_per_run)),
        monitors: options.monitors,
        coverage: !options.no_coverage,
    };
    let wall = Stopwatch::start();
    let rows = pool.run_all(runs);
    // Best effort: a leftover directory in the temporary directory is harmless.
    let _ = fs::remove_dir_all(&work);
    report::print_table(&rows);
    report::print_windows(&rows);
    report::print_monitors(&rows);
    report::print_totals(&rows, wall.elapsed());
    if let Some(path) = &options.json {
        if let Err(error) = report::write_json(&rows, path) {
            eprintln!("soak: cannot write {}: {error}", path.display());
            return ExitCode::from(2);
        }
    }
    report::verdict(&rows)
}

/// What the runs may spend: at most `iterations` schedules each and, when the soak has a
/// wall-time budget, a share of it.
///
/// With a budget, the runs that stop early go first: a legacy variant's run ends at its
/// catch and a sequential one after its one schedule, each bounded by `iterations` only
/// (a catch is never cut short by the clock). Then each fixed variant's run is given, when
/// it starts, an even share of what is left: the time left times the jobs, over the fixed
/// runs not yet started. So the whole soak ends near its budget, and the time the catches
/// did not need goes to the fixed runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    iterations: u64,
    total: Option<Duration>,
    /// A cap on every run's wall time, catches included (the scoreboard's), when there is
    /// no total.
    per_run: Option<Duration>,
}

impl Budget {
    /// The options' budget: `--iterations` alone bounds schedules only; `--time` (alone or
    /// with `--iterations`) bounds the whole soak's wall time too; neither is
    /// [`DEFAULT_TIME_S`] seconds and [`DEFAULT_ITERATIONS`] schedules.
    fn new(options: &RunOptions) -> Self {
        let total = match (options.iterations, options.time) {
            (_, Some(secs)) => Some(Duration::from_secs(secs)),
            (Some(_), None) => None,
            (None, None) => Some(Duration::from_secs(DEFAULT_TIME_S)),
        };
        let iterations = match (options.iterations, options.time) {
            (Some(n), _) => n,
            (None, Some(_)) => u64::MAX,
            (None, None) => DEFAULT_ITERATIONS,
        };
        Self {
            iterations,
            total,
            per_run: None,
        }
    }

    /// At most `iterations` schedules and `per_run` of wall time for every run, whatever
    /// it must do: the scoreboard's budget.
    pub(crate) fn per_run(iterations: u64, per_run: Duration) -> Self {
        Self {
            iterations,
            total: None,
            per_run: Some(per_run),
        }
    }

    fn describe(&self) -> String {
        let schedules = match self.iterations {
            u64::MAX => "unbounded schedules".to_owned(),
            n => format!("at most {n} schedules"),
        };
        match self.total {
            Some(t) => format!(
                "{schedules} a run, {:.0?} in all (legacy runs first, fixed runs share the rest)",
                t
            ),
            None => format!("{schedules} a run"),
        }
    }

    /// Whether `run` stops on its own early (a legacy variant at its catch, a sequential
    /// scenario after its one schedule) rather than spending its share of the budget. A
    /// legacy run whose scheduler is documented not to reach the defect may never catch:
    /// it takes a share like a fixed run, so `--time` alone (no schedule bound) ends.
    fn stops_early(run: &PlannedRun) -> bool {
        run.case.sequential
            || (run.case.expectation == Expectation::Caught && run.scheduler_reaches())
    }
}

pub(crate) struct Pool {
    pub(crate) out: PathBuf,
    pub(crate) work: PathBuf,
    pub(crate) jobs: usize,
    pub(crate) budget: Budget,
    pub(crate) no_minimize: bool,
    pub(crate) events: Option<(PathBuf, u64)>,
    pub(crate) monitors: bool,
    pub(crate) coverage: bool,
}

/// A run whose child process is working on it.
struct Running {
    run: PlannedRun,
    child: Child,
    status: PathBuf,
    log: PathBuf,
    /// Whether the child has exited, as of the last poll.
    exited: bool,
}

impl Pool {
    /// Runs every run, `jobs` at a time, and returns their rows in plan order. The longest
    /// runs start first, so that the short ones fill the cores at the end: a fixed variant
    /// runs every schedule, a legacy one stops at its catch, a sequential one has one.
    pub(crate) fn run_all(&self, mut runs: Vec<PlannedRun>) -> Vec<Row> {
        let mut progress = Progress::new(runs.len(), self.budget.iterations);
        if self.budget.total.is_some() {
            runs.sort_by_key(|run| (!Budget::stops_early(run), run.index));
        } else {
            runs.sort_by_key(|run| {
                let case = &run.case;
                (
                    case.sequential,
                    case.expectation == Expectation::Caught,
                    run.index,
                )
            });
        }
        let started = Stopwatch::start();
        let mut fixed_left = runs.iter().filter(|r| !Budget::stops_early(r)).count();
        let mut pending = runs.into_iter();
        let mut running: Vec<Running> = Vec::new();
        let mut rows = Vec::new();
        let mut polls: u32 = 0;
        loop {
            while running.len() < self.jobs {
                let Some(run) = pending.next() else { break };
                let time = self.time_for(&run, started.elapsed(), fixed_left);
                if !Budget::stops_early(&run) {
                    fixed_left -= 1;
                }
                match self.spawn(run, time) {
                    Ok(child) => {
                        progress.started(&child.run);
                        running.push(child);
                    }
                    Err(error) => rows.push(crashed(run, &format!("cannot start: {error}"))),
                }
            }
            if running.is_empty() {
                break;
            }
            for r in &mut running {
                r.exited = !matches!(r.child.try_wait(), Ok(None));
            }
            let (finished, still): (Vec<_>, Vec<_>) = running.into_iter().partition(|r| r.exited);
            running = still;
            for done in finished {
                let row = self.finish(done);
                progress.finished(&row);
                rows.push(row);
            }
            polls = polls.wrapping_add(1);
            if polls % PROGRESS_EVERY_POLLS == 0 {
                for r in &running {
                    progress.update(r.run.index, read_status(&r.status).schedules);
                }
            }
            pause(POLL);
        }
        progress.clear();
        rows.sort_by_key(|row| row.run.index);
        rows
    }

    /// The wall time `run` may take when it starts `elapsed` into the soak with
    /// `fixed_left` fixed runs not yet started (itself included): none for a run that
    /// stops early or a soak without a time budget, else an even share of what is left.
    /// A run that stops early with no schedule bound (`--time` alone) may still take the
    /// whole budget: a defect that escapes ends as ESCAPED instead of running for ever.
    fn time_for(&self, run: &PlannedRun, elapsed: Duration, fixed_left: usize) -> Option<Duration> {
        if self.budget.per_run.is_some() {
            return self.budget.per_run;
        }
        let total = self.budget.total?;
        if Budget::stops_early(run) {
            return (self.budget.iterations == u64::MAX).then_some(total);
        }
        let left = total.saturating_sub(elapsed);
        let jobs = u32::try_from(self.jobs.min(fixed_left.max(1))).unwrap_or(u32::MAX);
        let share = left * jobs / u32::try_from(fixed_left.max(1)).unwrap_or(u32::MAX);
        // A run always gets a moment: a soak past its budget still runs every case.
        Some(share.max(MIN_RUN_TIME))
    }

    fn spawn(&self, run: PlannedRun, time: Option<Duration>) -> std::io::Result<Running> {
        let status = self.work.join(format!("run-{}.json", run.index));
        let log = self.work.join(format!("run-{}.log", run.index));
        let output = File::create(&log)?;
        let mut command = Command::new(std::env::current_exe()?);
        command
            .arg("run-one")
            .args([
                "--scenario",
                run.case.scenario,
                "--variant",
                run.case.variant,
            ])
            .args(["--scheduler", &run.scheduler.label()])
            .args(["--seed", &run.seed.to_string()])
            .args(["--iterations", &self.iterations_of(&run).to_string()])
            .arg("--out")
            .arg(&self.out)
            .arg("--status")
            .arg(&status)
            .stdin(Stdio::null())
            .stdout(Stdio::from(output.try_clone()?))
            .stderr(Stdio::from(output));
        if self.no_minimize {
            command.arg("--no-minimize");
        }
        if let Some((dir, per_run)) = &self.events {
            command
                .arg("--events")
                .arg(dir)
                .args(["--events-per-run", &per_run.to_string()]);
        }
        if self.monitors {
            command.arg("--monitors");
        }
        if !self.coverage {
            command.arg("--no-coverage");
        }
        if let Some(time) = time {
            command.args(["--time-ms", &time.as_millis().to_string()]);
        }
        let child = command.spawn()?;
        Ok(Running {
            run,
            child,
            status,
            log,
            exited: false,
        })
    }

    /// A sequential scenario runs the same steps every time: once is enough.
    fn iterations_of(&self, run: &PlannedRun) -> u64 {
        if run.case.sequential {
            1
        } else {
            self.budget.iterations
        }
    }

    /// The row of a run whose child exited (it wrote its story beside its schedule).
    fn finish(&self, mut done: Running) -> Row {
        let exit = done.child.wait();
        let status = read_status(&done.status);
        if !status.done {
            let log = fs::read_to_string(&done.log).unwrap_or_default();
            // An unexpected end: show what the child said.
            eprintln!(
                "soak: run {} ended without a result ({exit:?}):\n{log}",
                done.run.case.id()
            );
            return crashed(
                done.run,
                &format!("the run's process ended without a result ({exit:?})"),
            );
        }
        Row {
            run: done.run,
            status,
        }
    }
}

fn read_status(path: &Path) -> RunStatus {
    fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn crashed(run: PlannedRun, why: &str) -> Row {
    Row {
        run,
        status: RunStatus {
            failure: Some(why.to_owned()),
            done: true,
            ..RunStatus::default()
        },
    }
}

/// Progress on stderr: a bar per running run on a terminal, else a line every few seconds.
enum Progress {
    Bars {
        multi: MultiProgress,
        overall: ProgressBar,
        runs: BTreeMap<usize, ProgressBar>,
        iterations: u64,
    },
    Lines {
        total: usize,
        done: usize,
        running: BTreeMap<usize, (String, u64)>,
        since: Stopwatch,
    },
}

impl Progress {
    fn new(total: usize, iterations: u64) -> Self {
        if !std::io::stderr().is_terminal() {
            return Progress::Lines {
                total,
                done: 0,
                running: BTreeMap::new(),
                since: Stopwatch::start(),
            };
        }
        let multi = MultiProgress::new();
        let overall = multi.add(ProgressBar::new(total as u64));
        overall.set_style(
            ProgressStyle::with_template("{prefix:>6} [{bar:30}] {pos}/{len} runs, {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        overall.set_prefix("soak");
        Progress::Bars {
            multi,
            overall,
            runs: BTreeMap::new(),
            iterations,
        }
    }

    fn started(&mut self, run: &PlannedRun) {
        let label = format!("{} [{}]", run.case.id(), run.scheduler.label());
        match self {
            Progress::Bars {
                multi,
                runs,
                iterations,
                ..
            } => {
                let length = if run.case.sequential { 1 } else { *iterations };
                let bar = multi.add(ProgressBar::new(length));
                bar.set_style(
                    ProgressStyle::with_template("  [{bar:30}] {pos:>8} {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                bar.set_message(label);
                runs.insert(run.index, bar);
            }
            Progress::Lines { running, .. } => {
                running.insert(run.index, (label, 0));
            }
        }
    }

    fn update(&mut self, index: usize, schedules: u64) {
        match self {
            Progress::Bars { runs, .. } => {
                if let Some(bar) = runs.get(&index) {
                    bar.set_position(schedules);
                }
            }
            Progress::Lines {
                total,
                done,
                running,
                since,
            } => {
                if let Some(entry) = running.get_mut(&index) {
                    entry.1 = schedules;
                }
                if since.elapsed() >= LINE_EVERY {
                    let now: Vec<String> =
                        running.values().map(|(l, n)| format!("{l} {n}")).collect();
                    eprintln!(
                        "soak: {done}/{total} runs done; running: {}",
                        now.join(", ")
                    );
                    *since = Stopwatch::start();
                }
            }
        }
    }

    fn finished(&mut self, row: &Row) {
        match self {
            Progress::Bars { overall, runs, .. } => {
                if let Some(bar) = runs.remove(&row.run.index) {
                    bar.finish_and_clear();
                }
                overall.inc(1);
            }
            Progress::Lines { done, running, .. } => {
                running.remove(&row.run.index);
                *done += 1;
            }
        }
    }

    fn clear(&self) {
        if let Progress::Bars { overall, .. } = self {
            overall.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use hadoop_ref::check::catalogue::{self, Expectation};
    use hadoop_ref::check::plan::{PlannedRun, SchedulerKind};

    use super::Budget;

    fn run_of(scheduler: SchedulerKind, pick: impl Fn(&catalogue::Case) -> bool) -> PlannedRun {
        let case = catalogue::all()
            .into_iter()
            .find(|c| pick(c))
            .expect("the catalogue has such a case");
        PlannedRun {
            index: 0,
            case,
            scheduler,
            seed: 1,
        }
    }

    #[test]
    fn a_legacy_run_its_scheduler_cannot_reach_shares_the_time_budget() {
        let pct = SchedulerKind::Pct { depth: 3 };
        let unreached = run_of(pct, |c| {
            c.expectation == Expectation::Caught && !c.pct_reaches
        });
        let reached = run_of(pct, |c| {
            c.expectation == Expectation::Caught && c.pct_reaches && !c.sequential
        });
        assert!(!Budget::stops_early(&unreached));
        assert!(Budget::stops_early(&reached));
    }
}
