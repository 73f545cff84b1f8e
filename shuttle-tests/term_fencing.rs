//! Shuttle, HDDS-17268: every term-fencing scenario of the catalogue under random and PCT
//! schedules. Fixed variants must hold over thousands of schedules; each legacy variant
//! must be caught within a bounded number (the bound is asserted). PCT is not asked to
//! catch the unlocked update in the cluster scenario: the lost update must land between
//! two specific steps and then be acted on before the next heartbeat repairs it, deeper
//! than PCT's depth 3 reaches in 20 000 schedules (random finds it in hundreds to a few
//! thousand; MC5 holds the PCT check of that race). Scheduler seeds are
//! fixed, so a run is reproducible; a failing schedule is written under
//! `target/shuttle-schedules/` for `cargo soak replay FILE`.

use std::path::PathBuf;

use hadoop_ref::scenarios::catalogue::{self, Case, Expectation};
use hadoop_ref::scenarios::checker::{RunSpec, SchedulerKind, run_case};
use hadoop_ref::scenarios::term_fencing::SEED_KEY;

/// Schedules a fixed variant must survive, per scheduler.
const HOLD_ITERATIONS: usize = 10_000;
/// Within this many schedules a legacy variant must be caught.
const CATCH_BOUND: usize = 20_000;

fn case(scenario: &str, variant: &str) -> Case {
    catalogue::term_fencing()
        .into_iter()
        .find(|c| c.scenario == scenario && c.variant == variant)
        .unwrap_or_else(|| panic!("no case {scenario}/{variant} in the catalogue"))
}

fn check(scenario: &str, variant: &str, scheduler: SchedulerKind) {
    let case = case(scenario, variant);
    let iterations = match case.expectation {
        Expectation::Holds => HOLD_ITERATIONS,
        Expectation::Caught => CATCH_BOUND,
    };
    let spec = RunSpec {
        scheduler,
        iterations,
        max_time: None,
        seed: 0x0005_EED1_7268,
        schedule_dir: Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
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
            "{} must hold but failed after {} schedules (saved to {:?}): {failure}",
            case.id(),
            result.iterations,
            result.schedule_file
        ),
        (Expectation::Caught, Some(failure)) => assert!(
            failure.contains(SEED_KEY),
            "{} failed for another reason than a {SEED_KEY} violation: {failure}",
            case.id()
        ),
        (Expectation::Caught, None) => panic!(
            "{} escaped: not caught within {} schedules",
            case.id(),
            result.iterations
        ),
    }
}

macro_rules! shuttle_tests {
    ($($name:ident: $scenario:literal / $variant:literal, $scheduler:expr;)+) => {
        $(
            #[test]
            fn $name() {
                check($scenario, $variant, $scheduler);
            }
        )+
    };
}

const RANDOM: SchedulerKind = SchedulerKind::Random;
const PCT3: SchedulerKind = SchedulerKind::Pct { depth: 3 };

shuttle_tests! {
    mc4_believing_old_leader_fenced_random: "mc4_old_leader_believes" / "Fixed", RANDOM;
    mc4_believing_old_leader_fenced_pct: "mc4_old_leader_believes" / "Fixed", PCT3;
    mc4_believing_old_leader_await_random: "mc4_old_leader_believes" / "AwaitLeaderTerm", RANDOM;
    mc4_believing_old_leader_legacy_caught_random: "mc4_old_leader_believes" / "LegacyIgnoreHeartbeatTermBeforeInit", RANDOM;
    mc4_believing_old_leader_legacy_caught_pct: "mc4_old_leader_believes" / "LegacyIgnoreHeartbeatTermBeforeInit", PCT3;
    mc4_follower_old_leader_fenced_random: "mc4_old_leader_follower" / "Fixed", RANDOM;
    mc4_follower_old_leader_fenced_pct: "mc4_old_leader_follower" / "Fixed", PCT3;
    mc4_follower_old_leader_await_random: "mc4_old_leader_follower" / "AwaitLeaderTerm", RANDOM;
    mc4_follower_old_leader_legacy_caught_random: "mc4_old_leader_follower" / "LegacyIgnoreHeartbeatTermBeforeInit", RANDOM;
    mc4_follower_old_leader_legacy_caught_pct: "mc4_old_leader_follower" / "LegacyIgnoreHeartbeatTermBeforeInit", PCT3;
    residual_window_closed_by_await_random: "mc4_residual_window" / "AwaitLeaderTerm", RANDOM;
    residual_window_closed_by_await_pct: "mc4_residual_window" / "AwaitLeaderTerm", PCT3;
    residual_window_open_in_fixed_random: "mc4_residual_window" / "Fixed", RANDOM;
    residual_window_open_in_legacy_random: "mc4_residual_window" / "LegacyIgnoreHeartbeatTermBeforeInit", RANDOM;
    mc5_locked_update_holds_random: "mc5_concurrent_leader_heartbeats" / "Fixed", RANDOM;
    mc5_locked_update_holds_pct: "mc5_concurrent_leader_heartbeats" / "Fixed", PCT3;
    mc5_await_holds_pct: "mc5_concurrent_leader_heartbeats" / "AwaitLeaderTerm", PCT3;
    mc5_unlocked_update_caught_random: "mc5_concurrent_leader_heartbeats" / "LegacyUnlockedTermUpdate", RANDOM;
    mc5_unlocked_update_caught_pct: "mc5_concurrent_leader_heartbeats" / "LegacyUnlockedTermUpdate", PCT3;
    cluster_fixed_holds_random: "cluster_leader_transfers" / "Fixed", RANDOM;
    cluster_fixed_holds_pct: "cluster_leader_transfers" / "Fixed", PCT3;
    cluster_await_holds_random: "cluster_leader_transfers" / "AwaitLeaderTerm", RANDOM;
    cluster_await_holds_pct: "cluster_leader_transfers" / "AwaitLeaderTerm", PCT3;
    cluster_ignore_before_init_caught_random: "cluster_leader_transfers" / "LegacyIgnoreHeartbeatTermBeforeInit", RANDOM;
    cluster_ignore_before_init_caught_pct: "cluster_leader_transfers" / "LegacyIgnoreHeartbeatTermBeforeInit", PCT3;
    cluster_unlocked_update_caught_random: "cluster_leader_transfers" / "LegacyUnlockedTermUpdate", RANDOM;
}

#[test]
fn every_catalogue_case_is_tested() {
    // Keeps the list above in step with the catalogue.
    let source = include_str!("term_fencing.rs");
    for case in catalogue::term_fencing() {
        let entry = format!("\"{}\" / \"{}\"", case.scenario, case.variant);
        assert!(source.contains(&entry), "{} has no shuttle test", case.id());
    }
}
