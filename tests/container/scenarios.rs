//! The seed's reproductions (HDDS-16811) as sequential scenarios: their assertions pass
//! on the legacy code and fail on the patched code (the seed's patch and the hardened
//! code), and the invariants say the opposite; the checker scenarios run once each.

use hadoop_ref::datanode::container::ContainerBehavior;
use hadoop_ref::scenarios::container::{
    ContainerClusterShape, SEED_KEY, block_deleted_during_reconciliation_is_not_committed,
    concurrent_reconciliations, data_checksum_follows_concurrent_tree_writes,
    delete_during_partial_repair, delete_during_repair, delete_mid_reconcile,
    delete_then_reconcile, deleted_block_is_not_restored_by_reconciliation,
    deleted_block_restored_as_reported, deletes_and_repairs_keep_replicas_consistent,
    failed_deletion_tree_write_never_orphans_a_repair, metadata_without_file_as_reported,
};

/// The seed's MC2 shows the restored block on the legacy code.
#[test]
fn legacy_restores_a_deleted_block_as_reported() {
    let run = delete_then_reconcile(ContainerBehavior::Legacy).unwrap();
    deleted_block_restored_as_reported(&run).unwrap();
}

/// The seed's MC2 assertions fail on the patched code at the first step: the deletion of
/// a block without metadata leaves a tree entry.
#[test]
fn patched_records_the_deletion_the_report_missed() {
    for behavior in ContainerBehavior::PATCHED {
        let run = delete_then_reconcile(behavior).unwrap();
        let failed = deleted_block_restored_as_reported(&run).unwrap_err();
        assert!(failed.contains("no tree entry"), "{behavior:?}: {failed}");
    }
}

/// The seed's MC2 under the invariants.
#[test]
fn deleted_block_not_restored_holds_when_patched_and_catches_legacy() {
    for behavior in ContainerBehavior::PATCHED {
        deleted_block_is_not_restored_by_reconciliation(behavior).unwrap();
    }
    let violation =
        deleted_block_is_not_restored_by_reconciliation(ContainerBehavior::Legacy).unwrap_err();
    assert_eq!(violation.seed, SEED_KEY);
}

/// The seed's MC3 and its MISSING_CHUNK variant: metadata without its file on the legacy
/// code only.
#[test]
fn only_legacy_leaves_metadata_without_file_as_reported() {
    for partial in [false, true] {
        let legacy = delete_mid_reconcile(ContainerBehavior::Legacy, partial).unwrap();
        metadata_without_file_as_reported(&legacy, partial)
            .unwrap_or_else(|e| panic!("partial {partial}: {e}"));
        for behavior in ContainerBehavior::PATCHED {
            let patched = delete_mid_reconcile(behavior, partial).unwrap();
            assert!(
                metadata_without_file_as_reported(&patched, partial).is_err(),
                "{behavior:?}, partial {partial}"
            );
            assert!(
                !patched.metadata,
                "{behavior:?}, partial {partial}: no metadata committed"
            );
        }
    }
}

/// The seed's MC3 under the invariants.
#[test]
fn block_deleted_during_reconciliation_holds_when_patched_and_catches_legacy() {
    for partial in [false, true] {
        for behavior in ContainerBehavior::PATCHED {
            block_deleted_during_reconciliation_is_not_committed(behavior, partial)
                .unwrap_or_else(|v| panic!("{behavior:?}, partial {partial}: {v}"));
        }
        let violation = block_deleted_during_reconciliation_is_not_committed(
            ContainerBehavior::Legacy,
            partial,
        )
        .unwrap_err();
        assert_eq!(violation.seed, SEED_KEY, "{violation}");
    }
}

#[test]
fn delete_during_repair_sequentially_holds_when_patched() {
    for behavior in ContainerBehavior::PATCHED {
        delete_during_repair(behavior).unwrap_or_else(|v| panic!("{behavior:?}: {v}"));
        delete_during_partial_repair(behavior).unwrap_or_else(|v| panic!("{behavior:?}: {v}"));
    }
}

#[test]
fn cluster_holds_when_patched_for_many_seeds() {
    for behavior in ContainerBehavior::PATCHED {
        for seed in 0..200 {
            deletes_and_repairs_keep_replicas_consistent(
                behavior,
                seed,
                ContainerClusterShape::default(),
            )
            .unwrap_or_else(|v| panic!("{behavior:?}, seed {seed}: {v}"));
        }
    }
}

/// Through the handler both patched behaviors hold; around it only the hardened code is
/// held to it (the checkers catch the seed's patch there).
#[test]
fn concurrent_reconciliations_on_threads_hold_when_patched() {
    for behavior in ContainerBehavior::PATCHED {
        concurrent_reconciliations(behavior, true).unwrap_or_else(|v| panic!("{behavior:?}: {v}"));
    }
    concurrent_reconciliations(ContainerBehavior::Hardened, false).unwrap();
}

/// The races beyond the seed, on threads without a checker: the hardened code holds (the
/// checkers show the seed's patch caught).
#[test]
fn beyond_the_seed_races_hold_when_hardened() {
    for _ in 0..20 {
        data_checksum_follows_concurrent_tree_writes(ContainerBehavior::Hardened).unwrap();
        failed_deletion_tree_write_never_orphans_a_repair(ContainerBehavior::Hardened).unwrap();
    }
}
