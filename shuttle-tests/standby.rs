//! Shuttle, HDFS-2742: every HA standby scenario of the catalogue under random and PCT
//! schedules (the spec 12 schedules, sequential, once). Fixed variants must hold; each
//! legacy variant must be caught within a bounded number of schedules, by the schedulers
//! the catalogue says reach it (two defects only PCT reaches; see `catalogue::standby`).

use crate::support;

use crate::support::{PCT3, RANDOM};
use hadoop_ref::check::catalogue;
use hadoop_ref::scenarios::standby::SEED_KEY;

shuttle_tests! {
    cases: catalogue::standby(), seed_key: SEED_KEY;
    schedule_12_1_fixed_keeps_a_replica: "schedule_12_1_data_loss_chain" / "Fixed", RANDOM;
    schedule_12_1_whole_message_queue_loses_every_replica: "schedule_12_1_data_loss_chain" / "LegacyWholeMessageQueue", RANDOM;
    schedule_12_2_fixed_reaches_15_of_15: "schedule_12_2_safe_mode_credit" / "Fixed", RANDOM;
    schedule_12_2_early_drain_stays_at_10_of_15: "schedule_12_2_safe_mode_credit" / "LegacyEarlyDrain", RANDOM;
    schedule_12_3_fixed_catch_up_marks_nothing: "schedule_12_3_failover_catch_up" / "Fixed", RANDOM;
    schedule_12_3_ha_state_check_marks_corrupt: "schedule_12_3_failover_catch_up" / "LegacyHaStateCheck", RANDOM;
    schedule_12_5_fixed_purges_superseded_entry: "schedule_12_5_superseded_entry" / "Fixed", RANDOM;
    schedule_12_5_no_purge_marks_corrupt: "schedule_12_5_superseded_entry" / "LegacyNoStaleEntryPurge", RANDOM;
    rbw_race_fixed_holds_random: "rbw_report_races_completion" / "Fixed", RANDOM;
    rbw_race_fixed_holds_pct: "rbw_report_races_completion" / "Fixed", PCT3;
    rbw_race_whole_message_queue_caught_random: "rbw_report_races_completion" / "LegacyWholeMessageQueue", RANDOM;
    rbw_race_whole_message_queue_caught_pct: "rbw_report_races_completion" / "LegacyWholeMessageQueue", PCT3;
    rbw_race_no_purge_caught_pct: "rbw_report_races_completion" / "LegacyNoStaleEntryPurge", PCT3;
    cluster_fixed_holds_random: "standby_cluster" / "Fixed", RANDOM;
    cluster_fixed_holds_pct: "standby_cluster" / "Fixed", PCT3;
    cluster_whole_message_queue_caught_random: "standby_cluster" / "LegacyWholeMessageQueue", RANDOM;
    cluster_whole_message_queue_caught_pct: "standby_cluster" / "LegacyWholeMessageQueue", PCT3;
    cluster_early_drain_caught_pct: "standby_cluster" / "LegacyEarlyDrain", PCT3;
}

#[test]
fn every_catalogue_case_is_tested() {
    support::assert_every_case_listed(&catalogue::standby(), include_str!("standby.rs"));
}
