//! `PendingDataNodeMessages` (HDFS-2742): the queue's unit behaviour (`testQueues`,
//! `testRemoveQueuedBlock`), each purge rule (HDFS-17453 at enqueue, HDFS-17477 when a
//! report is processed), the datanode-removal purge, the bound, and a property test of
//! per-block FIFO and the purge rules against a model.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use hadoop_ref::namenode::DatanodeId;
use hadoop_ref::namenode::pending_messages::{
    PendingDataNodeMessages, QueueFull, QueuedReport, ReportedState, StaleEntryPurge,
};
use hadoop_ref::namenode::{Block, BlockId, ReplicaState};

use crate::test_util::standby::storage;

fn report(dn: u64, block: i64, gs: i64) -> QueuedReport {
    QueuedReport {
        storage: storage(dn),
        block: Block {
            id: BlockId(block),
            gs,
            length: 0,
        },
        state: ReportedState::Replica(ReplicaState::Finalized),
    }
}

fn gss(queue: &PendingDataNodeMessages, block: i64) -> Vec<(u64, i64)> {
    queue
        .queued(BlockId(block))
        .map(|r| (r.storage.datanode.0, r.block.gs))
        .collect()
}

#[test]
fn same_id_different_gs_share_one_queue_in_arrival_order() {
    // testQueues: two storages x two GS, all four kept in arrival order.
    let mut queue = PendingDataNodeMessages::new(StaleEntryPurge::OnProcess, 100);
    for r in [
        report(1, 1, 1),
        report(2, 1, 1),
        report(1, 1, 2),
        report(2, 1, 2),
    ] {
        queue.enqueue(r).unwrap();
    }
    assert_eq!(queue.count(), 4);
    let taken: Vec<_> = queue
        .take_block_queue(BlockId(1))
        .unwrap()
        .into_iter()
        .map(|r| (r.storage.datanode.0, r.block.gs))
        .collect();
    assert_eq!(taken, vec![(1, 1), (2, 1), (1, 2), (2, 2)]);
    assert_eq!(queue.count(), 0);
    assert!(
        queue.take_block_queue(BlockId(1)).is_none(),
        "taking again yields nothing"
    );
}

#[test]
fn remove_queued_block_drops_exactly_that_storages_entries() {
    // testRemoveQueuedBlock (HDFS-17477).
    let mut queue = PendingDataNodeMessages::new(StaleEntryPurge::OnProcess, 100);
    for r in [
        report(1, 1, 1),
        report(2, 1, 1),
        report(1, 1, 2),
        report(1, 2, 2),
    ] {
        queue.enqueue(r).unwrap();
    }
    assert_eq!(queue.remove_queued_block(storage(1), BlockId(1)), 2);
    assert_eq!(gss(&queue, 1), vec![(2, 1)]);
    assert_eq!(gss(&queue, 2), vec![(1, 2)], "other blocks untouched");
    assert_eq!(queue.count(), 2);
    assert_eq!(queue.metrics().purged_superseded, 2);
}

#[test]
fn enqueue_purge_drops_same_storage_entries_with_lower_or_equal_gs() {
    // HDFS-17453.
    let mut queue = PendingDataNodeMessages::new(StaleEntryPurge::OnEnqueue, 100);
    for r in [
        report(1, 1, 1),
        report(2, 1, 1),
        report(1, 1, 3),
        report(1, 1, 2),
    ] {
        queue.enqueue(r).unwrap();
    }
    assert_eq!(
        gss(&queue, 1),
        vec![(2, 1), (1, 3), (1, 2)],
        "gs 3 is newer than 2: kept"
    );
    assert_eq!(queue.count(), 3);
    assert_eq!(
        queue.remove_queued_block(storage(1), BlockId(1)),
        0,
        "not this rule's purge"
    );
}

#[test]
fn legacy_queue_keeps_superseded_entries() {
    let mut queue = PendingDataNodeMessages::new(StaleEntryPurge::None, 100);
    for r in [report(1, 1, 1), report(1, 1, 2)] {
        queue.enqueue(r).unwrap();
    }
    assert_eq!(queue.remove_queued_block(storage(1), BlockId(1)), 0);
    assert_eq!(gss(&queue, 1), vec![(1, 1), (1, 2)]);
}

#[test]
fn removed_datanode_and_removed_block_leave_no_entries() {
    let mut queue = PendingDataNodeMessages::new(StaleEntryPurge::OnProcess, 100);
    for r in [
        report(1, 1, 1),
        report(2, 1, 1),
        report(1, 2, 1),
        report(3, 3, 1),
    ] {
        queue.enqueue(r).unwrap();
    }
    assert_eq!(queue.remove_all_for_datanode(DatanodeId(1)), 2);
    assert_eq!(gss(&queue, 1), vec![(2, 1)]);
    assert_eq!(gss(&queue, 2), vec![]);
    assert_eq!(queue.remove_block(BlockId(3)), 1);
    assert_eq!(queue.count(), 1);
    assert_eq!(queue.metrics().purged_removed, 3);
}

#[test]
fn deleted_reports_are_queued_too() {
    let mut queue = PendingDataNodeMessages::new(StaleEntryPurge::OnEnqueue, 100);
    let deleted = QueuedReport {
        state: ReportedState::Deleted,
        ..report(1, 1, 9)
    };
    queue.enqueue(deleted).unwrap();
    assert_eq!(queue.take_all(), vec![deleted]);
}

#[test]
fn take_all_returns_blocks_in_id_order_each_in_arrival_order() {
    let mut queue = PendingDataNodeMessages::new(StaleEntryPurge::OnProcess, 100);
    for r in [report(1, 5, 1), report(1, 2, 1), report(2, 5, 1)] {
        queue.enqueue(r).unwrap();
    }
    let all: Vec<_> = queue
        .take_all()
        .into_iter()
        .map(|r| (r.block.id.0, r.storage.datanode.0))
        .collect();
    assert_eq!(all, vec![(2, 1), (5, 1), (5, 2)]);
    assert_eq!(queue.count(), 0);
}

#[test]
fn full_queue_refuses_and_counts() {
    let mut queue = PendingDataNodeMessages::new(StaleEntryPurge::OnProcess, 2);
    queue.enqueue(report(1, 1, 1)).unwrap();
    queue.enqueue(report(1, 2, 1)).unwrap();
    assert_eq!(queue.enqueue(report(1, 3, 1)), Err(QueueFull { limit: 2 }));
    assert_eq!(queue.count(), 2);
    assert_eq!(queue.metrics().refused_full, 1);
    assert_eq!(queue.metrics().high_water, 2);
}

// --- property: FIFO and purge rules against a model -------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Enqueue(u64, i64, i64),
    Take(i64),
    Processed(u64, i64),
    RemoveDatanode(u64),
    RemoveBlock(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => ((1u64..4), (0i64..4), (0i64..5)).prop_map(|(d, b, g)| Op::Enqueue(d, b, g)),
        2 => (0i64..4).prop_map(Op::Take),
        2 => ((1u64..4), (0i64..4)).prop_map(|(d, b)| Op::Processed(d, b)),
        1 => (1u64..4).prop_map(Op::RemoveDatanode),
        1 => (0i64..4).prop_map(Op::RemoveBlock),
    ]
}

fn purge() -> impl Strategy<Value = StaleEntryPurge> {
    prop::sample::select(vec![
        StaleEntryPurge::None,
        StaleEntryPurge::OnEnqueue,
        StaleEntryPurge::OnProcess,
    ])
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/pending_messages.txt",
        ))),
        ..ProptestConfig::default()
    })]

    /// The model is one list in global arrival order; a block's queue is its subsequence.
    #[test]
    fn queue_matches_arrival_order_model(
        rule in purge(),
        limit in 1usize..12,
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let mut queue = PendingDataNodeMessages::new(rule, limit);
        let mut model: Vec<(u64, i64, i64)> = Vec::new();
        for op in ops {
            match op {
                Op::Enqueue(d, b, g) => {
                    if rule == StaleEntryPurge::OnEnqueue {
                        model.retain(|&(md, mb, mg)| !(md == d && mb == b && mg <= g));
                    }
                    let fits = model.len() < limit;
                    prop_assert_eq!(queue.enqueue(report(d, b, g)).is_ok(), fits);
                    if fits {
                        model.push((d, b, g));
                    }
                }
                Op::Take(b) => {
                    let expected: Vec<_> = model.iter().filter(|e| e.1 == b).map(|e| (e.0, e.2)).collect();
                    model.retain(|e| e.1 != b);
                    let taken: Vec<_> = queue
                        .take_block_queue(BlockId(b))
                        .into_iter()
                        .flatten()
                        .map(|r| (r.storage.datanode.0, r.block.gs))
                        .collect();
                    prop_assert_eq!(taken, expected);
                }
                Op::Processed(d, b) => {
                    let before = model.len();
                    if rule == StaleEntryPurge::OnProcess {
                        model.retain(|e| !(e.0 == d && e.1 == b));
                    }
                    prop_assert_eq!(queue.remove_queued_block(storage(d), BlockId(b)), before - model.len());
                }
                Op::RemoveDatanode(d) => {
                    let before = model.len();
                    model.retain(|e| e.0 != d);
                    prop_assert_eq!(queue.remove_all_for_datanode(DatanodeId(d)), before - model.len());
                }
                Op::RemoveBlock(b) => {
                    let before = model.len();
                    model.retain(|e| e.1 != b);
                    prop_assert_eq!(queue.remove_block(BlockId(b)), before - model.len());
                }
            }
            prop_assert_eq!(queue.count(), model.len());
            prop_assert!(queue.count() <= limit);
            for b in 0..4 {
                let expected: Vec<_> = model.iter().filter(|e| e.1 == b).map(|e| (e.0, e.2)).collect();
                prop_assert_eq!(gss(&queue, b), expected);
            }
        }
        let mut expected = model.clone();
        expected.sort_by_key(|e| e.1);
        let all: Vec<_> = queue.take_all().into_iter().map(|r| (r.storage.datanode.0, r.block.id.0, r.block.gs)).collect();
        prop_assert_eq!(all, expected);
        prop_assert_eq!(queue.count(), 0);
    }
}
