//! Edit replay (`FSEditLogLoader`): each op changes the namespace and then drains the
//! queue of every block it changed.
//!
//! **The race (HDFS-2742).** A datanode's report of a block can reach the standby before
//! the edit that allocated the block, bumped its generation stamp or completed it; judged
//! then, a healthy replica looks corrupt. **The fix** re-judges the block's postponed
//! reports (`BlockManager.processQueuedMessagesForBlock`) right after each such edit: a new
//! block, a generation-stamp change, a completion (`forceCompleteBlock`).

use std::collections::{BTreeMap, BTreeSet};

use super::edits::{EditOp, FileId, ReplayError};
use super::state::{DrainTrigger, State};
use super::view::{HaState, INodeFile, StoredBlock};
use crate::namenode::evaluation::BlockUcState;
use crate::namenode::{Block, BlockId, GenerationStamp, StorageId, TxId};

/// The block-list op [`State::update_blocks`] applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockListOp<'a> {
    /// `OP_UPDATE_BLOCKS`, with the new pipeline the active reads on a stamp change.
    Update { pipeline: &'a [StorageId] },
    /// `OP_CLOSE`: the last block is completed too.
    Close,
}

impl State {
    /// One op (`FSEditLogLoader.applyEditLogOp`), with the next transaction id. Replayed,
    /// it is an `edit applied` event, before the drains it causes; refused, on the active
    /// too, an `edit refused`.
    pub(super) fn apply(&mut self, op: &EditOp) -> Result<(), ReplayError> {
        let txid = self.last_applied_txid + 1;
        if self.replaying() {
            self.trace_edit_applied(txid, op);
        }
        let result = self.apply_op(op);
        match &result {
            Ok(()) => self.last_applied_txid = txid,
            Err(error) => {
                crate::events::debug!(node = self.node(), txid, op = op.name(), why = %error, "edit refused");
            }
        }
        result
    }

    fn trace_edit_applied(&self, txid: TxId, op: &EditOp) {
        let last = op.last_block();
        let (gs, replication) = match op {
            EditOp::SetGenstamp(gs) => (Some(*gs), None),
            EditOp::AddFile { replication, .. } | EditOp::SetReplication { replication, .. } => {
                (None, Some(*replication))
            }
            _ => (last.map(|b| b.gs), None),
        };
        crate::events::debug!(
            node = self.node(),
            txid,
            op = op.name(),
            file = op.file().filter(|_| last.is_none()),
            block = last.map(|b| tracing::field::display(b.id)),
            gs,
            replication,
            "edit applied"
        );
    }

    fn apply_op(&mut self, op: &EditOp) -> Result<(), ReplayError> {
        match op {
            EditOp::SetGenstamp(gs) => {
                self.set_genstamp(*gs);
                Ok(())
            }
            EditOp::AddFile { file, replication } => self.add_file(*file, *replication),
            EditOp::AddBlock {
                file,
                penultimate,
                last,
            } => {
                self.note_block_list(&[*last]);
                self.add_new_block(*file, *penultimate, *last)
            }
            EditOp::UpdateBlocks {
                file,
                blocks,
                pipeline,
            } => {
                self.note_block_list(blocks);
                self.update_blocks(*file, blocks, BlockListOp::Update { pipeline })
            }
            EditOp::Close { file, blocks } => {
                self.note_block_list(blocks);
                self.update_blocks(*file, blocks, BlockListOp::Close)
            }
            EditOp::Append { file } => self.reopen_last_block(*file),
            EditOp::SetReplication { file, replication } => {
                self.set_replication(*file, *replication)
            }
            EditOp::Delete { file } => self.delete_file(*file),
        }
    }

    /// `OP_SET_GENSTAMP`: replayed, only the impending GS moves
    /// (`BlockIdManager.setImpendingGenerationStamp`, HDFS-14941); applied by the active
    /// that logged it (or replayed without HDFS-14941), the counter moves.
    fn set_genstamp(&mut self, gs: GenerationStamp) {
        if self.replaying() && self.config.behavior.impending_genstamp() {
            self.impending_gs = self.impending_gs.max(gs);
        } else {
            self.gs_counter = self.gs_counter.max(gs);
        }
    }

    /// Replay attaches a block with `gs` (a new block, or a new GS for one): the counter
    /// of the future test reaches it (`setGenerationStampIfGreater`), before the block's
    /// drain.
    pub(super) fn attach_genstamp(&mut self, gs: GenerationStamp) {
        self.gs_counter = self.gs_counter.max(gs);
    }

    fn add_file(&mut self, file: FileId, replication: usize) -> Result<(), ReplayError> {
        if self.files.contains_key(&file) {
            return Err(ReplayError::FileExists(file));
        }
        self.files.insert(
            file,
            INodeFile {
                blocks: Vec::new(),
                under_construction: true,
                replication,
            },
        );
        Ok(())
    }

    fn set_replication(&mut self, file: FileId, replication: usize) -> Result<(), ReplayError> {
        let inode = self
            .files
            .get_mut(&file)
            .ok_or(ReplayError::UnknownFile(file))?;
        inode.replication = replication;
        // The active re-checks the file's blocks: a lowered factor makes excess replicas
        // (how the ten-step data-loss chain deletes the last healthy ones). The standby
        // only records the factor.
        if self.ha == HaState::Active && !self.safe_mode.on {
            for id in inode.blocks.clone() {
                self.check_replication(id);
            }
        }
        Ok(())
    }

    /// `FSEditLogLoader.addNewBlock`: the penultimate block gets its final length and is
    /// completed (its queue drained), then the new last block is appended.
    fn add_new_block(
        &mut self,
        file: FileId,
        penultimate: Option<Block>,
        last: Block,
    ) -> Result<(), ReplayError> {
        let inode = self
            .files
            .get(&file)
            .ok_or(ReplayError::UnknownFile(file))?;
        let old_last = inode.blocks.last().copied();
        if self.blocks.contains_key(&last.id) {
            return Err(ReplayError::BlockExists(last.id));
        }
        match (old_last, penultimate) {
            (None, None) => {}
            (Some(stored_id), Some(edit)) => {
                self.check_penultimate(file, inode.blocks.len() - 1, stored_id, edit)?;
                let completed = match self.blocks.get_mut(&stored_id) {
                    Some(stored) => {
                        stored.block.length = edit.length;
                        stored.state == BlockUcState::Complete
                    }
                    None => true,
                };
                if !completed {
                    self.complete_on_edit(stored_id, edit);
                }
            }
            (stored, edit) => {
                return Err(ReplayError::BlockIdMismatch {
                    file,
                    position: inode.blocks.len().saturating_sub(1),
                    stored: stored.unwrap_or(BlockId(-1)),
                    edit: edit.map_or(BlockId(-1), |b| b.id),
                });
            }
        }
        self.append_block(file, last);
        Ok(())
    }

    /// `OP_ADD_BLOCK`'s penultimate block must be the file's last one (`position`), at its
    /// stored generation stamp.
    fn check_penultimate(
        &self,
        file: FileId,
        position: usize,
        stored_id: BlockId,
        edit: Block,
    ) -> Result<(), ReplayError> {
        if stored_id != edit.id {
            return Err(ReplayError::BlockIdMismatch {
                file,
                position,
                stored: stored_id,
                edit: edit.id,
            });
        }
        let stored = self
            .blocks
            .get(&stored_id)
            .ok_or(ReplayError::MissingBlock {
                file,
                block: stored_id,
            })?;
        if stored.block.gs != edit.gs {
            return Err(ReplayError::GenerationStamp {
                block: edit.id,
                stored: stored.block.gs,
                edit: edit.gs,
            });
        }
        Ok(())
    }

    /// `FSEditLogLoader.updateBlocks` (`OP_UPDATE_BLOCKS`, and `OP_CLOSE`): the edit is
    /// checked whole before anything changes.
    fn update_blocks(
        &mut self,
        file: FileId,
        edit: &[Block],
        op: BlockListOp<'_>,
    ) -> Result<(), ReplayError> {
        let close = op == BlockListOp::Close;
        let stored_ids = self
            .files
            .get(&file)
            .ok_or(ReplayError::UnknownFile(file))?
            .blocks
            .clone();
        self.check_block_list(file, &stored_ids, edit)?;
        if !self.replaying() {
            self.check_client_update(file, &stored_ids, edit, close)?;
        }
        if close && edit.len() != stored_ids.len() {
            // A close names the file's blocks: the active abandons a block with
            // OP_UPDATE_BLOCKS first, and a block a close added could not be complete.
            // Refused before anything changes.
            return Err(ReplayError::CloseChangesBlockList {
                file,
                stored: stored_ids.len(),
                edit: edit.len(),
            });
        }
        self.update_stored_blocks(&stored_ids, edit, op);
        if edit.len() < stored_ids.len() {
            self.remove_abandoned_blocks(file, &stored_ids, edit.len());
        }
        // Extra blocks are appended under construction, whatever the op.
        for block in edit.iter().skip(stored_ids.len()) {
            self.append_block(file, *block);
        }
        if close {
            self.check_file_complete(file)?;
            if let Some(inode) = self.files.get_mut(&file) {
                inode.under_construction = false;
            }
        }
        Ok(())
    }

    /// What the active refuses of a client's block list, which replay takes: a new stamp
    /// for the last block unless it is under construction in an open file
    /// (`FSNamesystem.updatePipeline`, `checkUCBlock`), and a close at another stamp than
    /// the block's (`BlockManager.commitBlock`: a commit with a mismatching GS).
    fn check_client_update(
        &self,
        file: FileId,
        stored_ids: &[BlockId],
        edit: &[Block],
        close: bool,
    ) -> Result<(), ReplayError> {
        let (Some(stored_id), Some(block)) = (stored_ids.last(), edit.last()) else {
            return Ok(());
        };
        let Some(stored) = self.blocks.get(stored_id) else {
            return Ok(());
        };
        // A COMMITTED block's commit at another stamp is ignored on the active, not refused
        // (`BlockManager.commitBlock` returns before its stamp check).
        let committed = !self.replaying() && stored.state == BlockUcState::Committed;
        if stored_ids.len() != edit.len() || stored.block.gs == block.gs || committed {
            return Ok(());
        }
        if close {
            return Err(ReplayError::GenerationStamp {
                block: block.id,
                stored: stored.block.gs,
                edit: block.gs,
            });
        }
        let open = self.files.get(&file).is_some_and(|f| f.under_construction);
        if !open || stored.state != BlockUcState::UnderConstruction {
            return Err(ReplayError::NotUnderConstruction {
                file,
                block: block.id,
                state: stored.state,
            });
        }
        Ok(())
    }

    /// `FSNamesystem.completeFile` on the active (`checkFileProgress`): the file closes
    /// only once every block is COMPLETE; until then the client's close is refused (and
    /// retried), and nothing is logged. Replay forced every block complete already.
    fn check_file_complete(&self, file: FileId) -> Result<(), ReplayError> {
        let Some(inode) = self.files.get(&file) else {
            return Ok(());
        };
        let open = inode
            .blocks
            .iter()
            .find(|id| self.blocks.get(id).map(|b| b.state) != Some(BlockUcState::Complete));
        match open {
            Some(block) => Err(ReplayError::FileNotComplete {
                file,
                block: *block,
            }),
            None => Ok(()),
        }
    }

    /// Whether the edit's block list fits the stored one: no id twice, the same ids
    /// position by position, a generation stamp that changes only on the last block and
    /// never goes back, and unused ids for the blocks it adds.
    fn check_block_list(
        &self,
        file: FileId,
        stored_ids: &[BlockId],
        edit: &[Block],
    ) -> Result<(), ReplayError> {
        let mut listed = BTreeSet::new();
        if let Some(block) = edit.iter().find(|block| !listed.insert(block.id)) {
            return Err(ReplayError::DuplicateBlock {
                file,
                block: block.id,
            });
        }
        for (position, (stored_id, block)) in stored_ids.iter().zip(edit).enumerate() {
            if *stored_id != block.id {
                return Err(ReplayError::BlockIdMismatch {
                    file,
                    position,
                    stored: *stored_id,
                    edit: block.id,
                });
            }
            let stored_gs = self
                .blocks
                .get(stored_id)
                .ok_or(ReplayError::MissingBlock {
                    file,
                    block: *stored_id,
                })?
                .block
                .gs;
            let is_last = position + 1 == stored_ids.len() && stored_ids.len() == edit.len();
            if block.gs < stored_gs || (block.gs != stored_gs && !is_last) {
                return Err(ReplayError::GenerationStamp {
                    block: block.id,
                    stored: stored_gs,
                    edit: block.gs,
                });
            }
        }
        for block in edit.iter().skip(stored_ids.len()) {
            if self.blocks.contains_key(&block.id) {
                return Err(ReplayError::BlockExists(block.id));
            }
        }
        Ok(())
    }

    /// The edit's GS and length for the blocks it keeps. Every block but the last, and the
    /// last of a close, is completed (replay) or committed (the active); a completed block,
    /// or one whose GS changed, has its queue drained. On the active a GS change is a
    /// pipeline update (`updatePipelineInternal`); replay only sets the stamp
    /// (`FSEditLogLoader.updateBlocks`), its stale replicas go at the close.
    fn update_stored_blocks(&mut self, stored_ids: &[BlockId], edit: &[Block], op: BlockListOp) {
        let close = op == BlockListOp::Close;
        let last_position = edit.len().saturating_sub(1);
        let replaying = self.replaying();
        for (position, (stored_id, block)) in stored_ids.iter().zip(edit).enumerate() {
            let Some(stored) = self.blocks.get_mut(stored_id) else {
                continue;
            };
            let gs_changed = stored.block.gs != block.gs;
            // On the active a COMMITTED block keeps its length and stamp: the commit
            // that would write them returns at once (`BlockManager.commitBlock`).
            if replaying || stored.state != BlockUcState::Committed {
                stored.block.length = block.length;
                stored.block.gs = block.gs;
            }
            let complete = stored.state == BlockUcState::Complete;
            let force = !complete && (position != last_position || close);
            if force {
                self.complete_on_edit(*stored_id, *block);
            } else if gs_changed {
                if let (BlockListOp::Update { pipeline }, false) = (op, self.replaying()) {
                    self.update_pipeline(*stored_id, pipeline);
                }
                self.attach_genstamp(block.gs);
                self.drain(*stored_id, DrainTrigger::GenerationStamp);
            }
        }
    }

    /// The blocks past `kept` leave the file: an abandoned last block. Their queues go
    /// with them, undrained.
    fn remove_abandoned_blocks(&mut self, file: FileId, stored_ids: &[BlockId], kept: usize) {
        for removed in &stored_ids[kept..] {
            self.remove_block(*removed);
        }
        if let Some(inode) = self.files.get_mut(&file) {
            inode.blocks.truncate(kept);
        }
    }

    fn append_block(&mut self, file: FileId, block: Block) {
        self.blocks.insert(
            block.id,
            StoredBlock {
                block,
                state: BlockUcState::UnderConstruction,
                file,
                locations: BTreeSet::new(),
                expected: BTreeMap::new(),
            },
        );
        if let Some(inode) = self.files.get_mut(&file) {
            inode.blocks.push(block.id);
        }
        self.attach_genstamp(block.gs);
        self.drain(block.id, DrainTrigger::NewBlock);
    }

    /// `OP_APPEND` (`FSDirAppendOp.prepareFileForAppend`, on the active and on replay): the
    /// file is open again and its last block, if COMPLETE, goes back under construction with
    /// its storages as expected replicas at its present stamp, and out of the safe-mode
    /// counts.
    fn reopen_last_block(&mut self, file: FileId) -> Result<(), ReplayError> {
        let inode = self
            .files
            .get_mut(&file)
            .ok_or(ReplayError::UnknownFile(file))?;
        let last = inode
            .blocks
            .last()
            .copied()
            .filter(|_| !inode.under_construction)
            .ok_or(ReplayError::CannotReopen(file))?;
        inode.under_construction = true;
        if let Some(locations) = self.convert_to_under_construction(last) {
            self.uncount_complete_block(locations);
        }
        Ok(())
    }

    fn delete_file(&mut self, file: FileId) -> Result<(), ReplayError> {
        let inode = self
            .files
            .remove(&file)
            .ok_or(ReplayError::UnknownFile(file))?;
        for id in inode.blocks {
            self.remove_block(id);
        }
        Ok(())
    }

    /// Removes a block from the namespace and the safe-mode counts, with its corrupt
    /// flags and its queue (HDFS-17905: no later edit would drain it;
    /// [`LegacyKeepRemovedBlockMessages`](super::NamesystemBehavior) keeps it).
    fn remove_block(&mut self, id: BlockId) {
        let Some(stored) = self.blocks.remove(&id) else {
            return;
        };
        if stored.state == BlockUcState::Complete {
            self.uncount_complete_block(stored.locations.len());
        }
        self.corrupt.remove(&id);
        if self.config.behavior.purges_removed_block_messages() {
            self.queue.remove_block(id);
        }
    }
}
