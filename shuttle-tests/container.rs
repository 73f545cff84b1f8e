//! Shuttle, HDDS-16811: every container reconciliation scenario of the catalogue under
//! random and PCT schedules (the seed's sequential reproductions, MC2 and MC3, once). The
//! seed's patch and the hardened code must hold where the seed's race is the subject, and
//! the legacy code be caught; each race beyond the seed must catch the seed's patch (or,
//! for the hardened code's own cleanup, the hardened code with it switched off) and the
//! hardened code must hold. The scanner against a deleting round (HDDS-7300): Ozone's
//! second look under the read lock holds, the one before it is caught.

use crate::support;

use crate::support::{PCT3, RANDOM};
use hadoop_ref::check::catalogue;
use hadoop_ref::scenarios::container::SEED_KEY;

shuttle_tests! {
    cases: catalogue::container(), seed_key: SEED_KEY;
    scan_during_deletion_seed_patch_holds_random: "scan_during_block_deletion" / "SeedPatch", RANDOM;
    scan_during_deletion_hardened_holds_random: "scan_during_block_deletion" / "Hardened", RANDOM;
    scan_during_deletion_hardened_holds_pct: "scan_during_block_deletion" / "Hardened", PCT3;
    scan_during_deletion_unlocked_recheck_caught_random: "scan_during_block_deletion" / "LegacyRecheckWithoutLock", RANDOM;
    scan_during_deletion_unlocked_recheck_caught_pct: "scan_during_block_deletion" / "LegacyRecheckWithoutLock", PCT3;
    delete_during_repair_seed_patch_holds_random: "delete_during_repair" / "SeedPatch", RANDOM;
    delete_during_repair_seed_patch_holds_pct: "delete_during_repair" / "SeedPatch", PCT3;
    delete_during_repair_hardened_holds_random: "delete_during_repair" / "Hardened", RANDOM;
    delete_during_repair_hardened_holds_pct: "delete_during_repair" / "Hardened", PCT3;
    delete_during_repair_legacy_caught_random: "delete_during_repair" / "Legacy", RANDOM;
    delete_during_repair_legacy_caught_pct: "delete_during_repair" / "Legacy", PCT3;
    partial_repair_seed_patch_holds_random: "delete_during_partial_repair" / "SeedPatch", RANDOM;
    partial_repair_seed_patch_holds_pct: "delete_during_partial_repair" / "SeedPatch", PCT3;
    partial_repair_hardened_holds_random: "delete_during_partial_repair" / "Hardened", RANDOM;
    partial_repair_hardened_holds_pct: "delete_during_partial_repair" / "Hardened", PCT3;
    partial_repair_legacy_caught_random: "delete_during_partial_repair" / "Legacy", RANDOM;
    partial_repair_legacy_caught_pct: "delete_during_partial_repair" / "Legacy", PCT3;
    seed_patch_keeps_a_deleted_block_deleted: "deleted_block_not_restored" / "SeedPatch", RANDOM;
    hardened_keeps_a_deleted_block_deleted: "deleted_block_not_restored" / "Hardened", RANDOM;
    legacy_restored_block_is_caught: "deleted_block_not_restored" / "Legacy", RANDOM;
    seed_patch_commits_nothing_of_a_block_deleted_mid_repair: "block_deleted_during_reconciliation" / "SeedPatch", RANDOM;
    hardened_commits_nothing_of_a_block_deleted_mid_repair: "block_deleted_during_reconciliation" / "Hardened", RANDOM;
    legacy_missing_data_file_is_caught: "block_deleted_during_reconciliation" / "Legacy", RANDOM;
    seed_patch_partial_repair_commits_nothing_of_a_deleted_block: "block_deleted_during_partial_reconciliation" / "SeedPatch", RANDOM;
    hardened_partial_repair_commits_nothing_of_a_deleted_block: "block_deleted_during_partial_reconciliation" / "Hardened", RANDOM;
    legacy_missing_chunk_is_caught: "block_deleted_during_partial_reconciliation" / "Legacy", RANDOM;
    cluster_seed_patch_holds_random: "deletes_and_repairs_keep_replicas_consistent" / "SeedPatch", RANDOM;
    cluster_seed_patch_holds_pct: "deletes_and_repairs_keep_replicas_consistent" / "SeedPatch", PCT3;
    cluster_hardened_holds_random: "deletes_and_repairs_keep_replicas_consistent" / "Hardened", RANDOM;
    cluster_hardened_holds_pct: "deletes_and_repairs_keep_replicas_consistent" / "Hardened", PCT3;
    cluster_legacy_caught_random: "deletes_and_repairs_keep_replicas_consistent" / "Legacy", RANDOM;
    cluster_legacy_caught_pct: "deletes_and_repairs_keep_replicas_consistent" / "Legacy", PCT3;
    concurrent_reconciliations_seed_patch_holds_random: "concurrent_reconciliations" / "SeedPatch", RANDOM;
    concurrent_reconciliations_seed_patch_holds_pct: "concurrent_reconciliations" / "SeedPatch", PCT3;
    concurrent_reconciliations_hardened_holds_random: "concurrent_reconciliations" / "Hardened", RANDOM;
    concurrent_reconciliations_hardened_holds_pct: "concurrent_reconciliations" / "Hardened", PCT3;
    unguarded_partial_commit_caught_random: "concurrent_reconciliations_unguarded" / "SeedPatch", RANDOM;
    unguarded_partial_commit_caught_pct: "concurrent_reconciliations_unguarded" / "SeedPatch", PCT3;
    unguarded_reconciliations_hardened_hold_random: "concurrent_reconciliations_unguarded" / "Hardened", RANDOM;
    unguarded_reconciliations_hardened_hold_pct: "concurrent_reconciliations_unguarded" / "Hardened", PCT3;
    cleanup_under_the_read_lock_caught_random: "concurrent_reconciliations_unguarded" / "HardenedCleanupUnderReadLock", RANDOM;
    cleanup_under_the_read_lock_caught_pct: "concurrent_reconciliations_unguarded" / "HardenedCleanupUnderReadLock", PCT3;
    refresh_in_ozones_order_caught_random: "data_checksum_follows_concurrent_tree_writes" / "SeedPatch", RANDOM;
    refresh_in_ozones_order_caught_pct: "data_checksum_follows_concurrent_tree_writes" / "SeedPatch", PCT3;
    refresh_inside_the_tree_write_holds_random: "data_checksum_follows_concurrent_tree_writes" / "Hardened", RANDOM;
    refresh_inside_the_tree_write_holds_pct: "data_checksum_follows_concurrent_tree_writes" / "Hardened", PCT3;
    tree_check_alone_orphans_a_repair_caught_random: "failed_deletion_tree_write_never_orphans_a_repair" / "SeedPatch", RANDOM;
    tree_check_alone_orphans_a_repair_caught_pct: "failed_deletion_tree_write_never_orphans_a_repair" / "SeedPatch", PCT3;
    file_check_keeps_a_repair_whole_random: "failed_deletion_tree_write_never_orphans_a_repair" / "Hardened", RANDOM;
    file_check_keeps_a_repair_whole_pct: "failed_deletion_tree_write_never_orphans_a_repair" / "Hardened", PCT3;
}

#[test]
fn every_catalogue_case_is_tested() {
    support::assert_every_case_listed(&catalogue::container(), include_str!("container.rs"));
}
