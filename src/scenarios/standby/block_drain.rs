//! The standby judges a queued report when replay reaches its block (HDFS-2742, trunk).
//!
//! **The race.** A replica reported before the edit that adds its block, or before the
//! recovery edit that moves the block to the replica's stamp, waits in the queue as
//! future; an edit that does not judge it leaves the standby without the replica (its
//! expected location, and later its safe-mode credit) until some later edit or failover.
//!
//! **The fix** (`FSEditLogLoader.addNewBlock` and `updateBlocks` call
//! `BlockManager.processQueuedMessagesForBlock`): each edit that adds a block, changes its
//! stamp or completes it judges the block's queued reports at once.

use super::edits::{BLOCK, FILE, block, open_file};
use super::reporter::{Reporter, standby};
use super::violation::violation;
use crate::namenode::namesystem::{EditOp, NamesystemApi, NamesystemFactory, NamesystemView};
use crate::namenode::pending_messages::ReportedState;
use crate::namenode::{Block, BlockId, DatanodeId, ReplicaState};
use crate::scenarios::Violation;
use crate::sim::hdfs_datanode::storage_of;

/// The property [`judged_at_block_edit`] checks.
pub const JUDGED_AT_BLOCK_EDIT: &str = "queued reports judged at their block's edit";

/// The property [`judged_in_arrival_order`] checks.
pub const JUDGED_IN_ARRIVAL_ORDER: &str = "a block's queued reports are judged in arrival order";

/// An RBW replica (an incremental RECEIVING report).
const RBW: ReportedState = ReportedState::Replica(ReplicaState::Rbw);

/// **Queued reports judged at their block's edit**: right after replaying an edit of
/// `block` that `datanode`'s queued report was produced under, no report of that datanode
/// for the block is still queued unless it is future (its stamp above the namesystem's).
pub fn judged_at_block_edit(
    nn: &str,
    view: &NamesystemView,
    (block, datanode): (BlockId, DatanodeId),
    edit: &str,
) -> Result<(), Violation> {
    let left: Vec<String> = view
        .queued
        .iter()
        .filter(|entry| entry.block.id == block && entry.storage.datanode == datanode)
        .filter(|entry| entry.block.gs <= view.generation_stamp)
        .map(|entry| format!("{} {} {}", entry.storage.datanode, entry.state, entry.block))
        .collect();
    if left.is_empty() {
        return Ok(());
    }
    Err(violation(
        JUDGED_AT_BLOCK_EDIT,
        format!(
            "{nn} replayed {edit} (stamp {}) and still queues [{}]",
            view.generation_stamp,
            left.join(", ")
        ),
    ))
}

/// **A block's queued reports are judged in arrival order**: `later`, queued behind a
/// report of the same block still future, has not been judged ahead of it (it is still
/// queued).
pub fn judged_in_arrival_order(
    nn: &str,
    view: &NamesystemView,
    later: (DatanodeId, Block),
) -> Result<(), Violation> {
    let (datanode, block) = later;
    let queued = view
        .queued
        .iter()
        .any(|entry| entry.storage.datanode == datanode && entry.block == block);
    if queued {
        return Ok(());
    }
    Err(violation(
        JUDGED_IN_ARRIVAL_ORDER,
        format!(
            "{nn} judged {datanode}'s report of {block} ahead of a future report of the same \
             block that arrived before it"
        ),
    ))
}

/// **Queued reports judged at their block's edit**, sequential: DN1's RBW report of the
/// block arrives before the standby replays the file's creation (queued as future), then
/// the creation replays; a pipeline recovery follows, DN1's report at the new stamp
/// arrives first, then the recovery's edits replay. After each replay the report must
/// have left the queue, and DN1 be an expected replica at that stamp. Then **a block's
/// queued reports are judged in arrival order**: two more recoveries (stamps 3, with DN2
/// in the pipeline, and 4, without it); DN1's report at stamp 4 arrives, then DN2's at 3;
/// replaying stamp 3 leaves DN1's report future, and DN2's, behind it, must wait too
/// (`processQueuedMessages` re-queues the block's later entries unjudged).
pub fn queued_reports_judged_at_their_block_edit<F: NamesystemFactory>(
    factory: F,
) -> Result<(), Violation> {
    let ns = standby(factory, 0);
    let mut dn1 = Reporter::default();
    dn1.incremental(&*ns, 1, block(BLOCK, 1, 0), RBW);
    replay(&*ns, open_file(FILE, 3, block(BLOCK, 1, 0)))?;
    judged("`OP_ADD_BLOCK`", &*ns, 1)?;
    dn1.incremental(&*ns, 1, block(BLOCK, 2, 0), RBW);
    replay(&*ns, recovery_to(2, &[1]))?;
    judged("the recovery's `OP_UPDATE_BLOCKS`", &*ns, 2)?;
    let mut dn2 = Reporter::default();
    dn1.incremental(&*ns, 1, block(BLOCK, 4, 0), RBW);
    dn2.incremental(&*ns, 2, block(BLOCK, 3, 0), RBW);
    replay(&*ns, recovery_to(3, &[1, 2]))?;
    judged_in_arrival_order("standby", &ns.view(), (DatanodeId(2), block(BLOCK, 3, 0)))?;
    // DN2, left out at stamp 4, has a stale replica: its report may wait, DN1's may not.
    replay(&*ns, recovery_to(4, &[1]))?;
    judged("the second recovery's `OP_UPDATE_BLOCKS`", &*ns, 4)
}

/// A pipeline recovery of the block to stamp `gs` over datanodes `pipeline`.
fn recovery_to(gs: i64, pipeline: &[u64]) -> Vec<EditOp> {
    vec![
        EditOp::SetGenstamp(gs),
        EditOp::UpdateBlocks {
            file: FILE,
            blocks: vec![block(BLOCK, gs, 0)],
            pipeline: pipeline
                .iter()
                .map(|d| storage_of(DatanodeId(*d)))
                .collect(),
        },
    ]
}

/// The property after `edit`, and DN1 expected at stamp `gs`.
fn judged(edit: &str, ns: &dyn NamesystemApi, gs: i64) -> Result<(), Violation> {
    let view = ns.view();
    judged_at_block_edit("standby", &view, (BLOCK, DatanodeId(1)), edit)?;
    let expected = view
        .blocks
        .get(&BLOCK)
        .and_then(|stored| stored.expected.get(&storage_of(DatanodeId(1))));
    match expected {
        Some((at, _)) if *at == gs => Ok(()),
        other => Err(violation(
            JUDGED_AT_BLOCK_EDIT,
            format!("standby replayed {edit}: DN1 expected at {other:?}, not at stamp {gs}"),
        )),
    }
}

fn replay(ns: &dyn NamesystemApi, edits: Vec<EditOp>) -> Result<(), Violation> {
    ns.apply_edits(&edits)
        .map(|_| ())
        .map_err(|(_, error)| violation("scenario setup", error.to_string()))
}
