//! Shuttle, HDDS-16891: every SCM pending-allocation scenario of the catalogue under
//! random and PCT schedules (sequential ones, like the seed's MC8, once). Fixed variants
//! must hold; each legacy variant must be caught within a bounded number of schedules.

use crate::support;

use crate::support::{PCT3, RANDOM};
use hadoop_ref::check::catalogue;
use hadoop_ref::scenarios::allocation::SEED_KEY;

shuttle_tests! {
    cases: catalogue::allocation(), seed_key: SEED_KEY;
    new_leader_after_transfer_refuses_second_container: "transfer_keeps_unwritten_slots" / "Fixed", RANDOM;
    legacy_new_leader_after_transfer_grants_second_container: "transfer_keeps_unwritten_slots" / "LegacyNoRebuild", RANDOM;
    restarted_single_scm_refuses_second_container: "single_scm_restart_keeps_unwritten_slots" / "Fixed", RANDOM;
    legacy_restarted_single_scm_grants_second_container: "single_scm_restart_keeps_unwritten_slots" / "LegacyNoRebuild", RANDOM;
    restarted_scms_refuse_second_container: "all_scms_restart_keeps_unwritten_slots" / "Fixed", RANDOM;
    legacy_restarted_scms_grant_second_container: "all_scms_restart_keeps_unwritten_slots" / "LegacyNoRebuild", RANDOM;
    gate_holds_random: "allocation_waits_for_the_rebuild" / "Fixed", RANDOM;
    gate_holds_pct: "allocation_waits_for_the_rebuild" / "Fixed", PCT3;
    ungated_rebuild_caught_random: "allocation_waits_for_the_rebuild" / "LegacyRebuildWithoutGate", RANDOM;
    ungated_rebuild_caught_pct: "allocation_waits_for_the_rebuild" / "LegacyRebuildWithoutGate", PCT3;
    no_rebuild_caught_in_gate_race_random: "allocation_waits_for_the_rebuild" / "LegacyNoRebuild", RANDOM;
    reelection_holds_random: "rebuild_sees_allocation_committed_across_reelection" / "Fixed", RANDOM;
    reelection_holds_pct: "rebuild_sees_allocation_committed_across_reelection" / "Fixed", PCT3;
    report_order_holds_random: "space_check_sees_created_container" / "Fixed", RANDOM;
    report_order_holds_pct: "space_check_sees_created_container" / "Fixed", PCT3;
    cluster_fixed_holds_random: "random_failovers_never_over_grant" / "Fixed", RANDOM;
    cluster_fixed_holds_pct: "random_failovers_never_over_grant" / "Fixed", PCT3;
    cluster_no_rebuild_caught_random: "random_failovers_never_over_grant" / "LegacyNoRebuild", RANDOM;
    cluster_no_rebuild_caught_pct: "random_failovers_never_over_grant" / "LegacyNoRebuild", PCT3;
    cluster_ungated_rebuild_caught_random: "random_failovers_never_over_grant" / "LegacyRebuildWithoutGate", RANDOM;
    cluster_ungated_rebuild_caught_pct: "random_failovers_never_over_grant" / "LegacyRebuildWithoutGate", PCT3;
}

#[test]
fn every_catalogue_case_is_tested() {
    support::assert_every_case_listed(&catalogue::allocation(), include_str!("allocation.rs"));
}
