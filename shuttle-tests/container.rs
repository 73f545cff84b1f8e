//! Shuttle, HDDS-16811: every container reconciliation scenario of the catalogue under
//! random and PCT schedules (the seed's sequential reproductions once). Fixed variants
//! must hold; each legacy variant must be caught within a bounded number of schedules.

use crate::support;

use crate::support::{PCT3, RANDOM};
use hadoop_ref::check::catalogue;
use hadoop_ref::scenarios::container::SEED_KEY;

shuttle_tests! {
    cases: catalogue::container(), seed_key: SEED_KEY;
    delete_during_repair_holds_random: "delete_during_repair" / "Fixed", RANDOM;
    delete_during_repair_holds_pct: "delete_during_repair" / "Fixed", PCT3;
    delete_during_repair_legacy_caught_random: "delete_during_repair" / "Legacy", RANDOM;
    delete_during_repair_legacy_caught_pct: "delete_during_repair" / "Legacy", PCT3;
    partial_repair_holds_random: "delete_during_partial_repair" / "Fixed", RANDOM;
    partial_repair_holds_pct: "delete_during_partial_repair" / "Fixed", PCT3;
    partial_repair_legacy_caught_random: "delete_during_partial_repair" / "Legacy", RANDOM;
    partial_repair_legacy_caught_pct: "delete_during_partial_repair" / "Legacy", PCT3;
    mc2_fixed_keeps_block_deleted: "mc2_deleted_block_restored" / "Fixed", RANDOM;
    mc2_legacy_restores_block: "mc2_deleted_block_restored" / "Legacy", RANDOM;
    mc3_fixed_commits_nothing: "mc3_metadata_without_file" / "Fixed", RANDOM;
    mc3_legacy_missing_data_file: "mc3_metadata_without_file" / "Legacy", RANDOM;
    mc3_partial_fixed_commits_nothing: "mc3_missing_chunk" / "Fixed", RANDOM;
    mc3_partial_legacy_missing_chunk: "mc3_missing_chunk" / "Legacy", RANDOM;
    cluster_fixed_holds_random: "container_cluster" / "Fixed", RANDOM;
    cluster_fixed_holds_pct: "container_cluster" / "Fixed", PCT3;
    cluster_legacy_caught_random: "container_cluster" / "Legacy", RANDOM;
    cluster_legacy_caught_pct: "container_cluster" / "Legacy", PCT3;
    concurrent_reconciliations_holds_random: "concurrent_reconciliations" / "Fixed", RANDOM;
    concurrent_reconciliations_holds_pct: "concurrent_reconciliations" / "Fixed", PCT3;
    unguarded_reconciliations_hold_random: "concurrent_reconciliations_unguarded" / "Fixed", RANDOM;
    unguarded_reconciliations_hold_pct: "concurrent_reconciliations_unguarded" / "Fixed", PCT3;
}

#[test]
fn every_catalogue_case_is_tested() {
    support::assert_every_case_listed(&catalogue::container(), include_str!("container.rs"));
}
