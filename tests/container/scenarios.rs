//! The seed's reproductions (HDDS-16811) as sequential scenarios: their assertions pass
//! on the legacy code and fail on the fixed code, and the invariants say the opposite.

use hadoop_ref::datanode::container::ContainerBehavior;
use hadoop_ref::scenarios::container::{
    ClusterShape, SEED_KEY, concurrent_reconciliations, container_cluster, delete_during_repair,
    mc2_deleted_block_restored, mc2_run, mc2_seed_assertions,
    mc3_block_deleted_during_reconciliation, mc3_run, mc3_seed_assertions,
};

#[test]
fn mc2_seed_assertions_pass_on_legacy() {
    let run = mc2_run(ContainerBehavior::Legacy).unwrap();
    mc2_seed_assertions(&run).unwrap();
}

#[test]
fn mc2_seed_assertions_fail_on_fixed() {
    let run = mc2_run(ContainerBehavior::Fixed).unwrap();
    let failed = mc2_seed_assertions(&run).unwrap_err();
    assert!(failed.contains("no tree entry"), "{failed}");
}

#[test]
fn mc2_invariants_hold_on_fixed_and_catch_legacy() {
    mc2_deleted_block_restored(ContainerBehavior::Fixed).unwrap();
    let violation = mc2_deleted_block_restored(ContainerBehavior::Legacy).unwrap_err();
    assert_eq!(violation.seed, SEED_KEY);
}

#[test]
fn mc3_seed_assertions_pass_on_legacy_and_fail_on_fixed() {
    for partial in [false, true] {
        let legacy = mc3_run(ContainerBehavior::Legacy, partial).unwrap();
        mc3_seed_assertions(&legacy, partial).unwrap_or_else(|e| panic!("partial {partial}: {e}"));
        let fixed = mc3_run(ContainerBehavior::Fixed, partial).unwrap();
        assert!(
            mc3_seed_assertions(&fixed, partial).is_err(),
            "partial {partial}"
        );
        assert!(!fixed.metadata, "partial {partial}: no metadata committed");
    }
}

#[test]
fn mc3_invariants_hold_on_fixed_and_catch_legacy() {
    for partial in [false, true] {
        mc3_block_deleted_during_reconciliation(ContainerBehavior::Fixed, partial).unwrap();
        let violation = mc3_block_deleted_during_reconciliation(ContainerBehavior::Legacy, partial)
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
        container_cluster(ContainerBehavior::Fixed, seed, ClusterShape::default())
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
