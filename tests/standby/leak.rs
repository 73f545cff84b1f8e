//! HDFS-17905 on the standby: a removed block's queued reports go with it (trunk), or stay
//! for ever (`LegacyKeepRemovedBlockMessages`), on the namesystem alone and through the
//! heal phase of `deleted_blocks_leave_no_queued_reports`.

use hadoop_ref::namenode::ReplicaState;
use hadoop_ref::namenode::namesystem::{EditOp, NamesystemBehavior};
use hadoop_ref::namenode::pending_messages::ReportedState;
use hadoop_ref::scenarios::standby::{
    LEAK_SEED_KEY, STANDBY_QUEUE_EMPTIES, deleted_blocks_leave_no_queued_reports,
    standby_queue_empties,
};

use crate::test_util::standby::{B, FILE, block, open_file, standby, storage};

/// The standby replays the file and its block at GS 1; DN1 reports RBW at GS 2 (a pipeline
/// recovery whose `updatePipeline` never came), queued as future before the standby
/// tails the GS edit; then the delete.
fn abandoned_recovery_then_delete(behavior: NamesystemBehavior) -> usize {
    let ns = standby(behavior, 0);
    ns.apply_edits(&open_file(1, 2)).unwrap();
    ns.incremental_report(
        storage(1),
        block(B, 2, 0),
        ReportedState::Replica(ReplicaState::Rbw),
    );
    assert_eq!(
        ns.view().queued.len(),
        1,
        "{behavior:?}: the RBW@2 is future"
    );
    ns.apply_edits(&[EditOp::Delete { file: FILE }]).unwrap();
    let view = ns.view();
    assert!(!view.blocks.contains_key(&B));
    view.queued.len()
}

#[test]
fn trunk_drops_a_removed_blocks_queue_and_legacy_keeps_it() {
    assert_eq!(abandoned_recovery_then_delete(NamesystemBehavior::Trunk), 0);
    assert_eq!(
        abandoned_recovery_then_delete(NamesystemBehavior::LegacyKeepRemovedBlockMessages),
        1
    );
}

#[test]
fn every_other_behavior_drops_a_removed_blocks_queue() {
    for behavior in NamesystemBehavior::ALL {
        if behavior.purges_removed_block_messages() && !behavior.whole_message_queue() {
            assert_eq!(abandoned_recovery_then_delete(behavior), 0, "{behavior:?}");
        }
    }
}

#[test]
fn queue_empties_names_the_leak_and_what_never_drained() {
    let ns = standby(NamesystemBehavior::LegacyKeepRemovedBlockMessages, 0);
    ns.apply_edits(&open_file(1, 2)).unwrap();
    ns.incremental_report(
        storage(1),
        block(B, 2, 0),
        ReportedState::Replica(ReplicaState::Rbw),
    );
    let before = standby_queue_empties("nn1", &ns.view()).unwrap_err();
    assert!(before.detail.contains("no edit moved it"), "{before}");
    ns.apply_edits(&[EditOp::Delete { file: FILE }]).unwrap();
    let after = standby_queue_empties("nn1", &ns.view()).unwrap_err();
    assert_eq!(
        (after.seed, after.property),
        (LEAK_SEED_KEY, STANDBY_QUEUE_EMPTIES)
    );
    assert!(after.detail.contains("dn1 RBW blk_100_2"), "{after}");
    assert!(
        after.detail.contains("removed from the namespace"),
        "{after}"
    );
}

#[test]
fn heal_phase_empties_the_trunk_queue_and_catches_the_leak() {
    for seed in 0..16 {
        assert_eq!(
            deleted_blocks_leave_no_queued_reports(NamesystemBehavior::Trunk, seed),
            Ok(()),
            "seed {seed}"
        );
        let caught = deleted_blocks_leave_no_queued_reports(
            NamesystemBehavior::LegacyKeepRemovedBlockMessages,
            seed,
        )
        .expect_err(&format!("the leak, seed {seed}"));
        assert_eq!(
            (caught.seed, caught.property),
            (LEAK_SEED_KEY, STANDBY_QUEUE_EMPTIES),
            "seed {seed}: {caught}"
        );
    }
}
