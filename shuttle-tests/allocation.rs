//! Shuttle, HDDS-16891: every SCM pending-allocation scenario of the catalogue under
//! random and PCT schedules (sequential ones, like the seed's MC8, once). Fixed variants
//! must hold; each legacy variant must be caught within a bounded number of schedules.

use crate::support;

use crate::support::{PCT3, RANDOM};
use hadoop_ref::check::catalogue;
use hadoop_ref::scenarios::allocation::SEED_KEY;

shuttle_tests! {
    cases: catalogue::allocation(), seed_key: SEED_KEY;
    mc8_transfer_new_leader_refuses_c2: "mc8_transfer" / "Fixed", RANDOM;
    mc8_transfer_legacy_grants_c2: "mc8_transfer" / "LegacyNoRebuild", RANDOM;
    mc8_single_scm_restart_refuses_c2: "mc8_restart_single_scm" / "Fixed", RANDOM;
    mc8_single_scm_restart_legacy_grants_c2: "mc8_restart_single_scm" / "LegacyNoRebuild", RANDOM;
    mc8_all_scms_restart_refuses_c2: "mc8_restart_all_scms" / "Fixed", RANDOM;
    mc8_all_scms_restart_legacy_grants_c2: "mc8_restart_all_scms" / "LegacyNoRebuild", RANDOM;
    gate_holds_random: "rebuild_gate_race" / "Fixed", RANDOM;
    gate_holds_pct: "rebuild_gate_race" / "Fixed", PCT3;
    ungated_rebuild_caught_random: "rebuild_gate_race" / "LegacyRebuildWithoutGate", RANDOM;
    ungated_rebuild_caught_pct: "rebuild_gate_race" / "LegacyRebuildWithoutGate", PCT3;
    no_rebuild_caught_in_gate_race_random: "rebuild_gate_race" / "LegacyNoRebuild", RANDOM;
    reelection_holds_random: "reelection_race" / "Fixed", RANDOM;
    reelection_holds_pct: "reelection_race" / "Fixed", PCT3;
    report_order_holds_random: "report_order_race" / "Fixed", RANDOM;
    report_order_holds_pct: "report_order_race" / "Fixed", PCT3;
    cluster_fixed_holds_random: "allocation_cluster" / "Fixed", RANDOM;
    cluster_fixed_holds_pct: "allocation_cluster" / "Fixed", PCT3;
    cluster_no_rebuild_caught_random: "allocation_cluster" / "LegacyNoRebuild", RANDOM;
    cluster_no_rebuild_caught_pct: "allocation_cluster" / "LegacyNoRebuild", PCT3;
    cluster_ungated_rebuild_caught_random: "allocation_cluster" / "LegacyRebuildWithoutGate", RANDOM;
    cluster_ungated_rebuild_caught_pct: "allocation_cluster" / "LegacyRebuildWithoutGate", PCT3;
}

#[test]
fn every_catalogue_case_is_tested() {
    support::assert_every_case_listed(&catalogue::allocation(), include_str!("allocation.rs"));
}
