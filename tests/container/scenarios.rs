//! The seed's reproductions (HDDS-16811) as sequential scenarios: their assertions pass
//! on the legacy code and fail on the fixed code, and the invariants say the opposite.

use hadoop_ref::datanode::container::ContainerBehavior;
use hadoop_ref::scenarios::container::{
    ContainerClusterShape, SEED_KEY, block_deleted_during_reconciliation_is_not_committed,
    concurrent_reconciliations, delete_during_repair, delete_mid_reconcile, delete_then_reconcile,
    deleted_block_is_not_restored_by_reconciliation, deleted_block_restored_as_reported,
    deletes_and_repairs_keep_replicas_consistent, metadata_without_file_as_reported,
};

/// The seed's MC2 shows the restored block on the legacy code.
#[test]
fn legacy_restores_a_deleted_block_as_reported() {
    let run = delete_then_reconcile(ContainerBehavior::Legacy).unwrap();
    deleted_block_restored_as_reported(&run).unwrap();
}

/// The seed's MC2 assertions fail on the fixed code at the first step: the deletion of a
/// block without metadata leaves a tree entry.
#[test]
fn fixed_records_the_deletion_the_report_missed() {
    let run = delete_then_reconcile(ContainerBehavior::Fixed).unwrap();
    let failed = deleted_block_restored_as_reported(&run).unwrap_err();
    assert!(failed.contains("no tree entry"), "{failed}");
}

/// The seed's MC2 under the invariants.
#[test]
fn deleted_block_not_restored_holds_on_fixed_and_catches_legacy() {
    deleted_block_is_not_restored_by_reconciliation(ContainerBehavior::Fixed).unwrap();
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
        let fixed = delete_mid_reconcile(ContainerBehavior::Fixed, partial).unwrap();
        assert!(
            metadata_without_file_as_reported(&fixed, partial).is_err(),
            "partial {partial}"
        );
        assert!(!fixed.metadata, "partial {partial}: no metadata committed");
    }
}

/// The seed's MC3 under the invariants.
#[test]
fn block_deleted_during_reconciliation_holds_on_fixed_and_catches_legacy() {
    for partial in [false, true] {
        block_deleted_during_reconciliation_is_not_committed(ContainerBehavior::Fixed, partial)
            .unwrap();
        let violation = block_deleted_during_reconciliation_is_not_committed(
            ContainerBehavior::Legacy,
            partial,
        )
        .unwrap_err();
        assert_eq!(violation.seed, SEED_KEY, "{violation}");
    }
}

#[test]
fn delete_during_repair_sequentially_holds_on_fixed() {
    delete_during_repair(ContainerBehavior::Fixed).unwrap();
}

#[test]
fn cluster_holds_on_fixed_for_many_seeds() {
    for seed in 0..200 {
        deletes_and_repairs_keep_replicas_consistent(
            ContainerBehavior::Fixed,
            seed,
            ContainerClusterShape::default(),
        )
        .unwrap_or_else(|v| panic!("seed {seed}: {v}"));
    }
}

#[test]
fn concurrent_reconciliations_sequentially_hold_on_fixed() {
    for guarded in [true, false] {
        concurrent_reconciliations(ContainerBehavior::Fixed, guarded)
            .unwrap_or_else(|v| panic!("guarded {guarded}: {v}"));
    }
}
