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
use crate::namenode::{BlockId, DatanodeId, ReplicaState};
use crate::scenarios::Violation;
use crate::sim::hdfs_datanode::storage_of;

/// The property [`judged_at_block_edit`] checks.
pub const JUDGED_AT_BLOCK_EDIT: &str = "queued reports judged at their block's edit";

/// An RBW replica (an incremental RECEIVING report).
const RBW: ReportedState = ReportedState::Replica(ReplicaState::Rbw);

/// **Queued reports judged at their block's edit**: right after replaying an edit of
/// `block`, every report of it still queued is future (its stamp above the namesystem's).
pub fn judged_at_block_edit(
    nn: &str,
    view: &NamesystemView,
    block: BlockId,
    edit: &str,
) -> Result<(), Violation> {
    let left: Vec<String> = view
        .queued
        .iter()
        .filter(|entry| entry.block.id == block && entry.block.gs <= view.generation_stamp)
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

/// **Queued reports judged at their block's edit**, sequential: DN1's RBW report of the
/// block arrives before the standby replays the file's creation (queued as future), then
/// the creation replays; a pipeline recovery follows, DN1's report at the new stamp
/// arrives first, then the recovery's edits replay. After each replay the report must
/// have left the queue, and DN1 be an expected replica at that stamp.
pub fn queued_reports_judged_at_their_block_edit<F: NamesystemFactory>(
    factory: F,
) -> Result<(), Violation> {
    let ns = standby(factory, 0);
    let mut dn1 = Reporter::default();
    dn1.incremental(&*ns, 1, block(BLOCK, 1, 0), RBW);
    replay(&*ns, open_file(FILE, 3, block(BLOCK, 1, 0)))?;
    judged("`OP_ADD_BLOCK`", &*ns, 1)?;
    dn1.incremental(&*ns, 1, block(BLOCK, 2, 0), RBW);
    let recovery = vec![
        EditOp::SetGenstamp(2),
        EditOp::UpdateBlocks {
            file: FILE,
            blocks: vec![block(BLOCK, 2, 0)],
            pipeline: vec![storage_of(DatanodeId(1))],
        },
    ];
    replay(&*ns, recovery)?;
    judged("the recovery's `OP_UPDATE_BLOCKS`", &*ns, 2)
}

/// The property after `edit`, and DN1 expected at stamp `gs`.
fn judged(edit: &str, ns: &dyn NamesystemApi, gs: i64) -> Result<(), Violation> {
    let view = ns.view();
    judged_at_block_edit("standby", &view, BLOCK, edit)?;
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
