//! `TestDNFencing.testQueueingWithAppend` (HDFS-2742) ported: three datanodes write a file,
//! append to it twice, report incrementally and in full, while the standby replays
//! nothing; every report is future there and queued, one entry per replica per report.
//! HDFS asserts 12, 21 and 27 queued messages after the three cases, in every version of
//! the test; trunk keeps that count because a report purges its pair's queued entries
//! only once it is not future (HDFS-17477 runs `removeQueuedBlock` after the future test).
//! After failover no replica is corrupt and the file's last block has every replica.

use hadoop_ref::namenode::evaluation::BlockUcState;
use hadoop_ref::namenode::namesystem::{EditOp, NamesystemBehavior};
use hadoop_ref::namenode::{Block, GenerationStamp};
use hadoop_ref::sim::ha_pair::{HaPair, HaPairShape};

use crate::test_util::standby::{B, FILE, block, open_file};

/// The standby's pending-message count (`getPendingDataNodeMessageCount`).
fn queued(pair: &HaPair) -> usize {
    pair.namenodes()[1].namesystem().queue_metrics().count
}

fn full_reports(pair: &HaPair) {
    for dn in pair.datanodes() {
        dn.full_block_report();
    }
}

fn finalize_and_close(pair: &HaPair, finished: Block) {
    for dn in pair.datanodes() {
        dn.finalize(finished);
    }
    pair.client(&[EditOp::Close {
        file: FILE,
        blocks: vec![finished],
    }])
    .unwrap();
}

/// An append: reopen, a new GS for the pipeline, the datanodes move their replicas to it
/// (announced as RECEIVING, or not when the write is not flushed: HDFS-7217 lets the
/// RECEIVED report replace it), then the block-list update.
fn append(pair: &HaPair, gs: GenerationStamp, length: u64, announced: bool) {
    pair.client(&[EditOp::Append { file: FILE }, EditOp::SetGenstamp(gs)])
        .unwrap();
    for dn in pair.datanodes() {
        if announced {
            dn.bump_generation_stamp(block(B, gs, 0));
        } else {
            dn.bump_generation_stamp_unannounced(block(B, gs, 0));
        }
    }
    pair.client(&[EditOp::UpdateBlocks {
        file: FILE,
        blocks: vec![block(B, gs, length)],
        pipeline: pair.datanodes().iter().map(|dn| dn.storage()).collect(),
    }])
    .unwrap();
}

/// The three cases of the test; returns the queued count after each.
fn queueing_with_append(behavior: NamesystemBehavior) -> (HaPair, [usize; 3]) {
    let pair = HaPair::new(behavior, HaPairShape::default());
    // Case 1: create, write, hflush (RECEIVING), full reports (RBW), close (RECEIVED),
    // full reports (FINALIZED).
    pair.client(&open_file(1, 3)).unwrap();
    for dn in pair.datanodes() {
        dn.receive_block(block(B, 1, 0));
    }
    full_reports(&pair);
    finalize_and_close(&pair, block(B, 1, 10));
    full_reports(&pair);
    let case1 = queued(&pair);
    // Case 2: append, hflush (RECEIVING), full reports (RBW), close (RECEIVED).
    append(&pair, 2, 10, true);
    full_reports(&pair);
    finalize_and_close(&pair, block(B, 2, 20));
    let case2 = queued(&pair);
    // Case 3: append without hflush (no RECEIVING), close (RECEIVED), full reports.
    append(&pair, 3, 20, false);
    finalize_and_close(&pair, block(B, 3, 30));
    full_reports(&pair);
    let case3 = queued(&pair);
    (pair, [case1, case2, case3])
}

#[test]
fn standby_queues_one_message_per_report_as_test_dn_fencing_counts() {
    for behavior in [
        NamesystemBehavior::Trunk,
        NamesystemBehavior::LegacyNoStaleEntryPurge,
    ] {
        let (pair, counts) = queueing_with_append(behavior);
        assert_eq!(counts, [12, 21, 27], "{behavior:?}");
        pair.failover().unwrap();
        for nn in pair.namenodes() {
            assert!(
                nn.namesystem().corrupt_replicas().is_empty(),
                "{behavior:?}: {:?} flags replicas corrupt",
                nn.id()
            );
        }
        let (active, _) = pair.roles();
        let stored = active.namesystem().block(B).unwrap();
        assert_eq!(stored.block, block(B, 3, 30), "{behavior:?}");
        assert_eq!(stored.state, BlockUcState::Complete, "{behavior:?}");
        assert_eq!(
            stored.locations.len(),
            3,
            "{behavior:?}: the file reads back"
        );
        assert_eq!(active.namesystem().queue_metrics().count, 0);
    }
}
