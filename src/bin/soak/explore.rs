//! `soak explore`: the exhaustive explorer over cluster cases' actions (`check::explore`),
//! one case after another, a table of what each search did, the shortest counterexample
//! of each caught case saved for `soak replay`.

use std::process::ExitCode;
use std::time::Duration;

use hadoop_ref::check::catalogue::{self, Expectation};
use hadoop_ref::check::explore::{CounterexampleFile, ExploreCase, Options, Report, Verdict};
use hadoop_ref::check::shuttle::explore::explore_case;

use crate::cli::ExploreOptions;

/// Explores each matching case; exit 1 when one did not do as its expectation says
/// (a fixed variant caught, a legacy one held), 2 when none matches or one could not run.
pub fn explore(options: &ExploreOptions) -> ExitCode {
    let cases: Vec<ExploreCase> = catalogue::explorable()
        .into_iter()
        .filter(|c| {
            options
                .case
                .as_ref()
                .is_none_or(|f| c.scenario.contains(f.as_str()))
        })
        .filter(|c| options.variant.as_ref().is_none_or(|v| c.variant == v))
        .collect();
    if cases.is_empty() {
        eprintln!("soak: no cluster case matches (`soak list` names them)");
        return ExitCode::from(2);
    }
    let search = Options {
        depth: options.depth,
        time_limit: Some(Duration::from_secs(options.time)),
        max_executions: u64::MAX,
        hashing: !options.no_hashing,
        partial_order: !options.no_por && !options.no_hashing,
        workers: options
            .workers
            .unwrap_or_else(hadoop_ref::unmodelled::available_cores)
            .max(1),
        audit_fingerprints: options.audit_fingerprints,
    };
    println!(
        "{:<62} {:<22} {:<6} {:>5} {:>4} {:>9} {:>10} {:>7}  verdict",
        "scenario", "variant", "expect", "depth", "all", "states", "executions", "seconds"
    );
    let mut rows = Vec::new();
    let mut board = Vec::new();
    let mut code = ExitCode::SUCCESS;
    for case in cases {
        let windows = catalogue::windows::windows_of(case.scenario);
        let report = match explore_case(case, search.clone(), windows) {
            Ok(report) => report,
            Err(panic) => {
                eprintln!("soak: exploring {} panicked: {panic}", case.id());
                return ExitCode::from(2);
            }
        };
        let verdict = verdict_text(&report, &case, options);
        println!(
            "{:<62} {:<22} {:<6} {:>5} {:>4} {:>9} {:>10} {:>7.1}  {verdict}",
            case.scenario,
            case.variant,
            expect_text(case.expectation),
            report.depth,
            if report.exhausted { "yes" } else { "-" },
            report.states,
            report.executions,
            report.seconds
        );
        let levels: Vec<String> = report.levels.iter().map(|(s, _)| s.to_string()).collect();
        println!("    states by depth: {}", levels.join(" "));
        for (window, depth) in &report.windows {
            let reached = depth.map_or("not reached".to_owned(), |d| format!("at depth {d}"));
            println!("    {window}: {reached}");
        }
        if matches!(report.verdict, Verdict::Error(_)) {
            code = ExitCode::from(2);
        } else if !report.acceptable_for(&case) && code == ExitCode::SUCCESS {
            code = ExitCode::FAILURE;
        }
        rows.push(row_json(&case, &report));
        board.push(board_row(&case, &report));
    }
    if let Some(path) = &options.json {
        let json = serde_json::to_string_pretty(&serde_json::Value::Array(rows))
            .unwrap_or_else(|_| "[]".to_owned());
        if let Err(error) = std::fs::write(path, json + "\n") {
            eprintln!("soak: cannot write {}: {error}", path.display());
            return ExitCode::from(2);
        }
    }
    if let Some(path) = &options.board
        && let Err(error) = write_board(path, &board, options, search.workers)
    {
        eprintln!("soak: cannot write {}: {error}", path.display());
        return ExitCode::from(2);
    }
    code
}

const BOARD_BEGIN: &str = "<!-- soak explore: begin -->";
const BOARD_END: &str = "<!-- soak explore: end -->";

/// The board's row of one case: its exhaustive column and the windows its judged paths
/// reached, with the depth.
fn board_row(case: &ExploreCase, report: &Report) -> String {
    let verdict = match &report.verdict {
        Verdict::Held => "held".to_owned(),
        Verdict::Caught { path, .. } => format!("caught at {}", path.len()),
        Verdict::Error(_) => "error".to_owned(),
    };
    let depth = if report.exhausted {
        format!("{} (all states)", report.depth)
    } else {
        report.depth.to_string()
    };
    let windows: Vec<String> = report
        .windows
        .iter()
        .map(|(window, d)| match d {
            Some(d) => format!("{window} (depth {d})"),
            None => format!("{window} (not reached)"),
        })
        .collect();
    format!(
        "| {} | {} | {} | {depth}, {} states, {:.1} s, {verdict} | {} |",
        case.scenario,
        case.variant,
        expect_text(case.expectation),
        report.states,
        report.seconds,
        if windows.is_empty() {
            "-".to_owned()
        } else {
            windows.join("; ")
        }
    )
}

/// Replaces the board's exploration section (or adds it at the end).
fn write_board(
    path: &std::path::Path,
    rows: &[String],
    options: &ExploreOptions,
    workers: usize,
) -> std::io::Result<()> {
    let board = std::fs::read_to_string(path).unwrap_or_default();
    let mut section = format!(
        "{BOARD_BEGIN}\n## Exhaustive exploration of the cluster cases\n\nEvery interleaving of \
         each cluster case's protocol steps up to the depth shown, breadth first, each distinct \
         state once, with partial-order reduction (`cargo soak explore --depth {} --time {} \
         --board docs/scoreboard.md`, {workers} worker(s); `check::explore`). The depth is the last one whose every \
         state was expanded within the time (\"all states\": no state was left to expand); a \
         catch is at the length of the shortest counterexample.\n\n| scenario | variant | \
         expect | exhaustive | race windows reached (shortest judged path) |\n|---|---|---|---|---|\n",
        options.depth, options.time
    );
    for row in rows {
        section.push_str(row);
        section.push('\n');
    }
    section.push_str(BOARD_END);
    let updated = match (board.find(BOARD_BEGIN), board.find(BOARD_END)) {
        (Some(begin), Some(end)) if begin < end => {
            format!(
                "{}{section}{}",
                &board[..begin],
                &board[end + BOARD_END.len()..]
            )
        }
        _ => format!("{}\n{section}\n", board.trim_end()),
    };
    std::fs::write(path, updated)
}

fn expect_text(expectation: Expectation) -> &'static str {
    match expectation {
        Expectation::Holds => "hold",
        Expectation::Caught => "catch",
    }
}

/// The verdict for the table; a counterexample is saved and its file named.
fn verdict_text(report: &Report, case: &ExploreCase, options: &ExploreOptions) -> String {
    let result = if report.as_expected(case.expectation) {
        ""
    } else if report.acceptable_for(case) {
        "  (unreached: deeper than this search, as the case says)"
    } else {
        "  NOT AS EXPECTED"
    };
    match &report.verdict {
        Verdict::Held => format!("held{result}"),
        Verdict::Error(error) => format!("error: {error}"),
        Verdict::Caught { path, violation } => {
            let file = CounterexampleFile {
                scenario: case.scenario.to_owned(),
                variant: case.variant.to_owned(),
                actions: path.clone(),
            };
            let saved = match file.write_in(&options.out) {
                Ok(saved) => saved.display().to_string(),
                Err(error) => format!("not saved: {error}"),
            };
            format!(
                "caught at depth {}{result}: {violation}\n    counterexample: {saved}",
                path.len()
            )
        }
    }
}

fn row_json(case: &ExploreCase, report: &Report) -> serde_json::Value {
    let (verdict, counterexample) = match &report.verdict {
        Verdict::Held => ("held", None),
        Verdict::Caught { path, .. } => ("caught", Some(path.len())),
        Verdict::Error(_) => ("error", None),
    };
    serde_json::json!({
        "scenario": case.scenario,
        "variant": case.variant,
        "expectation": expect_text(case.expectation),
        "depth": report.depth,
        "exhausted": report.exhausted,
        "states": report.states,
        "levels": report.levels.iter().map(|(s, t)| serde_json::json!({"states": s, "seconds": t})).collect::<Vec<_>>(),
        "transitions": report.transitions,
        "executions": report.executions,
        "judged": report.judged,
        "beyond_reach": report.beyond_reach,
        "seconds": report.seconds,
        "verdict": verdict,
        "counterexample_depth": counterexample,
        "as_expected": report.as_expected(case.expectation),
        "windows": report.windows.iter().map(|(w, d)| serde_json::json!({"window": w, "depth": d})).collect::<Vec<_>>(),
    })
}
