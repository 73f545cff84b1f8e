//! Trunk's rules beyond the seed's queue, one sequential reproduction each: the impending
//! generation stamp (HDFS-14941), the skip-after-future drain rule, queued DELETED entries
//! applied without the future test, the HDFS-17477 purge after the future test, COMMITTED
//! and completion at `minReplication` on the active, a corrupt-flagged replica reported
//! healthy again, and a corrupt replica's invalidation in safe mode.

use hadoop_ref::namenode::evaluation::BlockUcState;
use hadoop_ref::namenode::namesystem::{
    EditOp, NamenodeConfig, Namesystem, NamesystemBehavior, ReplayError,
};
use hadoop_ref::namenode::pending_messages::ReportedState;
use hadoop_ref::namenode::{BlockId, DatanodeId, ReplicaState};

use crate::test_util::standby::{
    B, FILE, LEN, block, close_file, open_file, received, standby, storage,
};

const RBW: ReportedState = ReportedState::Replica(ReplicaState::Rbw);

/// `FILE` (replication 1) opened with `B@1`, then recovered to GS 2 and closed.
fn open_then_close_at_genstamp_2(ns: &Namesystem) {
    ns.apply_edits(&open_file(1, 1)).unwrap();
    ns.apply_edits(&[
        EditOp::SetGenstamp(2),
        EditOp::Close {
            file: FILE,
            blocks: vec![block(B, 2, LEN)],
        },
    ])
    .unwrap();
}

/// `TestUpdateBlockTailing.testStandbyAddBlockIBRRace`: the GS edit only moves the
/// impending stamp; a RECEIVED report of the new block is queued as future and applied
/// when the block edit attaches the block, before any full report.
#[test]
fn replica_reported_between_genstamp_and_block_edits_is_recorded() {
    let ns = standby(NamesystemBehavior::Trunk, 0);
    let edits = open_file(1, 1);
    ns.apply_edits(&edits[..2]).unwrap();
    assert_eq!(
        (ns.generation_stamp(), ns.impending_generation_stamp()),
        (0, 1)
    );
    received(&ns, 1, block(B, 1, LEN));
    assert_eq!(ns.queue_metrics().count, 1, "future: queued, not dropped");
    ns.apply_edits(&edits[2..]).unwrap();
    assert_eq!(ns.generation_stamp(), 1, "the block edit moves the counter");
    assert_eq!(ns.queue_metrics().count, 0);
    assert!(ns.block(B).unwrap().locations.contains(&storage(1)));
}

/// Before HDFS-14941 the same report is neither future nor of a known block: dropped,
/// until the datanode's next full report.
#[test]
fn without_impending_genstamp_the_replica_waits_for_a_full_report() {
    let ns = standby(NamesystemBehavior::LegacyNoImpendingGenstamp, 0);
    let edits = open_file(1, 1);
    ns.apply_edits(&edits[..2]).unwrap();
    assert_eq!(ns.generation_stamp(), 1);
    received(&ns, 1, block(B, 1, LEN));
    ns.apply_edits(&edits[2..]).unwrap();
    ns.apply_edits(&[close_file()]).unwrap();
    assert!(ns.block(B).unwrap().locations.is_empty(), "dropped");
    ns.full_report(storage(1), &[(block(B, 1, LEN), ReplicaState::Finalized)]);
    assert!(ns.block(B).unwrap().locations.contains(&storage(1)));
}

/// `startActiveServices` applies the impending stamp after the pending drain: a GS logged
/// for a pipeline whose block edit never came is not handed out again.
#[test]
fn failover_applies_the_impending_genstamp_after_the_drain() {
    let ns = standby(NamesystemBehavior::Trunk, 0);
    let mut edits = open_file(1, 1);
    edits.extend([close_file(), EditOp::SetGenstamp(2)]);
    ns.apply_edits(&edits).unwrap();
    assert_eq!(
        (ns.generation_stamp(), ns.impending_generation_stamp()),
        (1, 2)
    );
    ns.transition_to_active(&[], &[]).unwrap();
    assert_eq!(ns.generation_stamp(), 2);
}

/// `processQueuedMessages`: once an entry goes back as future, the block's later entries
/// go back unjudged, in order, although DN2's would now be accepted.
#[test]
fn entries_after_a_future_one_are_requeued_unjudged() {
    let ns = standby(NamesystemBehavior::Trunk, 0);
    let edits = open_file(1, 2);
    ns.apply_edits(&edits[..2]).unwrap();
    ns.incremental_report(storage(1), block(B, 3, 0), RBW);
    received(&ns, 2, block(B, 1, LEN));
    ns.apply_edits(&edits[2..]).unwrap();
    let view = ns.view();
    let queued: Vec<_> = view
        .queued
        .iter()
        .map(|q| (q.storage, q.block.gs))
        .collect();
    assert_eq!(queued, vec![(storage(1), 3), (storage(2), 1)]);
    assert!(
        ns.block(B).unwrap().locations.is_empty(),
        "DN2 not judged yet"
    );
}

/// A queued DELETED entry is applied by the drain without the future test (trunk
/// `processQueuedMessages`), even while its GS is still ahead of the counter.
#[test]
fn queued_deleted_entry_is_applied_without_the_future_test() {
    let ns = standby(NamesystemBehavior::Trunk, 0);
    let edits = open_file(1, 1);
    ns.apply_edits(&edits[..2]).unwrap();
    received(&ns, 1, block(B, 1, LEN));
    ns.incremental_report(storage(1), block(B, 5, LEN), ReportedState::Deleted);
    assert_eq!(ns.queue_metrics().count, 2);
    ns.apply_edits(&edits[2..]).unwrap();
    assert_eq!(
        ns.queue_metrics().count,
        0,
        "the DELETED entry is not re-queued"
    );
    assert!(
        ns.block(B).unwrap().locations.is_empty(),
        "the RECEIVED entry added DN1, the DELETED one removed it"
    );
}

/// HDFS-17477's purge runs after the future test: a future report is queued behind the
/// pair's older entries; a report that is not future drops them first.
#[test]
fn only_a_report_that_is_not_future_purges_its_pairs_entries() {
    let ns = standby(NamesystemBehavior::Trunk, 0);
    open_then_close_at_genstamp_2(&ns);
    received(&ns, 1, block(B, 1, LEN));
    assert_eq!(
        ns.queue_metrics().count,
        1,
        "older GS: queued as inconsistent"
    );
    ns.incremental_report(storage(1), block(B, 3, 0), RBW);
    assert_eq!(ns.queue_metrics().count, 2, "future: no purge");
    received(&ns, 1, block(B, 2, LEN));
    assert_eq!(
        ns.queue_metrics().count,
        0,
        "current: the pair's entries go"
    );
    assert_eq!(ns.queue_metrics().purged_superseded, 2);
}

fn active() -> Namesystem {
    Namesystem::active(NamenodeConfig::default(), 0)
}

/// `commitOrCompleteLastBlock`: the active's close commits the last block, which
/// completes only with `minReplication` FINALIZED replicas of its GS and length; until
/// then the close is refused and the file stays open.
#[test]
fn active_completes_a_committed_block_at_min_replication() {
    let ns = active();
    ns.apply_edits(&open_file(1, 1)).unwrap();
    assert_eq!(
        ns.apply_edits(&[close_file()]),
        Err((
            0,
            ReplayError::FileNotComplete {
                file: FILE,
                block: B
            }
        ))
    );
    assert_eq!(ns.block(B).unwrap().state, BlockUcState::Committed);
    received(&ns, 1, block(B, 1, LEN - 1));
    assert_eq!(
        ns.block(B).unwrap().state,
        BlockUcState::Committed,
        "a wrong length does not count"
    );
    received(&ns, 2, block(B, 1, LEN));
    assert_eq!(ns.block(B).unwrap().state, BlockUcState::Complete);
    assert_eq!(ns.apply_edits(&[close_file()]), Ok(1));
}

/// `BlockManager.commitBlock` returns first thing for a COMMITTED block: a retried close
/// neither rewrites the block's length and stamp nor sweeps its replicas again, and a
/// stamp the first close did not carry is ignored, not refused; the block still completes
/// once a replica matches it.
#[test]
fn retried_close_of_a_committed_block_changes_nothing() {
    let ns = active();
    ns.apply_edits(&open_file(1, 1)).unwrap();
    assert!(
        ns.apply_edits(&[close_file()]).is_err(),
        "committed, not complete"
    );
    let retried = EditOp::Close {
        file: FILE,
        blocks: vec![block(B, 7, LEN + 5)],
    };
    assert_eq!(
        ns.apply_edits(&[retried]),
        Err((
            0,
            ReplayError::FileNotComplete {
                file: FILE,
                block: B
            }
        ))
    );
    let stored = ns.block(B).unwrap();
    assert_eq!(stored.block, block(B, 1, LEN));
    assert_eq!(stored.state, BlockUcState::Committed);
    received(&ns, 1, block(B, 1, LEN));
    assert_eq!(ns.block(B).unwrap().state, BlockUcState::Complete);
}

/// A replica flagged corrupt for a GS mismatch and reported again with the right GS is
/// unflagged (trunk `addStoredBlock`, `removeFromCorruptReplicasMap`).
#[test]
fn replica_flagged_for_genstamp_and_reported_healthy_is_unflagged() {
    let ns = standby(NamesystemBehavior::Trunk, 0);
    ns.apply_edits(&open_file(1, 3)).unwrap();
    ns.apply_edits(&[
        EditOp::SetGenstamp(2),
        EditOp::Close {
            file: FILE,
            blocks: vec![block(B, 2, LEN)],
        },
    ])
    .unwrap();
    received(&ns, 1, block(B, 1, LEN));
    ns.transition_to_active(&[], &[]).unwrap();
    assert_eq!(ns.corrupt_replicas().len(), 1, "judged at failover");
    received(&ns, 1, block(B, 2, LEN));
    assert!(ns.corrupt_replicas().is_empty());
    assert!(ns.block(B).unwrap().locations.contains(&storage(1)));
}

/// `markBlockAsCorrupt` invalidates at once in safe mode too (`invalidateBlock` removes
/// the location, with the safe-mode decrement); only the command waits for safe mode to
/// end (`invalidateWorkForOneNode`).
#[test]
fn corrupt_replica_leaves_its_location_in_safe_mode_but_its_command_waits() {
    let config = NamenodeConfig {
        safemode_threshold_per_mille: 1000,
        ..NamenodeConfig::default()
    };
    let ns = Namesystem::standby(config, 0);
    open_then_close_at_genstamp_2(&ns);
    received(&ns, 2, block(B, 2, LEN));
    ns.transition_to_active(&[], &[]).unwrap();
    assert!(ns.safe_mode().on);
    received(&ns, 1, block(B, 1, LEN));
    let stored = ns.block(B).unwrap();
    assert!(!stored.locations.contains(&storage(1)), "invalidated");
    assert_eq!(ns.recount_safe_mode(), (1, 1));
    assert_eq!(
        (ns.safe_mode().block_total, ns.safe_mode().block_safe),
        (1, 1)
    );
    assert!(
        ns.take_deletion_commands(DatanodeId(1)).is_empty(),
        "safe mode"
    );
    assert!(ns.leave_safe_mode_if_threshold_reached());
    assert_eq!(
        ns.take_deletion_commands(DatanodeId(1)),
        vec![(storage(1), block(B, 1, LEN))],
        "deleted with the GS it was reported with (HDFS-3157)"
    );
}

/// `processReportedBlock` ignores a replica already in the invalidation set
/// (`invalidateBlocks.contains`): an excess replica scheduled for deletion and reported
/// again before its command is taken stays invalidated, not a location again.
#[test]
fn replica_scheduled_for_deletion_is_not_restored_by_a_later_report() {
    let ns = standby(NamesystemBehavior::Trunk, 0);
    ns.apply_edits(&open_file(1, 1)).unwrap();
    ns.apply_edits(&[close_file()]).unwrap();
    received(&ns, 1, block(B, 1, LEN));
    received(&ns, 2, block(B, 1, LEN));
    ns.transition_to_active(&[], &[]).unwrap();
    assert!(ns.leave_safe_mode_if_threshold_reached());
    let doomed = (1..=2)
        .find(|dn| !ns.block(B).unwrap().locations.contains(&storage(*dn)))
        .expect("one of the two replicas is excess");
    received(&ns, doomed, block(B, 1, LEN));
    assert!(
        !ns.block(B).unwrap().locations.contains(&storage(doomed)),
        "a replica pending deletion is ignored"
    );
    assert_eq!(ns.block_metrics().deletions_scheduled, 1);
    assert_eq!(
        ns.take_deletion_commands(DatanodeId(doomed)),
        vec![(storage(doomed), block(B, 1, LEN))]
    );
}

/// `addStoredBlockUnderConstruction` adds a location for a FINALIZED replica only: an
/// RBW replica of a block under construction is expected (it will finish the block), and
/// is not a location of it.
#[test]
fn rbw_replica_of_a_block_under_construction_is_expected_not_a_location() {
    let ns = standby(NamesystemBehavior::Trunk, 0);
    ns.apply_edits(&open_file(1, 1)).unwrap();
    ns.incremental_report(storage(1), block(B, 1, 0), RBW);
    let stored = ns.block(B).unwrap();
    assert_eq!(stored.state, BlockUcState::UnderConstruction);
    assert!(stored.expected.contains_key(&storage(1)), "{stored:?}");
    assert!(stored.locations.is_empty(), "{stored:?}");
}

/// HDFS-3157: a corrupt replica kept while no live one existed is invalidated by the
/// replication check once a live replica is added, and its deletion names the GS the
/// datanode reported, not the stored one (else the datanode would not find it).
#[test]
fn corrupt_replica_invalidated_by_the_replication_check_is_deleted_at_its_own_gs() {
    let ns = standby(NamesystemBehavior::Trunk, 0);
    open_then_close_at_genstamp_2(&ns);
    ns.transition_to_active(&[], &[]).unwrap();
    assert!(ns.leave_safe_mode_if_threshold_reached());
    received(&ns, 1, block(B, 1, LEN));
    assert_eq!(
        ns.corrupt_replicas().len(),
        1,
        "no live replica: flagged, kept"
    );
    assert!(ns.take_deletion_commands(DatanodeId(1)).is_empty());
    received(&ns, 2, block(B, 2, LEN));
    assert_eq!(
        ns.take_deletion_commands(DatanodeId(1)),
        vec![(storage(1), block(B, 1, LEN))]
    );
}

/// `processReportedBlock`: a replica of a block the NameNode does not know is scheduled
/// for deletion (`addToInvalidates`), except from a storage's first full report, which
/// `processFirstBlockReport` walks without invalidating (the next report deletes it).
#[test]
fn replica_of_an_unknown_block_is_deleted_unless_first_reported() {
    let ns = standby(NamesystemBehavior::Trunk, 10);
    ns.transition_to_active(&[], &[]).unwrap();
    assert!(ns.leave_safe_mode_if_threshold_reached());
    let unknown = block(BlockId(77), 3, LEN);
    ns.full_report(storage(2), &[(unknown, ReplicaState::Finalized)]);
    assert!(
        ns.take_deletion_commands(DatanodeId(2)).is_empty(),
        "a first full report invalidates nothing"
    );
    received(&ns, 1, unknown);
    assert_eq!(
        ns.take_deletion_commands(DatanodeId(1)),
        vec![(storage(1), unknown)]
    );
}

/// The standby does no replication work (`isPopulatingReplQueues` is false there), even
/// out of safe mode: an excess replica stays a location until the active checks the block.
#[test]
fn standby_keeps_an_excess_replica_as_a_location() {
    let ns = standby(NamesystemBehavior::Trunk, 0);
    ns.set_safe_mode(false);
    ns.apply_edits(&open_file(1, 1)).unwrap();
    ns.apply_edits(&[close_file()]).unwrap();
    received(&ns, 1, block(B, 1, LEN));
    received(&ns, 2, block(B, 1, LEN));
    assert_eq!(ns.block(B).unwrap().locations.len(), 2);
    assert_eq!(ns.block_metrics().deletions_scheduled, 0);
}
