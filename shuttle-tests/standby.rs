//! Shuttle, HDFS-2742: every HA standby scenario of the catalogue under random and PCT
//! schedules (the seed's scripted reproductions, sequential, once). `Trunk` must
//! hold; each legacy variant must be caught within a bounded number of schedules, by the
//! schedulers the catalogue says reach it (two defects only PCT reaches; see
//! `catalogue::standby`).

use crate::support;

use crate::support::{PCT3, RANDOM};
use hadoop_ref::check::catalogue;
use hadoop_ref::scenarios::standby::{DEPARTED_SEED_KEY, LEAK_SEED_KEY, SEED_KEY};

shuttle_tests! {
    cases: catalogue::standby(), seed_key: SEED_KEY;
    trunk_keeps_a_replica_of_every_complete_block: "rbw_report_before_close_loses_no_replica" / "Trunk", RANDOM;
    whole_message_queue_loses_every_replica: "rbw_report_before_close_loses_no_replica" / "LegacyWholeMessageQueue", RANDOM;
    trunk_credits_replicas_reported_before_close: "safe_mode_credits_replicas_reported_before_close" / "Trunk", RANDOM;
    early_drain_leaves_safe_mode_counts_behind: "safe_mode_credits_replicas_reported_before_close" / "LegacyEarlyDrain", RANDOM;
    whole_message_queue_never_credits_replicas_reported_before_close: "safe_mode_credits_replicas_reported_before_close" / "LegacyWholeMessageQueue", RANDOM;
    trunk_failover_catch_up_marks_nothing_corrupt: "failover_judges_queued_reports_after_catch_up" / "Trunk", RANDOM;
    ha_state_check_marks_healthy_replica_corrupt_at_failover: "failover_judges_queued_reports_after_catch_up" / "LegacyHaStateCheck", RANDOM;
    trunk_purges_superseded_entry: "superseded_queued_report_is_purged" / "Trunk", RANDOM;
    no_purge_marks_current_replica_corrupt_at_failover: "superseded_queued_report_is_purged" / "LegacyNoStaleEntryPurge", RANDOM;
    trunk_records_replica_reported_between_genstamp_and_block_edits: "replica_reported_between_genstamp_and_block_edits_is_recorded" / "Trunk", RANDOM;
    no_impending_genstamp_drops_replica_reported_between_edits: "replica_reported_between_genstamp_and_block_edits_is_recorded" / "LegacyNoImpendingGenstamp", RANDOM;
    trunk_judges_queued_reports_at_their_block_edit: "queued_reports_judged_at_their_block_edit" / "Trunk", RANDOM;
    early_drain_leaves_a_restamped_block_report_queued: "queued_reports_judged_at_their_block_edit" / "LegacyEarlyDrain", RANDOM;
    whole_message_queue_judges_a_report_behind_a_future_one: "queued_reports_judged_at_their_block_edit" / "LegacyWholeMessageQueue", RANDOM;
    trunk_queues_what_the_datanode_reported: "stale_replica_queued_as_reported" / "Trunk", RANDOM;
    stored_block_queued_lets_a_stale_replica_pass: "stale_replica_queued_as_reported" / "LegacyQueueStoredBlock", RANDOM;
    rbw_race_trunk_holds_random: "rbw_report_races_completion" / "Trunk", RANDOM;
    rbw_race_trunk_holds_pct: "rbw_report_races_completion" / "Trunk", PCT3;
    rbw_race_whole_message_queue_caught_random: "rbw_report_races_completion" / "LegacyWholeMessageQueue", RANDOM;
    rbw_race_whole_message_queue_caught_pct: "rbw_report_races_completion" / "LegacyWholeMessageQueue", PCT3;
    rbw_race_no_purge_caught_pct: "rbw_report_races_completion" / "LegacyNoStaleEntryPurge", PCT3;
    split_batches_trunk_holds_random: "replica_reported_between_split_batches_is_recorded" / "Trunk", RANDOM;
    split_batches_trunk_holds_pct: "replica_reported_between_split_batches_is_recorded" / "Trunk", PCT3;
    split_batches_no_impending_genstamp_caught_random: "replica_reported_between_split_batches_is_recorded" / "LegacyNoImpendingGenstamp", RANDOM;
    split_batches_no_impending_genstamp_caught_pct: "replica_reported_between_split_batches_is_recorded" / "LegacyNoImpendingGenstamp", PCT3;
    cluster_trunk_holds_random: "failovers_lose_no_replica_and_keep_counts" / "Trunk", RANDOM;
    cluster_trunk_holds_pct: "failovers_lose_no_replica_and_keep_counts" / "Trunk", PCT3;
    cluster_whole_message_queue_caught_random: "failovers_lose_no_replica_and_keep_counts" / "LegacyWholeMessageQueue", RANDOM;
    cluster_whole_message_queue_caught_pct: "failovers_lose_no_replica_and_keep_counts" / "LegacyWholeMessageQueue", PCT3;
    cluster_early_drain_caught_pct: "failovers_lose_no_replica_and_keep_counts" / "LegacyEarlyDrain", PCT3;
    cluster_ha_state_check_caught_random: "failovers_lose_no_replica_and_keep_counts" / "LegacyHaStateCheck", RANDOM;
    cluster_ha_state_check_caught_pct: "failovers_lose_no_replica_and_keep_counts" / "LegacyHaStateCheck", PCT3;
    appends_trunk_leave_no_stale_location_random: "appends_leave_no_stale_location" / "Trunk", RANDOM;
    appends_trunk_leave_no_stale_location_pct: "appends_leave_no_stale_location" / "Trunk", PCT3;
}

shuttle_tests! {
    cases: catalogue::standby(), seed_key: LEAK_SEED_KEY;
    trunk_queue_empties_after_deletes_random: "deleted_blocks_leave_no_queued_reports" / "Trunk", RANDOM;
    trunk_queue_empties_after_deletes_pct: "deleted_blocks_leave_no_queued_reports" / "Trunk", PCT3;
    kept_removed_block_messages_leak_random: "deleted_blocks_leave_no_queued_reports" / "LegacyKeepRemovedBlockMessages", RANDOM;
    kept_removed_block_messages_leak_pct: "deleted_blocks_leave_no_queued_reports" / "LegacyKeepRemovedBlockMessages", PCT3;
}

shuttle_tests! {
    cases: catalogue::standby(), seed_key: DEPARTED_SEED_KEY;
    trunk_drops_a_departed_datanodes_queued_reports: "departed_datanode_leaves_no_queued_report" / "Trunk", RANDOM;
    kept_departed_datanode_messages_outlive_it: "departed_datanode_leaves_no_queued_report" / "LegacyKeepDepartedDatanodeMessages", RANDOM;
}

#[test]
fn every_catalogue_case_is_tested() {
    support::assert_every_case_listed(&catalogue::standby(), include_str!("standby.rs"));
}
