//! Shuttle, HDDS-16811: every container reconciliation scenario of the catalogue under
//! random and PCT schedules (the seed's sequential reproductions, MC2 and MC3, once). Fixed variants
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
    fixed_keeps_a_deleted_block_deleted: "deleted_block_not_restored" / "Fixed", RANDOM;
    legacy_restored_block_is_caught: "deleted_block_not_restored" / "Legacy", RANDOM;
    fixed_commits_nothing_of_a_block_deleted_mid_repair: "block_deleted_during_reconciliation" / "Fixed", RANDOM;
    legacy_missing_data_file_is_caught: "block_deleted_during_reconciliation" / "Legacy", RANDOM;
    fixed_partial_repair_commits_nothing_of_a_deleted_block: "block_deleted_during_partial_reconciliation" / "Fixed", RANDOM;
    legacy_missing_chunk_is_caught: "block_deleted_during_partial_reconciliation" / "Legacy", RANDOM;
    cluster_fixed_holds_random: "deletes_and_repairs_keep_replicas_consistent" / "Fixed", RANDOM;
    cluster_fixed_holds_pct: "deletes_and_repairs_keep_replicas_consistent" / "Fixed", PCT3;
    cluster_legacy_caught_random: "deletes_and_repairs_keep_replicas_consistent" / "Legacy", RANDOM;
    cluster_legacy_caught_pct: "deletes_and_repairs_keep_replicas_consistent" / "Legacy", PCT3;
    concurrent_reconciliations_holds_random: "concurrent_reconciliations" / "Fixed", RANDOM;
    concurrent_reconciliations_holds_pct: "concurrent_reconciliations" / "Fixed", PCT3;
    unguarded_reconciliations_hold_random: "concurrent_reconciliations_unguarded" / "Fixed", RANDOM;
    unguarded_reconciliations_hold_pct: "concurrent_reconciliations_unguarded" / "Fixed", PCT3;
}

#[test]
fn every_catalogue_case_is_tested() {
    support::assert_every_case_listed(&catalogue::container(), include_str!("container.rs"));
}
