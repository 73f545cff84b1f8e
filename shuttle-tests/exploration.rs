//! Coverage under shuttle (`check::exploration`): a legacy case's catch reaches its race
//! window, a fixed case's run reaches it too, and counting beside the story's recorder
//! (event monitors on) sees the same executions.

use hadoop_ref::check::catalogue::{self, Case};
use hadoop_ref::check::exploration::{Coverage, CoverageSummary};
use hadoop_ref::check::shuttle::{InlineMonitors, Observe, RunSpec, run_case};

use crate::support::{RANDOM, SEED};

fn case(scenario: &str, variant: &str) -> Case {
    catalogue::all()
        .into_iter()
        .find(|c| c.scenario == scenario && c.variant == variant)
        .expect("the case is in the catalogue")
}

/// Runs `case` for at most `iterations` random schedules, counting coverage.
fn explore(case: Case, iterations: usize, monitors: bool) -> (CoverageSummary, bool) {
    let coverage = Coverage::new(case.windows);
    let spec = RunSpec {
        scheduler: RANDOM,
        iterations,
        max_time: None,
        seed: SEED,
        schedule_dir: None,
        observe: Observe {
            monitors: monitors.then(InlineMonitors::default),
            coverage: Some(coverage.clone()),
            ..Observe::default()
        },
    };
    let result = run_case(case, &spec);
    assert_eq!(coverage.summary().executions, result.iterations);
    (coverage.summary(), result.failure.is_some())
}

#[test]
fn a_legacy_catch_reaches_its_race_window() {
    let case = case(
        "heartbeat_term_fences_believing_old_leader",
        "LegacyIgnoreHeartbeatTermBeforeInit",
    );
    let (summary, caught) = explore(case, 2_000, false);
    assert!(caught, "the legacy variant is caught");
    assert_eq!(summary.windows.len(), 1);
    assert!(
        summary.windows[0].reached > 0,
        "the catch went through `{}`: {summary:?}",
        summary.windows[0].name
    );
}

#[test]
fn a_fixed_run_reaches_its_race_window_and_explores_interleavings() {
    let case = case("delete_during_repair", "SeedPatch");
    let (summary, caught) = explore(case, 500, false);
    assert!(!caught, "the fixed variant holds");
    let (reached, _) = summary.windows_reached();
    assert!(reached > 0, "{summary:?}");
    assert!(summary.sequences > 1, "{summary:?}");
    assert!(summary.racing_pairs > 0, "{summary:?}");
}

#[test]
fn coverage_beside_the_monitors_counts_the_same_executions() {
    let case = case(
        "concurrent_leader_heartbeats_keep_the_highest_term",
        "SeedPatch",
    );
    let (alone, _) = explore(case, 300, false);
    let (beside, _) = explore(case, 300, true);
    assert_eq!(alone, beside, "the same seed explores the same schedules");
}
