//! Runs one catalogue case under shuttle and asserts its expectation: a fixed variant
//! holds over `HOLD_ITERATIONS` schedules, a legacy variant is caught within
//! `CATCH_BOUND`. Scheduler seeds are fixed, so a run is reproducible; a failing schedule
//! is written under the target's temporary directory for `cargo soak replay FILE`.

use std::path::{Path, PathBuf};

use hadoop_ref::check::catalogue::{Case, Expectation};
use hadoop_ref::check::plan::SchedulerKind;
use hadoop_ref::check::shuttle::{Observe, ReplayOutcome, RunSpec, explain_file, run_case};

/// Schedules a fixed variant must survive, per scheduler.
pub const HOLD_ITERATIONS: usize = 10_000;
/// Within this many schedules a legacy variant must be caught.
pub const CATCH_BOUND: usize = 20_000;
/// The scheduler seed of every run.
pub const SEED: u64 = 0x0005_EED1_7268;
/// The random scheduler.
pub const RANDOM: SchedulerKind = SchedulerKind::Random;
/// PCT at bug depth 3.
pub const PCT3: SchedulerKind = SchedulerKind::Pct { depth: 3 };

/// One `#[test]` per case: `name: "scenario" / "variant", SCHEDULER;`, each asserting the
/// case's expectation with [`check`].
macro_rules! shuttle_tests {
    (cases: $cases:expr, seed_key: $key:expr;
     $($name:ident: $scenario:literal / $variant:literal, $scheduler:expr;)+) => {
        $(
            #[test]
            fn $name() {
                support::check(&$cases, $scenario, $variant, $scheduler, $key);
            }
        )+
    };
}

/// Runs `scenario`/`variant` of `cases` under `scheduler` and asserts its expectation;
/// a violation must name `seed_key` (one of its `+`-joined keys, for a scenario where
/// seeds meet).
pub fn check(
    cases: &[Case],
    scenario: &str,
    variant: &str,
    scheduler: SchedulerKind,
    seed_key: &str,
) {
    let case = *cases
        .iter()
        .find(|c| c.scenario == scenario && c.variant == variant)
        .unwrap_or_else(|| panic!("no case {scenario}/{variant} in the catalogue"));
    let iterations = match (case.sequential, case.expectation) {
        (true, _) => 1,
        (false, Expectation::Holds) => HOLD_ITERATIONS,
        (false, Expectation::Caught) => CATCH_BOUND,
    };
    let spec = RunSpec {
        scheduler,
        iterations,
        max_time: None,
        seed: SEED,
        schedule_dir: Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        observe: Observe::default(),
    };
    let result = run_case(case, &spec);
    println!(
        "shuttle {} [{}]: {} schedule(s) in {:.2?} ({:.0}/s), {}",
        case.id(),
        scheduler.label(),
        result.iterations,
        result.elapsed,
        result.rate_per_s(),
        result.failure.as_deref().unwrap_or("no violation"),
    );
    match (case.expectation, &result.failure) {
        (Expectation::Holds, None) => {}
        (Expectation::Holds, Some(failure)) => panic!(
            "{} must hold but failed after {} schedules (saved to {:?}); its story:\n{}",
            case.id(),
            result.iterations,
            result.schedule_file,
            story_of(result.schedule_file.as_deref(), failure)
        ),
        (Expectation::Caught, Some(failure)) => assert!(
            seed_key.split('+').any(|key| failure.contains(key)),
            "{} failed for another reason than a {seed_key} violation: {failure}",
            case.id()
        ),
        (Expectation::Caught, None) => panic!(
            "{} escaped: not caught within {} schedules",
            case.id(),
            result.iterations
        ),
    }
}

/// The story of the saved failing schedule, ending at its violation (the violation alone
/// when the schedule was not saved or does not replay).
fn story_of(schedule_file: Option<&Path>, failure: &str) -> String {
    match schedule_file.map(explain_file) {
        Some(Ok((ReplayOutcome::Violation(violation), story))) => {
            story.ending_at(&violation).to_string()
        }
        _ => failure.to_owned(),
    }
}

/// Asserts that the test file `source` names every case of `cases`.
pub fn assert_every_case_listed(cases: &[Case], source: &str) {
    for case in cases {
        let entry = format!("\"{}\" / \"{}\"", case.scenario, case.variant);
        assert!(source.contains(&entry), "{} has no shuttle test", case.id());
    }
}
