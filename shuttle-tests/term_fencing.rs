//! Shuttle, HDDS-17268: every term-fencing scenario of the catalogue under random and PCT
//! schedules. Fixed variants must hold over thousands of schedules; each legacy variant
//! must be caught within a bounded number (the bound is asserted). PCT is not asked to
//! catch the unlocked update in the cluster scenario: the lost update must land between
//! two specific steps and then be acted on before the next heartbeat repairs it, deeper
//! than PCT's depth 3 reaches in 20 000 schedules (random finds it in hundreds to a few
//! thousand; the seed's MC5, `concurrent_leader_heartbeats_keep_the_highest_term`, holds the
//! PCT check of that race). The seed's MC4 is the two `heartbeat_term_fences_*` scenarios
//! and `deposed_leader_command_after_restart`. Scheduler seeds are fixed, so a run is
//! reproducible; a failing schedule is written under `target/shuttle-schedules/` for
//! `cargo soak replay FILE`.

use crate::support;

use crate::support::{PCT3, RANDOM};
use hadoop_ref::check::catalogue;
use hadoop_ref::scenarios::term_fencing::SEED_KEY;

shuttle_tests! {
    cases: catalogue::term_fencing(), seed_key: SEED_KEY;
    queued_ahead_dropped_random: "stale_command_queued_ahead_of_a_newer_one" / "SeedPatch", RANDOM;
    queued_ahead_dropped_pct: "stale_command_queued_ahead_of_a_newer_one" / "SeedPatch", PCT3;
    queued_ahead_dropped_when_hardened_random: "stale_command_queued_ahead_of_a_newer_one" / "Hardened", RANDOM;
    queued_ahead_runs_with_the_term_raised_on_poll_random: "stale_command_queued_ahead_of_a_newer_one" / "LegacyTermOnPoll", RANDOM;
    queued_ahead_runs_with_the_term_raised_on_poll_pct: "stale_command_queued_ahead_of_a_newer_one" / "LegacyTermOnPoll", PCT3;
    queued_ahead_runs_without_a_term_fence_random: "stale_command_queued_ahead_of_a_newer_one" / "LegacyNoTermFence", RANDOM;
    minority_waits_random: "restarted_datanode_waits_for_a_majority" / "SeedPatch", RANDOM;
    minority_waits_pct: "restarted_datanode_waits_for_a_majority" / "SeedPatch", PCT3;
    minority_waits_when_hardened_random: "restarted_datanode_waits_for_a_majority" / "Hardened", RANDOM;
    minority_decides_without_a_term_fence_random: "restarted_datanode_waits_for_a_majority" / "LegacyNoTermFence", RANDOM;
    believing_old_leader_fenced_random: "heartbeat_term_fences_believing_old_leader" / "SeedPatch", RANDOM;
    believing_old_leader_fenced_pct: "heartbeat_term_fences_believing_old_leader" / "SeedPatch", PCT3;
    believing_old_leader_fenced_when_hardened_random: "heartbeat_term_fences_believing_old_leader" / "Hardened", RANDOM;
    believing_old_leader_runs_before_the_patch_random: "heartbeat_term_fences_believing_old_leader" / "Legacy", RANDOM;
    believing_old_leader_runs_before_the_patch_pct: "heartbeat_term_fences_believing_old_leader" / "Legacy", PCT3;
    believing_old_leader_runs_when_term_discarded_random: "heartbeat_term_fences_believing_old_leader" / "LegacyIgnoreHeartbeatTermBeforeInit", RANDOM;
    believing_old_leader_runs_when_term_discarded_pct: "heartbeat_term_fences_believing_old_leader" / "LegacyIgnoreHeartbeatTermBeforeInit", PCT3;
    stepped_down_old_leader_fenced_random: "heartbeat_term_fences_stepped_down_old_leader" / "SeedPatch", RANDOM;
    stepped_down_old_leader_fenced_pct: "heartbeat_term_fences_stepped_down_old_leader" / "SeedPatch", PCT3;
    stepped_down_old_leader_fenced_when_hardened_random: "heartbeat_term_fences_stepped_down_old_leader" / "Hardened", RANDOM;
    stepped_down_old_leader_runs_before_the_patch_random: "heartbeat_term_fences_stepped_down_old_leader" / "Legacy", RANDOM;
    stepped_down_old_leader_runs_before_the_patch_pct: "heartbeat_term_fences_stepped_down_old_leader" / "Legacy", PCT3;
    stepped_down_old_leader_runs_when_term_discarded_random: "heartbeat_term_fences_stepped_down_old_leader" / "LegacyIgnoreHeartbeatTermBeforeInit", RANDOM;
    stepped_down_old_leader_runs_when_term_discarded_pct: "heartbeat_term_fences_stepped_down_old_leader" / "LegacyIgnoreHeartbeatTermBeforeInit", PCT3;
    residual_window_closed_when_hardened_random: "deposed_leader_command_after_restart" / "Hardened", RANDOM;
    residual_window_closed_when_hardened_pct: "deposed_leader_command_after_restart" / "Hardened", PCT3;
    residual_window_open_in_seed_patch_random: "deposed_leader_command_after_restart" / "SeedPatch", RANDOM;
    residual_window_open_before_the_patch_random: "deposed_leader_command_after_restart" / "Legacy", RANDOM;
    residual_window_open_in_legacy_random: "deposed_leader_command_after_restart" / "LegacyIgnoreHeartbeatTermBeforeInit", RANDOM;
    seed_patch_keeps_highest_term_random: "concurrent_leader_heartbeats_keep_the_highest_term" / "SeedPatch", RANDOM;
    seed_patch_keeps_highest_term_pct: "concurrent_leader_heartbeats_keep_the_highest_term" / "SeedPatch", PCT3;
    hardened_keeps_highest_term_pct: "concurrent_leader_heartbeats_keep_the_highest_term" / "Hardened", PCT3;
    term_lost_before_the_patch_random: "concurrent_leader_heartbeats_keep_the_highest_term" / "Legacy", RANDOM;
    term_lost_before_the_patch_pct: "concurrent_leader_heartbeats_keep_the_highest_term" / "Legacy", PCT3;
    unlocked_term_update_caught_random: "concurrent_leader_heartbeats_keep_the_highest_term" / "LegacyUnlockedTermUpdate", RANDOM;
    unlocked_term_update_caught_pct: "concurrent_leader_heartbeats_keep_the_highest_term" / "LegacyUnlockedTermUpdate", PCT3;
    cluster_seed_patch_holds_random: "leader_transfers_never_run_a_stale_command" / "SeedPatch", RANDOM;
    cluster_seed_patch_holds_pct: "leader_transfers_never_run_a_stale_command" / "SeedPatch", PCT3;
    cluster_hardened_holds_random: "leader_transfers_never_run_a_stale_command" / "Hardened", RANDOM;
    cluster_hardened_holds_pct: "leader_transfers_never_run_a_stale_command" / "Hardened", PCT3;
    cluster_before_the_patch_caught_random: "leader_transfers_never_run_a_stale_command" / "Legacy", RANDOM;
    cluster_before_the_patch_caught_pct: "leader_transfers_never_run_a_stale_command" / "Legacy", PCT3;
    cluster_ignore_before_init_caught_random: "leader_transfers_never_run_a_stale_command" / "LegacyIgnoreHeartbeatTermBeforeInit", RANDOM;
    cluster_ignore_before_init_caught_pct: "leader_transfers_never_run_a_stale_command" / "LegacyIgnoreHeartbeatTermBeforeInit", PCT3;
    cluster_unlocked_update_caught_random: "leader_transfers_never_run_a_stale_command" / "LegacyUnlockedTermUpdate", RANDOM;
    believing_old_leader_runs_without_a_term_fence_random: "heartbeat_term_fences_believing_old_leader" / "LegacyNoTermFence", RANDOM;
    believing_old_leader_runs_without_a_heartbeat_term_pct: "heartbeat_term_fences_believing_old_leader" / "LegacyTermFromCommandsOnly", PCT3;
    stepped_down_old_leader_runs_without_a_term_fence_pct: "heartbeat_term_fences_stepped_down_old_leader" / "LegacyNoTermFence", PCT3;
    stepped_down_old_leader_runs_without_a_heartbeat_term_random: "heartbeat_term_fences_stepped_down_old_leader" / "LegacyTermFromCommandsOnly", RANDOM;
    cluster_runs_stale_commands_without_a_term_fence_random: "leader_transfers_never_run_a_stale_command" / "LegacyNoTermFence", RANDOM;
    cluster_runs_stale_commands_without_a_heartbeat_term_pct: "leader_transfers_never_run_a_stale_command" / "LegacyTermFromCommandsOnly", PCT3;
    cluster_runs_a_handed_over_stale_command_without_the_executor_check_random: "leader_transfers_never_run_a_stale_command" / "LegacyNoExecutorTermCheck", RANDOM;
    cluster_runs_a_handed_over_stale_command_without_the_executor_check_pct: "leader_transfers_never_run_a_stale_command" / "LegacyNoExecutorTermCheck", PCT3;
}

#[test]
fn every_catalogue_case_is_tested() {
    support::assert_every_case_listed(&catalogue::term_fencing(), include_str!("term_fencing.rs"));
}
