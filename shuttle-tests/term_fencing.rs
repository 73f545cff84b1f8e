//! Shuttle, HDDS-17268: every term-fencing scenario of the catalogue under random and PCT
//! schedules. Fixed variants must hold over thousands of schedules; each legacy variant
//! must be caught within a bounded number (the bound is asserted). PCT is not asked to
//! catch the unlocked update in the cluster scenario: the lost update must land between
//! two specific steps and then be acted on before the next heartbeat repairs it, deeper
//! than PCT's depth 3 reaches in 20 000 schedules (random finds it in hundreds to a few
//! thousand; MC5 holds the PCT check of that race). Scheduler seeds are
//! fixed, so a run is reproducible; a failing schedule is written under
//! `target/shuttle-schedules/` for `cargo soak replay FILE`.

use crate::support;

use crate::support::{PCT3, RANDOM};
use hadoop_ref::check::catalogue;
use hadoop_ref::scenarios::term_fencing::SEED_KEY;

shuttle_tests! {
    cases: catalogue::term_fencing(), seed_key: SEED_KEY;
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
    support::assert_every_case_listed(&catalogue::term_fencing(), include_str!("term_fencing.rs"));
}
