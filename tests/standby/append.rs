//! The append and pipeline-update path as trunk has it: B is written at GS 1 on DN1-DN3
//! and closed, then appended at GS 2 on DN1 and DN2 only; DN3 keeps B@1. The reopen makes
//! the block's storages its expected replicas at GS 1 (`convertLastBlockToUnderConstruction`),
//! the active's pipeline update drops the ones still at GS 1 (`updatePipelineInternal`,
//! `removeStaleReplicas`), the standby drops them at the close it replays
//! (`forceCompleteBlock` → `commitBlock`), and an older FINALIZED replica of a block being
//! written is corrupt (HDFS-5723). Read on the active alone, through the HA pair, with and
//! without failover, with DN3 reporting after every replayed edit.

use hadoop_ref::namenode::evaluation::BlockUcState;
use hadoop_ref::namenode::namesystem::{
    EditOp, NamenodeConfig, Namesystem, NamesystemBehavior, NamesystemView, ReplayError,
};
use hadoop_ref::namenode::pending_messages::ReportedState;
use hadoop_ref::namenode::{Block, ReplicaState, StorageId};
use hadoop_ref::scenarios::standby::{FailoverPoint, append_leaving_a_datanode_out};
use hadoop_ref::sim::ha_pair::{HaPair, HaPairShape};
use hadoop_ref::sim::hdfs_datanode::observe_datanodes;

use crate::test_util::standby::{B, FILE, LEN, block, open_file, storage};

const RBW: ReportedState = ReportedState::Replica(ReplicaState::Rbw);
const FINALIZED: ReportedState = ReportedState::Replica(ReplicaState::Finalized);

/// An active with B written at GS 1 on DN1-DN3 and closed.
fn active_with_closed_file() -> Namesystem {
    let ns = Namesystem::active(NamenodeConfig::default(), 0);
    ns.apply_edits(&open_file(1, 3)).unwrap();
    for dn in 1..=3 {
        ns.incremental_report(storage(dn), block(B, 1, 0), RBW);
        ns.incremental_report(storage(dn), block(B, 1, LEN), FINALIZED);
    }
    ns.apply_edits(&[close(1, LEN)]).unwrap();
    ns
}

fn close(gs: i64, length: u64) -> EditOp {
    EditOp::Close {
        file: FILE,
        blocks: vec![block(B, gs, length)],
    }
}

/// The pipeline update of the append: B at GS 2 written by `pipeline`.
fn update(pipeline: &[u64]) -> EditOp {
    EditOp::UpdateBlocks {
        file: FILE,
        blocks: vec![block(B, 2, LEN)],
        pipeline: pipeline.iter().map(|dn| storage(*dn)).collect(),
    }
}

fn expected(ns: &Namesystem) -> Vec<(StorageId, i64)> {
    let stored = ns.block(B).unwrap();
    stored
        .expected
        .iter()
        .map(|(s, (gs, _))| (*s, *gs))
        .collect()
}

fn live_locations(view: &NamesystemView) -> Vec<StorageId> {
    let flagged = view.corrupt.get(&B);
    view.blocks[&B]
        .locations
        .iter()
        .filter(|s| flagged.is_none_or(|f| !f.contains_key(s)))
        .copied()
        .collect()
}

#[test]
fn reopen_for_append_expects_every_storage_at_the_old_stamp() {
    let ns = active_with_closed_file();
    ns.apply_edits(&[EditOp::Append { file: FILE }, EditOp::SetGenstamp(2)])
        .unwrap();
    let stored = ns.block(B).unwrap();
    assert_eq!(stored.state, BlockUcState::UnderConstruction);
    assert_eq!(
        expected(&ns),
        vec![(storage(1), 1), (storage(2), 1), (storage(3), 1)]
    );
}

#[test]
fn pipeline_update_drops_the_datanode_it_leaves_out_on_the_active() {
    let ns = active_with_closed_file();
    ns.apply_edits(&[EditOp::Append { file: FILE }, EditOp::SetGenstamp(2)])
        .unwrap();
    for dn in [1, 2] {
        ns.incremental_report(storage(dn), block(B, 2, LEN), RBW);
    }
    ns.apply_edits(&[update(&[1, 2])]).unwrap();
    let stored = ns.block(B).unwrap();
    assert_eq!(
        stored.locations.iter().copied().collect::<Vec<_>>(),
        vec![storage(1), storage(2)],
        "DN3 holds B@1 only"
    );
    assert_eq!(expected(&ns), vec![(storage(1), 2), (storage(2), 2)]);
}

#[test]
fn close_completes_only_on_replicas_reported_at_the_new_stamp() {
    // Unannounced (HDFS-7217): no replica reported GS 2 before the update, so the update
    // drops all three; the close waits for a FINALIZED replica of GS 2.
    let ns = active_with_closed_file();
    ns.apply_edits(&[EditOp::Append { file: FILE }, EditOp::SetGenstamp(2)])
        .unwrap();
    ns.apply_edits(&[update(&[1, 2])]).unwrap();
    assert!(ns.block(B).unwrap().locations.is_empty());
    assert!(matches!(
        ns.apply_edits(&[close(2, 2 * LEN)]),
        Err((0, ReplayError::FileNotComplete { .. }))
    ));
    assert_eq!(ns.block(B).unwrap().state, BlockUcState::Committed);
    ns.incremental_report(storage(1), block(B, 2, 2 * LEN), FINALIZED);
    assert_eq!(ns.block(B).unwrap().state, BlockUcState::Complete);
    assert_eq!(ns.apply_edits(&[close(2, 2 * LEN)]), Ok(1));
    // Announced: DN1 and DN2 reported RBW@2 before the update, so they stay locations
    // and the close completes on them, as upstream's does; DN3 never counts.
    let ns = active_with_closed_file();
    ns.apply_edits(&[EditOp::Append { file: FILE }, EditOp::SetGenstamp(2)])
        .unwrap();
    for dn in [1, 2] {
        ns.incremental_report(storage(dn), block(B, 2, LEN), RBW);
    }
    ns.apply_edits(&[update(&[1, 2])]).unwrap();
    assert_eq!(ns.apply_edits(&[close(2, 2 * LEN)]), Ok(1));
    let view = ns.view();
    assert_eq!(live_locations(&view), vec![storage(1), storage(2)]);
}

#[test]
fn older_finalized_replica_of_a_block_being_appended_is_corrupt() {
    let ns = active_with_closed_file();
    ns.apply_edits(&[EditOp::Append { file: FILE }, EditOp::SetGenstamp(2)])
        .unwrap();
    ns.apply_edits(&[update(&[1, 2])]).unwrap();
    ns.incremental_report(storage(3), block(B, 1, LEN), FINALIZED);
    let view = ns.view();
    assert!(view.corrupt[&B].contains_key(&storage(3)), "HDFS-5723");
    assert!(live_locations(&view).is_empty());
}

#[test]
fn the_active_refuses_a_new_stamp_for_a_closed_block_or_a_close_at_another_stamp() {
    let ns = active_with_closed_file();
    assert_eq!(
        ns.apply_edits(&[update(&[1, 2])]),
        Err((
            0,
            ReplayError::NotUnderConstruction {
                file: FILE,
                block: B,
                state: BlockUcState::Complete
            }
        ))
    );
    ns.apply_edits(&[EditOp::Append { file: FILE }, EditOp::SetGenstamp(2)])
        .unwrap();
    assert_eq!(
        ns.apply_edits(&[close(2, 2 * LEN)]),
        Err((
            0,
            ReplayError::GenerationStamp {
                block: B,
                stored: 1,
                edit: 2
            }
        ))
    );
}

#[test]
fn the_left_out_replica_never_counts_through_the_pair_whatever_the_failover() {
    for failover in FailoverPoint::ALL {
        for dn3_reports in [true, false] {
            for seed in 0..12 {
                assert_eq!(
                    append_leaving_a_datanode_out(
                        NamesystemBehavior::Trunk,
                        failover,
                        dn3_reports,
                        seed
                    ),
                    Ok(()),
                    "{failover:?}, DN3 reports {dn3_reports}, excess choice seed {seed}"
                );
            }
        }
    }
}

/// The append of the module docs through a pair of `shape` running `behavior`, the standby
/// replaying everything; failover after the close when `failover`.
fn appended_through_the_pair(
    behavior: NamesystemBehavior,
    shape: HaPairShape,
    failover: bool,
) -> HaPair {
    let pair = HaPair::new(behavior, shape);
    let dns = pair.datanodes();
    pair.client(&open_file(1, 3)).unwrap();
    for dn in dns {
        dn.receive_block(block(B, 1, 0));
        dn.finalize(block(B, 1, LEN));
    }
    pair.client(&[close(1, LEN)]).unwrap();
    pair.client(&[EditOp::Append { file: FILE }, EditOp::SetGenstamp(2)])
        .unwrap();
    for dn in &dns[..2] {
        dn.bump_generation_stamp(block(B, 2, LEN));
    }
    pair.client(&[update(&[1, 2])]).unwrap();
    for dn in &dns[..2] {
        dn.finalize(block(B, 2, 2 * LEN));
    }
    pair.client(&[close(2, 2 * LEN)]).unwrap();
    pair.catch_up().unwrap();
    if failover {
        pair.failover().unwrap();
    }
    pair
}

#[test]
fn every_behavior_drops_the_left_out_replica_on_both_namenodes() {
    for behavior in NamesystemBehavior::ALL {
        for failover in [false, true] {
            let pair = appended_through_the_pair(behavior, HaPairShape::default(), failover);
            for nn in pair.namenodes() {
                let view = nn.namesystem().view();
                assert_eq!(view.blocks[&B].block, block(B, 2, 2 * LEN));
                let live = live_locations(&view);
                let why = format!("{behavior:?}, failover {failover}, {:?}", nn.id());
                assert!(!live.contains(&storage(3)), "{why}: {live:?}");
                // The 2012 queue judges DN1's and DN2's GS 1 reports after the close and
                // flags them, and the early drain leaves their GS 2 reports queued past
                // the close: their own defects, not the append's.
                if !matches!(
                    behavior,
                    NamesystemBehavior::LegacyWholeMessageQueue
                        | NamesystemBehavior::LegacyEarlyDrain
                ) {
                    assert_eq!(live, vec![storage(1), storage(2)], "{why}");
                }
            }
        }
    }
}

#[test]
fn lowering_the_replication_keeps_a_replica_of_the_new_stamp_for_every_excess_choice() {
    for excess_choice_seed in 0..12 {
        for failover in [false, true] {
            let shape = HaPairShape {
                excess_choice_seed,
                ..HaPairShape::default()
            };
            let pair = appended_through_the_pair(NamesystemBehavior::Trunk, shape, failover);
            pair.datanodes()[2].full_block_report();
            pair.client(&[EditOp::SetReplication {
                file: FILE,
                replication: 1,
            }])
            .unwrap();
            pair.quiesce().unwrap();
            let (_, held) = observe_datanodes(pair.datanodes());
            let replicas: Vec<(StorageId, Block)> = held
                .iter()
                .map(|((_, storage), (replica, _))| (*storage, *replica))
                .collect();
            assert_eq!(replicas.len(), 1, "seed {excess_choice_seed}: {replicas:?}");
            assert_eq!(replicas[0].1, block(B, 2, 2 * LEN), "DN3's B@1 is deleted");
        }
    }
}
