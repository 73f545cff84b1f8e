//! The seed's reproductions as scripted, single-threaded schedules (HDFS-2742): the
//! ten-step data-loss chain, the safe-mode credit schedule, the failover catch-up
//! schedule (HDFS-3605) and the superseded-entry schedule (HDFS-17477). Each runs one
//! fixed sequence of steps; trunk's standby holds, and the legacy behaviour each was
//! written for breaks the invariant it names.

use super::edits::{BLOCK, BLOCK_LENGTH, FILE, block, open_file};
use super::invariants::{
    check_pair_quiescent, no_false_corruption, queue_is_sound, safe_mode_matches_recount,
};
use super::reporter::{FINALIZED, Reporter, standby};
use super::violation::violation;
use crate::namenode::evaluation::RbwOnCompleteRule;
use crate::namenode::namesystem::{EditOp, FileId, NamesystemFactory, ReplayError};
use crate::namenode::{BlockId, DatanodeId};
use crate::scenarios::Violation;
use crate::sim::ha_pair::{HaPair, HaPairShape};

/// The excess-choice seed under which a NameNode ranks DN1 last among the block's three
/// replicas: it deletes the other two as excess, as the seed's chain has it.
pub const DN1_KEPT_AS_EXCESS_SEED: u64 = 8;

/// **No data-loss chain** on the seed's ten-step data-loss chain, as the seed wrote it
/// (the RBW rule before HDFS-2791, GS 5 throughout): DN1's RBW report reaches the
/// standby before the block's edits. The legacy whole-message queue judges it after the
/// close and flags it corrupt; after failover the new active invalidates it, DN1's next
/// full report resurrects it before the deletion runs, lowering the replication deletes
/// the two healthy replicas as excess, and DN1 then executes its old deletion: no
/// replica is left. Trunk's standby judges the report against the block under
/// construction and keeps every replica.
pub fn rbw_report_before_close_loses_no_replica<F: NamesystemFactory>(
    factory: F,
) -> Result<(), Violation> {
    let pair = HaPair::new(
        factory,
        HaPairShape {
            initial_gs: 4,
            rbw_rule: RbwOnCompleteRule::AlwaysCorrupt,
            announce_receiving: false,
            // The new active's excess choice keeps DN1, as the seed's chain has it.
            excess_choice_seed: DN1_KEPT_AS_EXCESS_SEED,
            ..HaPairShape::default()
        },
    );
    let dns = pair.datanodes();
    let written = block(BLOCK, 5, 0);
    let finished = block(BLOCK, 5, BLOCK_LENGTH);
    // 1. The active allocates B@5; the pipeline DN1-DN3 starts writing.
    pair.client(&open_file(FILE, 3, written))?;
    for dn in dns {
        dn.receive_block(written);
    }
    // 2. DN1's periodic full report lists B@5 RBW (future at the standby).
    dns[0].full_block_report();
    // 3. The DNs finalize; RECEIVED B@5 from each.
    for dn in dns {
        dn.finalize(finished);
    }
    // 4. The client completes the file.
    pair.client(&[EditOp::Close {
        file: FILE,
        blocks: vec![finished],
    }])?;
    // 5-6. The standby replays the segment, then judges what it postponed.
    pair.catch_up()?;
    // 7. Failover; the DNs report to the new active; replication 3 -> 2 lets it
    // invalidate a corrupt replica, and DN1 takes that command but runs it late.
    pair.failover()?;
    for dn in dns {
        dn.full_block_report();
    }
    pair.client(&[EditOp::SetReplication {
        file: FILE,
        replication: 2,
    }])?;
    dns[0].heartbeat()?;
    // 8. DN1 reports again before deleting: B@5 FINALIZED.
    dns[0].full_block_report();
    // 9. Replication 2 -> 1: excess replicas are chosen.
    pair.client(&[EditOp::SetReplication {
        file: FILE,
        replication: 1,
    }])?;
    // 10. Every datanode executes its deletions.
    for dn in dns {
        dn.heartbeat()?;
    }
    for dn in dns {
        dn.execute_deletions();
    }
    check_pair_quiescent(&pair)
}

/// **No false corruption** and **location completeness** at failover on the failover
/// catch-up schedule (HDFS-3605): the standby replays only the creation and the first
/// block; the block is closed and appended to three times (GS 2..4) while DN1's reports of
/// every GS reach the standby; failover replays the rest in its catch-up. With the HA state
/// flipped before the catch-up (the legacy HA-state check), its drains judge those reports
/// against intermediate states and flag DN1 corrupt; the next append's close then drops the
/// flagged replica as stale (its expected replica kept the old stamp), so the new active
/// has no location for the block DN1 holds. The fixed failover keeps postponing until the
/// catch-up is done.
pub fn failover_judges_queued_reports_after_catch_up<F: NamesystemFactory>(
    factory: F,
) -> Result<(), Violation> {
    let pair = HaPair::new(
        factory,
        HaPairShape {
            datanodes: 1,
            max_txns_per_lock: 3,
            ..HaPairShape::default()
        },
    );
    let dn = &pair.datanodes()[0];
    pair.client(&open_file(FILE, 1, block(BLOCK, 1, 0)))?;
    if pair.tail_once()? != 3 {
        return Err(violation(
            "scenario setup",
            "the standby replays 3 edits".into(),
        ));
    }
    dn.receive_block(block(BLOCK, 1, 0));
    dn.finalize(block(BLOCK, 1, 10));
    pair.client(&[EditOp::Close {
        file: FILE,
        blocks: vec![block(BLOCK, 1, 10)],
    }])?;
    for gs in 2..=4_i64 {
        let length = 10 * gs as u64;
        pair.client(&[EditOp::Append { file: FILE }, EditOp::SetGenstamp(gs)])?;
        dn.bump_generation_stamp(block(BLOCK, gs, 0));
        pair.client(&[EditOp::UpdateBlocks {
            file: FILE,
            blocks: vec![block(BLOCK, gs, length - 10)],
            pipeline: vec![dn.storage()],
        }])?;
        dn.finalize(block(BLOCK, gs, length));
        pair.client(&[EditOp::Close {
            file: FILE,
            blocks: vec![block(BLOCK, gs, length)],
        }])?;
    }
    pair.failover()?;
    check_pair_quiescent(&pair)
}

/// **No false corruption** on the superseded-entry schedule (HDFS-17477): the standby
/// has replayed b@1 and b@2 (complete); DN1's late report of b@1 is queued as
/// inconsistent, then its report of b@2 is applied. Trunk's standby purges the
/// superseded entry (`PendingDataNodeMessages.removeQueuedBlock`); without the purge it
/// lingers and the failover drain flags DN1's current replica corrupt.
pub fn superseded_queued_report_is_purged<F: NamesystemFactory>(
    factory: F,
) -> Result<(), Violation> {
    let ns = standby(factory, 0);
    let mut edits = open_file(FILE, 1, block(BLOCK, 1, 0));
    edits.extend([
        EditOp::SetGenstamp(2),
        EditOp::Close {
            file: FILE,
            blocks: vec![block(BLOCK, 2, BLOCK_LENGTH)],
        },
    ]);
    ns.apply_edits(&edits)
        .map_err(|(_, error)| violation("scenario setup", error.to_string()))?;
    let mut dn1 = Reporter::default();
    dn1.incremental(&*ns, 1, block(BLOCK, 1, BLOCK_LENGTH), FINALIZED);
    dn1.incremental(&*ns, 1, block(BLOCK, 2, BLOCK_LENGTH), FINALIZED);
    ns.transition_to_active(&[], &[DatanodeId(1)])
        .map_err(|error| violation("scenario setup", error.to_string()))?;
    let view = ns.view();
    queue_is_sound("standby", &view, &dn1.sent)?;
    no_false_corruption("new active", &view, &dn1.sent)
}

/// **Safe-mode recount** on the safe-mode credit schedule: a restarted standby knows 10
/// complete blocks (all reported) and 5 blocks of open files; their replicas are reported
/// FINALIZED, then the 5 files close. The counters must reach 15/15 and the standby leave
/// safe mode: completing a block on replay credits the replicas already stored
/// (`BlockManager.completeBlock`). The legacy early drain (a report processed as soon as
/// replay first adds its block, completion crediting nothing) leaves them at 10/15.
pub fn safe_mode_credits_replicas_reported_before_close<F: NamesystemFactory>(
    factory: F,
) -> Result<(), Violation> {
    let ns = standby(factory, 0);
    let setup = |error: ReplayError| violation("scenario setup", error.to_string());
    let mut edits = vec![EditOp::SetGenstamp(1)];
    for f in 0..15_u64 {
        edits.extend(
            open_file(FileId(f), 1, block(BlockId(f as i64), 1, 0))
                .into_iter()
                .skip(1),
        );
    }
    let close = |f: u64| EditOp::Close {
        file: FileId(f),
        blocks: vec![block(BlockId(f as i64), 1, BLOCK_LENGTH)],
    };
    edits.extend((0..10).map(close));
    ns.apply_edits(&edits).map_err(|(_, e)| setup(e))?;
    let mut dn1 = Reporter::default();
    for f in 0..15 {
        dn1.incremental(&*ns, 1, block(BlockId(f), 1, BLOCK_LENGTH), FINALIZED);
    }
    safe_mode_matches_recount("standby", &ns.safe_mode_check())?;
    let closes: Vec<EditOp> = (10..15).map(close).collect();
    ns.apply_edits(&closes).map_err(|(_, e)| setup(e))?;
    safe_mode_matches_recount("standby", &ns.safe_mode_check())?;
    if !ns.leave_safe_mode_if_threshold_reached() {
        return Err(violation(
            "safe-mode recount",
            format!("the standby cannot leave safe mode: {:?}", ns.safe_mode()),
        ));
    }
    Ok(())
}
