//! `cargo soak board`: how strong each engine is on the catalogue's defects.
//!
//! Every caught case runs under every engine (uniform random, PCT at bug depths 2 and 3,
//! the uniform random walk) from several seeds, each run until its first catch, its
//! schedule bound or its time bound; the board is, per case and engine, how many seeds
//! caught it and the median schedules and seconds to the first catch, with the context
//! switches of the case's committed (shrunk) failing schedule. Columns of other builds come
//! from their logs: loom's (`--loom-log`), real threads' and proptest's
//! (`--threaded-log`, `--proptest-log`, from `board-production`: see `board_logs`).
//! `--markdown` and `--json` write it (`docs/scoreboard.md`, `docs/scoreboard.json`);
//! `--check FILE`, for CI, runs once more, from one seed, every engine that a committed
//! board says caught its case from every seed, reads the production engines' logs of the
//! cases they must catch (`--list-checked`), and fails on one that no longer catches it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use hadoop_ref::check::catalogue::{self, Case, Expectation, defect_of};

use crate::board_summary;
use hadoop_ref::check::plan::{PlannedRun, SchedulerKind};
use hadoop_ref::check::shuttle::{context_switches, schedule_file};
use hadoop_ref::scenarios::rng::SeededRng;
use hadoop_ref::unmodelled::{Stopwatch, available_cores};

use crate::board_logs;
use crate::board_row::{BoardRow, Cell, median};
use crate::cli::BoardOptions;
use crate::pool::{Budget, Pool};
use crate::report::Row;

/// The engines of the board, in its column order.
const ENGINES: [SchedulerKind; 4] = [
    SchedulerKind::Random,
    SchedulerKind::Pct { depth: 2 },
    SchedulerKind::Pct { depth: 3 },
    SchedulerKind::Urw,
];

/// Where the committed failing schedules are, for their context switches.
const SCHEDULES: &str = "shuttle-tests/schedules";

/// The loom models that catch a catalogue case's defect: the model's label as its test
/// prints it (`loom <label>: N iteration(s) in T, caught: …`) and the case.
const LOOM_MODELS: [(&str, &str); 24] = [
    (
        "minority-after-restart/LegacyNoTermFence",
        "restarted_datanode_waits_for_a_majority/LegacyNoTermFence",
    ),
    (
        "queued-ahead/LegacyTermOnPoll",
        "stale_command_queued_ahead_of_a_newer_one/LegacyTermOnPoll",
    ),
    (
        "scan-during-block-deletion/LegacyRecheckWithoutLock",
        "scan_during_block_deletion/LegacyRecheckWithoutLock",
    ),
    (
        "stale-leader-believing/Legacy",
        "heartbeat_term_fences_believing_old_leader/Legacy",
    ),
    (
        "stale-leader-believing/LegacyIgnoreHeartbeatTermBeforeInit",
        "heartbeat_term_fences_believing_old_leader/LegacyIgnoreHeartbeatTermBeforeInit",
    ),
    (
        "stale-leader-believing/LegacyNoTermFence",
        "heartbeat_term_fences_believing_old_leader/LegacyNoTermFence",
    ),
    (
        "stale-leader-believing/LegacyTermFromCommandsOnly",
        "heartbeat_term_fences_believing_old_leader/LegacyTermFromCommandsOnly",
    ),
    (
        "concurrent-leader-heartbeats/Legacy",
        "concurrent_leader_heartbeats_keep_the_highest_term/Legacy",
    ),
    (
        "concurrent-leader-heartbeats/LegacyUnlockedTermUpdate",
        "concurrent_leader_heartbeats_keep_the_highest_term/LegacyUnlockedTermUpdate",
    ),
    (
        "deposed-leader-after-restart/SeedPatch",
        "deposed_leader_command_after_restart/SeedPatch",
    ),
    (
        "stale-force-delete-during-repair/LegacyIgnoreHeartbeatTermBeforeInit",
        "stale_force_delete_during_repair/LegacyIgnoreHeartbeatTermBeforeInit",
    ),
    (
        "mini-cluster/deposed-leaders-force-delete/LegacyIgnoreHeartbeatTermBeforeInit",
        "deposed_leaders_force_delete_through_the_cluster/LegacyIgnoreHeartbeatTermBeforeInit",
    ),
    ("delete-during-repair/Legacy", "delete_during_repair/Legacy"),
    (
        "delete-during-partial-repair/Legacy",
        "delete_during_partial_repair/Legacy",
    ),
    (
        "concurrent-reconciliations/SeedPatch, around the handler",
        "concurrent_reconciliations_unguarded/SeedPatch",
    ),
    (
        "concurrent-reconciliations/Hardened, cleanup under the read lock",
        "concurrent_reconciliations_unguarded/HardenedCleanupUnderReadLock",
    ),
    (
        "data-checksum-follows-concurrent-tree-writes/SeedPatch",
        "data_checksum_follows_concurrent_tree_writes/SeedPatch",
    ),
    (
        "allocation-waits-for-rebuild/LegacyRebuildWithoutGate",
        "allocation_waits_for_the_rebuild/LegacyRebuildWithoutGate",
    ),
    (
        "rebuild-across-reelection/SeedPatch",
        "rebuild_sees_allocation_committed_across_reelection/SeedPatch",
    ),
    (
        "space-check-sees-created-container/SeedPatch",
        "space_check_sees_created_container/SeedPatch",
    ),
    (
        "reregistration-during-allocation/SeedPatch",
        "reregistration_during_allocation_keeps_the_slot/SeedPatch",
    ),
    (
        "rbw-race/LegacyWholeMessageQueue",
        "rbw_report_races_completion/LegacyWholeMessageQueue",
    ),
    (
        "rbw-race/LegacyNoStaleEntryPurge",
        "rbw_report_races_completion/LegacyNoStaleEntryPurge",
    ),
    (
        "split-batch/LegacyNoImpendingGenstamp",
        "replica_reported_between_split_batches_is_recorded/LegacyNoImpendingGenstamp",
    ),
];

/// The loom model whose bound is not exhaustive, and its bound (its module says why).
const LOOM_BOUNDED: (&str, &str) = ("mini-cluster/", "bounded(2)");

/// The loom column from a loom run's output (`ci/loom`'s): for each case with a model,
/// the execution that caught it.
fn loom_column(log: &str) -> BTreeMap<&'static str, String> {
    let mut column = BTreeMap::new();
    for line in log.lines() {
        let Some(rest) = line.split("loom ").nth(1) else {
            continue;
        };
        let Some((label, outcome)) = rest.split_once(": ") else {
            continue;
        };
        let Some((&(_, case), iterations)) = LOOM_MODELS
            .iter()
            .find(|(model, _)| *model == label)
            .zip(outcome.split(' ').next())
        else {
            continue;
        };
        if !outcome.contains("caught") {
            continue;
        }
        let bound = if label.starts_with(LOOM_BOUNDED.0) {
            LOOM_BOUNDED.1
        } else {
            "exhaustive"
        };
        column.insert(case, format!("caught at {iterations} · {bound}"));
    }
    column
}

/// Runs the board `options` describe; the exit code is the check's verdict in `--check`
/// mode, else whether the board could be run and written.
pub fn board(options: &BoardOptions) -> ExitCode {
    let committed = match options.check.as_deref().map(read_board).transpose() {
        Ok(committed) => committed,
        Err(error) => {
            eprintln!("soak board: {error}");
            return ExitCode::from(2);
        }
    };
    if let (Some(engine), Some(committed)) = (&options.list_checked, &committed) {
        for case in board_logs::checked_cases(committed, engine) {
            println!("{case}");
        }
        return ExitCode::SUCCESS;
    }
    let cases: Vec<Case> = catalogue::all()
        .into_iter()
        .filter(|c| c.expectation == Expectation::Caught)
        .filter(|c| {
            options
                .filter
                .as_ref()
                .is_none_or(|f| c.id().contains(f.as_str()))
        })
        .collect();
    let runs = plan_board(&cases, committed.as_deref(), options);
    eprintln!(
        "soak board: {} run(s) over {} case(s)",
        runs.len(),
        cases.len()
    );
    let stopwatch = Stopwatch::start();
    let rows = match run(runs, options) {
        Ok(rows) => rows,
        Err(error) => {
            eprintln!("soak board: {error}");
            return ExitCode::from(2);
        }
    };
    let mut board = tabulate(&cases, &rows);
    if let Some(path) = &options.loom_log {
        match fs::read_to_string(path) {
            Ok(log) => {
                let column = loom_column(&log);
                for row in &mut board {
                    row.loom = column.get(row.case.as_str()).cloned();
                }
            }
            Err(error) => {
                eprintln!("soak board: cannot read {}: {error}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    for (engine, path) in board_logs::ENGINES
        .into_iter()
        .zip([&options.threaded_log, &options.proptest_log])
    {
        let Some(path) = path else { continue };
        match fs::read_to_string(path) {
            Ok(log) => board_logs::add(&mut board, engine, &log, committed.as_deref()),
            Err(error) => {
                eprintln!("soak board: cannot read {}: {error}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    eprintln!(
        "soak board: done in {:.1} s",
        stopwatch.elapsed().as_secs_f64()
    );
    match committed {
        Some(committed) => check(&committed, &board, options.filter.is_none()),
        None => write(&board, options),
    }
}

/// The runs: each case under each engine from `options.seeds` seeds (a sequential case
/// once, under the random scheduler); in `--check` mode one seed for each engine
/// `committed` says caught the case from every seed, and nothing else.
fn plan_board(
    cases: &[Case],
    committed: Option<&[BoardRow]>,
    options: &BoardOptions,
) -> Vec<PlannedRun> {
    let mut runs = Vec::new();
    for &case in cases {
        for scheduler in ENGINES {
            if case.sequential && scheduler != SchedulerKind::Random {
                continue;
            }
            let seeds = match committed {
                Some(rows) if !always_caught(rows, &case.id(), &scheduler.label()) => continue,
                Some(_) => 1,
                None if case.sequential => 1,
                None => options.seeds,
            };
            for _ in 0..seeds {
                let index = runs.len();
                let seed = SeededRng::new(options.seed ^ (index as u64).wrapping_mul(0x9E37_79B9))
                    .next_u64();
                runs.push(PlannedRun {
                    index,
                    case,
                    scheduler,
                    seed,
                });
            }
        }
    }
    runs
}

/// Whether the committed board says `engine` caught `case` from every seed it ran, soon
/// enough for one fresh seed to be sure ([`board_logs::checkable`]).
fn always_caught(rows: &[BoardRow], case: &str, engine: &str) -> bool {
    rows.iter()
        .filter(|row| row.case == case)
        .flat_map(|row| &row.cells)
        .any(|cell| cell.engine == engine && crate::board_logs::checkable(cell))
}

/// Runs them through the soak's pool of child processes, without shrinking.
fn run(runs: Vec<PlannedRun>, options: &BoardOptions) -> Result<Vec<Row>, String> {
    let work = std::env::temp_dir().join(format!("hadoop-ref-board-{}", std::process::id()));
    fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let pool = Pool {
        out: work.join("failures"),
        work: work.clone(),
        jobs: options.jobs.map_or_else(available_cores, |j| {
            usize::try_from(j).unwrap_or(usize::MAX)
        }),
        budget: Budget::per_run(
            options.iterations,
            Duration::from_secs(options.time_per_run),
        ),
        no_minimize: true,
        events: None,
        monitors: false,
        // Times to a catch are the board's figures: nothing is counted beside the runs.
        coverage: false,
    };
    let rows = pool.run_all(runs);
    // Best effort: a leftover directory in the temporary directory is harmless.
    let _ = fs::remove_dir_all(&work);
    Ok(rows)
}

/// The board of `cases` from the runs' rows.
fn tabulate(cases: &[Case], rows: &[Row]) -> Vec<BoardRow> {
    let mut by_cell: BTreeMap<(String, String), Vec<&Row>> = BTreeMap::new();
    for row in rows {
        let key = (row.run.case.id(), row.run.scheduler.label());
        by_cell.entry(key).or_default().push(row);
    }
    let mut board = Vec::new();
    for case in cases {
        let Some(defect) = defect_of(case) else {
            continue;
        };
        let cells = ENGINES
            .iter()
            .filter_map(|engine| by_cell.get(&(case.id(), engine.label())))
            .map(|rows| cell(rows))
            .collect();
        board.push(BoardRow {
            defect: defect.key.to_owned(),
            what: defect.what.to_owned(),
            case: case.id(),
            shrunk_switches: shrunk_switches(case),
            loom: None,
            cells,
        });
    }
    board.sort_by(|a, b| (&a.defect, &a.case).cmp(&(&b.defect, &b.case)));
    board
}

fn cell(rows: &[&Row]) -> Cell {
    let caught: Vec<&&Row> = rows.iter().filter(|r| r.status.failure.is_some()).collect();
    let mut schedules: Vec<u64> = caught.iter().map(|r| r.status.schedules).collect();
    let mut seconds: Vec<f64> = caught
        .iter()
        .map(|r| r.status.elapsed_ms as f64 / 1000.0)
        .collect();
    Cell {
        engine: rows[0].run.scheduler.label(),
        seeds: rows.len(),
        caught: caught.len(),
        median_schedules: median(&mut schedules),
        median_seconds: median(&mut seconds),
        shrunk: None,
        at: None,
    }
}

/// The context switches of `case`'s committed failing schedule (random, else PCT 3).
fn shrunk_switches(case: &Case) -> Option<usize> {
    ["random", "pct3"].iter().find_map(|label| {
        let path = schedule_file::path_for(Path::new(SCHEDULES), case, label);
        schedule_file::read(&path)
            .ok()
            .map(|file| context_switches(&file.schedule))
    })
}

fn read_board(path: &Path) -> Result<Vec<BoardRow>, String> {
    let text =
        fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not a board: {e}", path.display()))
}

/// Fails on every (case, engine) the committed board says always caught that caught
/// nothing now, and, over the `whole` catalogue, on a committed case no longer caught.
fn check(committed: &[BoardRow], now: &[BoardRow], whole: bool) -> ExitCode {
    let mut lost = Vec::new();
    let mut held = 0;
    for row in now {
        for cell in &row.cells {
            if cell.caught == 0 {
                lost.push(format!("{} [{}]", row.case, cell.engine));
            } else {
                held += 1;
            }
        }
    }
    // A filtered check leaves cases out on purpose.
    let missing: Vec<&str> = committed
        .iter()
        .filter(|row| whole && !now.iter().any(|r| r.case == row.case))
        .map(|row| row.case.as_str())
        .collect();
    let goal = board_summary::upstream_goal(committed);
    if let Err(short) = &goal {
        for miss in short {
            println!("soak board: the upstream section falls short: {miss}");
        }
    }
    if lost.is_empty() && missing.is_empty() && goal.is_ok() {
        println!(
            "soak board: every engine the committed board says always catches its case still \
             does ({held} case/engine pairs); {} upstream keys, each caught by two engines",
            goal.unwrap_or_default()
        );
        return ExitCode::SUCCESS;
    }
    for case in missing {
        println!("soak board: {case} is on the committed board but no longer a caught case");
    }
    for pair in &lost {
        println!("soak board: {pair} no longer caught (the committed board says it always was)");
    }
    ExitCode::FAILURE
}

/// Prints the board and writes it where `options` say. The sections other tools keep on
/// the board (between `<!-- … begin -->` and `<!-- … end -->` lines: the explorer's, the
/// conformance kit's mutation table) are carried over from the board being replaced.
fn write(board: &[BoardRow], options: &BoardOptions) -> ExitCode {
    let mut markdown = markdown(board, options);
    if let Some(previous) = options
        .markdown
        .as_ref()
        .and_then(|p| fs::read_to_string(p).ok())
    {
        for section in kept_sections(&previous) {
            markdown.push('\n');
            markdown.push_str(&section);
        }
    }
    print!("{markdown}");
    let outputs: [(Option<&PathBuf>, String); 2] = [
        (options.markdown.as_ref(), markdown.clone()),
        (
            options.json.as_ref(),
            serde_json::to_string_pretty(board).unwrap_or_default() + "\n",
        ),
    ];
    for (path, text) in outputs {
        if let Some(path) = path
            && let Err(error) = fs::write(path, text)
        {
            eprintln!("soak board: cannot write {}: {error}", path.display());
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

/// The marked sections of `board`, each whole with its marker lines, in order.
fn kept_sections(board: &str) -> Vec<String> {
    let marker = |line: &str, end: &str| line.starts_with("<!-- ") && line.ends_with(end);
    let mut sections = Vec::new();
    let mut open: Option<String> = None;
    for line in board.lines() {
        match open.as_mut() {
            None if marker(line, "begin -->") => open = Some(format!("{line}\n")),
            None => {}
            Some(section) => {
                section.push_str(line);
                section.push('\n');
                if marker(line, "end -->") {
                    sections.extend(open.take());
                }
            }
        }
    }
    sections
}

/// The board as Markdown: a summary, then a row per caught case.
fn markdown(board: &[BoardRow], options: &BoardOptions) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Scoreboard: the checkers' engines on the catalogue's defects\n\n\
         Regenerate with `ci/loom > loom.log; cargo run --release --bin board-production -- \
         threaded > threaded.log; cargo run --release --bin board-production -- proptest > \
         proptest.log; cargo soak board --seeds {} --iterations {} --time-per-run {} \
         --loom-log loom.log --threaded-log threaded.log --proptest-log proptest.log \
         --markdown docs/scoreboard.md --json docs/scoreboard.json` (seed {}); `ci/test` runs \
         `ci/check-scoreboard`, which checks the catches below again (see its end).\n",
        options.seeds, options.iterations, options.time_per_run, options.seed
    );
    board_summary::summary(&mut out, board);
    let labels: Vec<String> = ENGINES.iter().map(|e| e.label()).collect();
    let _ = writeln!(
        out,
        "\nEach cell: seeds that caught the case / seeds run, then the median schedules and \
         seconds to the first catch over those seeds; `-` when none caught it within {} \
         schedules or {} s. `loom`: the execution at which the case's loom model (where \
         the race is small enough for one) caught it, and whether loom explored every \
         interleaving or those within a preemption bound. `shrunk` is the context switches \
         of the committed failing schedule.\n\n{}\n",
        options.iterations,
        options.time_per_run,
        board_logs::LEGEND
    );
    let _ = writeln!(
        out,
        "| defect | case | {} | loom | threaded | proptest | shrunk |",
        labels.join(" | ")
    );
    let _ = writeln!(
        out,
        "|---|---|{}---|---|---|---|",
        "---|".repeat(labels.len())
    );
    for row in board {
        let cells: Vec<String> = ENGINES
            .iter()
            .map(|e| {
                row.cells
                    .iter()
                    .find(|c| c.engine == e.label())
                    .map_or("n/a".to_owned(), cell_text)
            })
            .collect();
        let shrunk = row
            .shrunk_switches
            .map_or("-".to_owned(), |s| s.to_string());
        let loom = row.loom.as_deref().unwrap_or("-");
        let production: Vec<String> = board_logs::ENGINES
            .iter()
            .map(|e| {
                row.cells
                    .iter()
                    .find(|c| c.engine == *e)
                    .map_or("—".to_owned(), cell_text)
            })
            .collect();
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {loom} | {} | {shrunk} |",
            row.defect,
            row.case,
            cells.join(" | "),
            production.join(" | ")
        );
    }
    out
}

fn cell_text(cell: &Cell) -> String {
    let shrunk = match (cell.shrunk, &cell.at) {
        (Some(length), Some(at)) => format!(" · {length} ops, at {at}"),
        _ => String::new(),
    };
    match (cell.median_schedules, cell.median_seconds) {
        (Some(n), Some(s)) => format!("{}/{} · {n} · {s:.3} s{shrunk}", cell.caught, cell.seeds),
        _ => format!("0/{} · -", cell.seeds),
    }
}

#[cfg(test)]
mod tests {
    use super::kept_sections;

    #[test]
    fn a_regenerated_board_keeps_the_other_tools_sections() {
        let board = "# Scoreboard\n| row |\n\n<!-- soak explore: begin -->\n## Explored\n\
                     <!-- soak explore: end -->\n\n<!-- mutation-score:begin -->\n| m |\n\
                     <!-- mutation-score:end -->\n";
        let kept = kept_sections(board);
        assert_eq!(kept.len(), 2);
        assert!(kept[0].starts_with("<!-- soak explore: begin -->\n## Explored"));
        assert!(kept[1].ends_with("| m |\n<!-- mutation-score:end -->\n"));
        assert!(kept_sections("# Scoreboard\n<!-- unclosed: begin -->\n").is_empty());
    }
}
