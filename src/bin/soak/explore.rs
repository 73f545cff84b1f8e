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
    };
    println!(
        "{:<62} {:<22} {:<6} {:>5} {:>4} {:>9} {:>10} {:>7}  verdict",
        "scenario", "variant", "expect", "depth", "all", "states", "executions", "seconds"
    );
    let mut rows = Vec::new();
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
        for (window, depth) in &report.windows {
            let reached = depth.map_or("not reached".to_owned(), |d| format!("at depth {d}"));
            println!("    {window}: {reached}");
        }
        if matches!(report.verdict, Verdict::Error(_)) {
            code = ExitCode::from(2);
        } else if !report.as_expected(case.expectation) && code == ExitCode::SUCCESS {
            code = ExitCode::FAILURE;
        }
        rows.push(row_json(&case, &report));
    }
    if let Some(path) = &options.json {
        let json = serde_json::to_string_pretty(&serde_json::Value::Array(rows))
            .unwrap_or_else(|_| "[]".to_owned());
        if let Err(error) = std::fs::write(path, json + "\n") {
            eprintln!("soak: cannot write {}: {error}", path.display());
            return ExitCode::from(2);
        }
    }
    code
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
        "transitions": report.transitions,
        "executions": report.executions,
        "judged": report.judged,
        "seconds": report.seconds,
        "verdict": verdict,
        "counterexample_depth": counterexample,
        "as_expected": report.as_expected(case.expectation),
        "windows": report.windows.iter().map(|(w, d)| serde_json::json!({"window": w, "depth": d})).collect::<Vec<_>>(),
    })
}
