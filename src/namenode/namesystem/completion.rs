//! Block completion: COMMITTED and COMPLETE (`BlockManager.commitOrCompleteLastBlock`,
//! `completeBlock`, `forceCompleteBlock`).
//!
//! **The race (HDFS-2742).** Per block the active sees allocation, RBW reports, completion,
//! then FINALIZED reports; it guarantees that order because a block the client closed is
//! only COMMITTED until `minReplication` FINALIZED replicas of its GS and length are
//! stored. The standby learns completion from `OP_CLOSE`, late, and must not lose it.
//! **The fix:** the active commits and completes at `minReplication`; replay forces the
//! completion (commit and complete in one edit, so the standby never shows COMMITTED) and
//! credits the replicas already stored to safe mode.
//!
//! Lease and block recovery (UNDER_RECOVERY, `commitBlockSynchronization`) is out of
//! scope: nothing here enters UNDER_RECOVERY, and a file whose close the active refuses
//! stays open until its replicas are reported.

use super::state::{DrainTrigger, State};
use crate::namenode::evaluation::BlockUcState;
use crate::namenode::{Block, BlockId};

impl State {
    /// An edit completes block `id` with the edit's GS and length: replayed, a forced
    /// completion followed by the block's drain; on the active that applies it, a commit
    /// that completes once enough replicas are stored.
    ///
    /// `FSEditLogLoader` drains after each forced completion: `updateBlocks` (`OP_CLOSE`,
    /// `OP_UPDATE_BLOCKS`) and `addNewBlock` (the penultimate block of `OP_ADD_BLOCK`).
    /// After `OP_ADD_BLOCK` the drain decides nothing new, but is kept as upstream has it:
    /// the edit carries the stored GS (`add_new_block` refuses another), so no queued
    /// entry stops being future, and an entry queued as corrupt (an older GS) is corrupt
    /// against COMPLETE too, so it is queued again while postponing; entries behind a
    /// future one stay behind it.
    pub(super) fn complete_on_edit(&mut self, id: BlockId, edit: Block) {
        if self.replaying() {
            self.force_complete(id, edit);
            self.attach_genstamp(edit.gs);
            self.drain(id, DrainTrigger::Completed);
        } else {
            // `BlockManager.commitBlock` returns first thing for a COMMITTED block: a
            // retried close or add-block sweeps nothing again, and completes it if it can
            // (`commitOrCompleteLastBlock`). Replay's `forceCompleteBlock` has no such
            // return.
            if self.blocks.get(&id).map(|b| b.state) != Some(BlockUcState::Committed) {
                self.commit(id, edit);
            }
            self.complete_if_min_replicated(id);
        }
    }

    /// `BlockInfo.commitBlock`: the client's final GS and length; expected replicas of
    /// another GS lose their location (`removeStaleReplicas`, HDFS-5438): the replicas a
    /// pipeline update or the append left out, and those not reported at the final GS.
    fn commit(&mut self, id: BlockId, edit: Block) {
        let Some(stored) = self.blocks.get_mut(&id) else {
            return;
        };
        stored.block.gs = edit.gs;
        stored.block.length = edit.length;
        if stored.state == BlockUcState::Complete {
            return;
        }
        stored.state = BlockUcState::Committed;
        self.remove_stale_replicas(id);
    }

    /// A COMMITTED block with at least `minReplication` live stored replicas becomes
    /// COMPLETE (`addStoredBlock` → `completeBlock`, `hasMinStorage`).
    pub(super) fn complete_if_min_replicated(&mut self, id: BlockId) {
        let Some(stored) = self.blocks.get(&id) else {
            return;
        };
        if stored.state == BlockUcState::Committed
            && self.live_replicas(id) >= self.config.min_replication
        {
            self.complete_block(id, "min replication reached");
        }
    }

    /// `forceCompleteBlock`: commit with the edit's GS and length, then complete without a
    /// replica count.
    fn force_complete(&mut self, id: BlockId, edit: Block) {
        self.commit(id, edit);
        self.complete_block(id, "forced by replay");
    }

    /// `completeBlock`: COMPLETE, counted by safe mode with the replicas already stored.
    /// `how` names the step that completed it, for a failure's story.
    fn complete_block(&mut self, id: BlockId, how: &'static str) {
        let Some(stored) = self.blocks.get_mut(&id) else {
            return;
        };
        stored.expected.clear();
        stored.state = BlockUcState::Complete;
        let present = stored.locations.len();
        let gs = stored.block.gs;
        let safe_before = self.safe_mode.block_safe;
        self.count_completed_block(present);
        let counts = self.safe_mode.on.then_some(self.safe_mode);
        // The safe-mode miscount of the legacy queues: a safe block left uncounted.
        let uncredited = counts.is_some_and(|c| {
            c.block_safe == safe_before && present >= self.config.safe_replication
        });
        crate::events::debug!(
            node = self.node(),
            block = id.0,
            gs,
            stored = present,
            how,
            block_safe = counts.map(|c| c.block_safe),
            block_total = counts.map(|c| c.block_total),
            why = uncredited.then_some("stored replicas not credited"),
            "block completed"
        );
    }

    /// The block's stored replicas not flagged corrupt (`countNodes().liveReplicas()`).
    pub(super) fn live_replicas(&self, id: BlockId) -> usize {
        let Some(stored) = self.blocks.get(&id) else {
            return 0;
        };
        let flagged = self.corrupt.get(&id);
        stored
            .locations
            .iter()
            .filter(|s| flagged.is_none_or(|f| !f.contains_key(s)))
            .count()
    }
}
