//! Shuttle, HDFS-2742: every HA standby scenario of the catalogue under random and PCT
//! schedules (the seed's scripted reproductions, sequential, once). Fixed variants must
//! hold; each legacy variant must be caught within a bounded number of schedules, by the
//! schedulers the catalogue says reach it (two defects only PCT reaches; see
//! `catalogue::standby`).

use crate::support;

use crate::support::{PCT3, RANDOM};
use hadoop_ref::check::catalogue;
use hadoop_ref::scenarios::standby::SEED_KEY;

shuttle_tests! {
    cases: catalogue::standby(), seed_key: SEED_KEY;
    fixed_standby_keeps_a_replica_of_every_complete_block: "rbw_report_before_close_loses_no_replica" / "Fixed", RANDOM;
    whole_message_queue_loses_every_replica: "rbw_report_before_close_loses_no_replica" / "LegacyWholeMessageQueue", RANDOM;
    fixed_standby_credits_replicas_reported_before_close: "safe_mode_credits_replicas_reported_before_close" / "Fixed", RANDOM;
    early_drain_leaves_safe_mode_counts_behind: "safe_mode_credits_replicas_reported_before_close" / "LegacyEarlyDrain", RANDOM;
    fixed_failover_catch_up_marks_nothing_corrupt: "failover_judges_queued_reports_after_catch_up" / "Fixed", RANDOM;
    ha_state_check_marks_healthy_replica_corrupt_at_failover: "failover_judges_queued_reports_after_catch_up" / "LegacyHaStateCheck", RANDOM;
    fixed_standby_purges_superseded_entry: "superseded_queued_report_is_purged" / "Fixed", RANDOM;
    no_purge_marks_current_replica_corrupt_at_failover: "superseded_queued_report_is_purged" / "LegacyNoStaleEntryPurge", RANDOM;
    rbw_race_fixed_holds_random: "rbw_report_races_completion" / "Fixed", RANDOM;
    rbw_race_fixed_holds_pct: "rbw_report_races_completion" / "Fixed", PCT3;
    rbw_race_whole_message_queue_caught_random: "rbw_report_races_completion" / "LegacyWholeMessageQueue", RANDOM;
    rbw_race_whole_message_queue_caught_pct: "rbw_report_races_completion" / "LegacyWholeMessageQueue", PCT3;
    rbw_race_no_purge_caught_pct: "rbw_report_races_completion" / "LegacyNoStaleEntryPurge", PCT3;
    cluster_fixed_holds_random: "failovers_lose_no_replica_and_keep_counts" / "Fixed", RANDOM;
    cluster_fixed_holds_pct: "failovers_lose_no_replica_and_keep_counts" / "Fixed", PCT3;
    cluster_whole_message_queue_caught_random: "failovers_lose_no_replica_and_keep_counts" / "LegacyWholeMessageQueue", RANDOM;
    cluster_whole_message_queue_caught_pct: "failovers_lose_no_replica_and_keep_counts" / "LegacyWholeMessageQueue", PCT3;
    cluster_early_drain_caught_pct: "failovers_lose_no_replica_and_keep_counts" / "LegacyEarlyDrain", PCT3;
}

#[test]
fn every_catalogue_case_is_tested() {
    support::assert_every_case_listed(&catalogue::standby(), include_str!("standby.rs"));
}
