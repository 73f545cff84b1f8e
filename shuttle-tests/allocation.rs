//! Shuttle, HDDS-16891: every SCM pending-allocation scenario of the catalogue under
//! random and PCT schedules (sequential ones, like the seed's MC8, once). `Hardened` must
//! hold everywhere; every other variant must be caught where the catalogue says so, and
//! hold where it says so (a defect the scenario cannot reach).

use crate::support;

use crate::support::{PCT3, RANDOM};
use hadoop_ref::check::catalogue;
use hadoop_ref::scenarios::allocation::SEED_KEY;

shuttle_tests! {
    cases: catalogue::allocation(), seed_key: SEED_KEY;
    // The seed's MC8, sequential.
    new_leader_after_transfer_refuses_second_container: "transfer_keeps_unwritten_slots" / "Hardened", RANDOM;
    seed_patch_new_leader_after_transfer_refuses_second_container: "transfer_keeps_unwritten_slots" / "SeedPatch", RANDOM;
    legacy_new_leader_after_transfer_grants_second_container: "transfer_keeps_unwritten_slots" / "LegacyNoRebuild", RANDOM;
    sequential_ungated_rebuild_after_transfer_refuses_second_container: "transfer_keeps_unwritten_slots" / "LegacyRebuildWithoutGate", RANDOM;
    hardened_rebuild_keeps_a_closed_unreported_containers_slot: "unreported_closing_container_keeps_its_slot" / "Hardened", RANDOM;
    seed_rebuild_grants_a_closed_unreported_containers_slot: "unreported_closing_container_keeps_its_slot" / "SeedPatch", RANDOM;
    no_rebuild_grants_a_closed_unreported_containers_slot: "unreported_closing_container_keeps_its_slot" / "LegacyNoRebuild", RANDOM;
    ungated_rebuild_grants_a_closed_unreported_containers_slot: "unreported_closing_container_keeps_its_slot" / "LegacyRebuildWithoutGate", RANDOM;
    hardened_pending_slots_are_the_unwritten_grants: "pending_slots_are_the_unwritten_grants" / "Hardened", RANDOM;
    seed_patch_pending_slots_are_the_unwritten_grants: "pending_slots_are_the_unwritten_grants" / "SeedPatch", RANDOM;
    ungated_pending_slots_are_the_unwritten_grants: "pending_slots_are_the_unwritten_grants" / "LegacyRebuildWithoutGate", RANDOM;
    no_rebuild_forgets_the_unwritten_grants: "pending_slots_are_the_unwritten_grants" / "LegacyNoRebuild", RANDOM;
    restarted_single_scm_refuses_second_container: "single_scm_restart_keeps_unwritten_slots" / "Hardened", RANDOM;
    seed_patch_restarted_single_scm_refuses_second_container: "single_scm_restart_keeps_unwritten_slots" / "SeedPatch", RANDOM;
    legacy_restarted_single_scm_grants_second_container: "single_scm_restart_keeps_unwritten_slots" / "LegacyNoRebuild", RANDOM;
    sequential_ungated_rebuild_after_single_restart_refuses_second_container: "single_scm_restart_keeps_unwritten_slots" / "LegacyRebuildWithoutGate", RANDOM;
    restarted_scms_refuse_second_container: "all_scms_restart_keeps_unwritten_slots" / "Hardened", RANDOM;
    seed_patch_restarted_scms_refuse_second_container: "all_scms_restart_keeps_unwritten_slots" / "SeedPatch", RANDOM;
    legacy_restarted_scms_grant_second_container: "all_scms_restart_keeps_unwritten_slots" / "LegacyNoRebuild", RANDOM;
    sequential_ungated_rebuild_after_restarts_refuses_second_container: "all_scms_restart_keeps_unwritten_slots" / "LegacyRebuildWithoutGate", RANDOM;
    // Re-registration with changed details, sequential (beyond the seed).
    kept_bucket_after_address_change_refuses_second_container: "address_change_keeps_unwritten_slots" / "Hardened", RANDOM;
    seed_patch_after_address_change_grants_second_container: "address_change_keeps_unwritten_slots" / "SeedPatch", RANDOM;
    legacy_after_address_change_grants_second_container: "address_change_keeps_unwritten_slots" / "LegacyNoRebuild", RANDOM;
    ungated_rebuild_after_address_change_grants_second_container: "address_change_keeps_unwritten_slots" / "LegacyRebuildWithoutGate", RANDOM;
    kept_bucket_after_upgrade_refuses_second_container: "version_change_keeps_unwritten_slots" / "Hardened", RANDOM;
    seed_patch_after_upgrade_grants_second_container: "version_change_keeps_unwritten_slots" / "SeedPatch", RANDOM;
    legacy_after_upgrade_grants_second_container: "version_change_keeps_unwritten_slots" / "LegacyNoRebuild", RANDOM;
    ungated_rebuild_after_upgrade_grants_second_container: "version_change_keeps_unwritten_slots" / "LegacyRebuildWithoutGate", RANDOM;
    kept_bucket_after_port_change_refuses_second_container: "port_change_keeps_unwritten_slots" / "Hardened", RANDOM;
    seed_patch_after_port_change_grants_second_container: "port_change_keeps_unwritten_slots" / "SeedPatch", RANDOM;
    legacy_after_port_change_grants_second_container: "port_change_keeps_unwritten_slots" / "LegacyNoRebuild", RANDOM;
    ungated_rebuild_after_port_change_grants_second_container: "port_change_keeps_unwritten_slots" / "LegacyRebuildWithoutGate", RANDOM;
    // The gate race.
    gate_holds_random: "allocation_waits_for_the_rebuild" / "Hardened", RANDOM;
    gate_holds_pct: "allocation_waits_for_the_rebuild" / "Hardened", PCT3;
    seed_patch_gate_holds_random: "allocation_waits_for_the_rebuild" / "SeedPatch", RANDOM;
    seed_patch_gate_holds_pct: "allocation_waits_for_the_rebuild" / "SeedPatch", PCT3;
    ungated_rebuild_caught_random: "allocation_waits_for_the_rebuild" / "LegacyRebuildWithoutGate", RANDOM;
    ungated_rebuild_caught_pct: "allocation_waits_for_the_rebuild" / "LegacyRebuildWithoutGate", PCT3;
    no_rebuild_caught_in_gate_race_random: "allocation_waits_for_the_rebuild" / "LegacyNoRebuild", RANDOM;
    // The re-election race (beyond the seed).
    reelection_holds_random: "rebuild_sees_allocation_committed_across_reelection" / "Hardened", RANDOM;
    reelection_holds_pct: "rebuild_sees_allocation_committed_across_reelection" / "Hardened", PCT3;
    seed_patch_reelection_caught_random: "rebuild_sees_allocation_committed_across_reelection" / "SeedPatch", RANDOM;
    seed_patch_reelection_caught_pct: "rebuild_sees_allocation_committed_across_reelection" / "SeedPatch", PCT3;
    no_rebuild_keeps_reelection_reservation_random: "rebuild_sees_allocation_committed_across_reelection" / "LegacyNoRebuild", RANDOM;
    ungated_rebuild_reelection_caught_random: "rebuild_sees_allocation_committed_across_reelection" / "LegacyRebuildWithoutGate", RANDOM;
    ungated_rebuild_reelection_caught_pct: "rebuild_sees_allocation_committed_across_reelection" / "LegacyRebuildWithoutGate", PCT3;
    // The report-order race (beyond the seed).
    report_order_holds_random: "space_check_sees_created_container" / "Hardened", RANDOM;
    report_order_holds_pct: "space_check_sees_created_container" / "Hardened", PCT3;
    seed_patch_report_order_caught_random: "space_check_sees_created_container" / "SeedPatch", RANDOM;
    seed_patch_report_order_caught_pct: "space_check_sees_created_container" / "SeedPatch", PCT3;
    no_rebuild_report_order_caught_random: "space_check_sees_created_container" / "LegacyNoRebuild", RANDOM;
    ungated_rebuild_report_order_caught_random: "space_check_sees_created_container" / "LegacyRebuildWithoutGate", RANDOM;
    // Re-registration racing an allocation (beyond the seed).
    reregistration_keeps_slot_random: "reregistration_during_allocation_keeps_the_slot" / "Hardened", RANDOM;
    reregistration_keeps_slot_pct: "reregistration_during_allocation_keeps_the_slot" / "Hardened", PCT3;
    seed_patch_reregistration_caught_random: "reregistration_during_allocation_keeps_the_slot" / "SeedPatch", RANDOM;
    seed_patch_reregistration_caught_pct: "reregistration_during_allocation_keeps_the_slot" / "SeedPatch", PCT3;
    no_rebuild_reregistration_caught_random: "reregistration_during_allocation_keeps_the_slot" / "LegacyNoRebuild", RANDOM;
    ungated_rebuild_reregistration_caught_random: "reregistration_during_allocation_keeps_the_slot" / "LegacyRebuildWithoutGate", RANDOM;
    // The random cluster.
    cluster_hardened_holds_random: "random_failovers_never_over_grant" / "Hardened", RANDOM;
    cluster_hardened_holds_pct: "random_failovers_never_over_grant" / "Hardened", PCT3;
    cluster_seed_patch_caught_random: "random_failovers_never_over_grant" / "SeedPatch", RANDOM;
    cluster_seed_patch_caught_pct: "random_failovers_never_over_grant" / "SeedPatch", PCT3;
    cluster_no_rebuild_caught_random: "random_failovers_never_over_grant" / "LegacyNoRebuild", RANDOM;
    cluster_no_rebuild_caught_pct: "random_failovers_never_over_grant" / "LegacyNoRebuild", PCT3;
    cluster_ungated_rebuild_caught_random: "random_failovers_never_over_grant" / "LegacyRebuildWithoutGate", RANDOM;
    cluster_ungated_rebuild_caught_pct: "random_failovers_never_over_grant" / "LegacyRebuildWithoutGate", PCT3;
}

#[test]
fn every_catalogue_case_is_tested() {
    support::assert_every_case_listed(&catalogue::allocation(), include_str!("allocation.rs"));
}
