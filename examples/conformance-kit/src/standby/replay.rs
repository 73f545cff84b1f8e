//! Edit replay on the standby (`FSEditLogLoader`), and the same edits applied by an active.
//!
//! **The race (HDFS-2742).** A report of a block can be queued before the edit that adds
//! the block, changes its stamp or completes it; judged only later, against a newer state,
//! a healthy replica looks corrupt.
//!
//! **The fix**: each of those edits attaches the block's stamp and then drains the block's
//! queue at once (`Queue::PerBlock`); the 2012 queue waits for the end of the batch.

use std::collections::{BTreeMap, BTreeSet};

use hadoop_ref::namenode::evaluation::BlockUcState;
use hadoop_ref::namenode::namesystem::{EditOp, FileId, INodeFile, ReplayError, StoredBlock};
use hadoop_ref::namenode::{Block, BlockId, GenerationStamp, ReplicaState, StorageId};

use super::Queue;
use super::state::State;
use crate::mutants::Mutant;

impl State {
    /// One edit.
    pub(super) fn apply(&mut self, op: &EditOp) -> Result<(), ReplayError> {
        match op {
            EditOp::SetGenstamp(gs) if self.replaying() => {
                self.impending_gs = self.impending_gs.max(*gs);
            }
            EditOp::SetGenstamp(gs) => self.gs = self.gs.max(*gs),
            EditOp::AddFile { file, replication } => {
                if self.files.contains_key(file) {
                    return Err(ReplayError::FileExists(*file));
                }
                let inode = INodeFile {
                    blocks: Vec::new(),
                    under_construction: true,
                    replication: *replication,
                };
                self.files.insert(*file, inode);
            }
            EditOp::AddBlock {
                file,
                penultimate,
                last,
            } => {
                self.file(*file)?;
                if self.blocks.contains_key(&last.id) {
                    return Err(ReplayError::BlockExists(last.id));
                }
                if let Some(edit) = penultimate {
                    if let Some(stored) = self.blocks.get_mut(&edit.id) {
                        stored.block.length = edit.length;
                        if stored.state != BlockUcState::Complete {
                            self.complete_on_edit(edit.id, *edit);
                        }
                    }
                }
                self.append_block(*file, *last);
            }
            EditOp::UpdateBlocks {
                file,
                blocks,
                pipeline,
            } => self.update_blocks(*file, blocks, Some(pipeline))?,
            EditOp::Close { file, blocks } => {
                self.update_blocks(*file, blocks, None)?;
                self.file(*file)?.under_construction = false;
            }
            EditOp::Append { file } => self.reopen(*file)?,
            EditOp::SetReplication { file, replication } => {
                self.file(*file)?.replication = *replication
            }
            EditOp::Delete { file } => {
                let inode = self
                    .files
                    .remove(file)
                    .ok_or(ReplayError::UnknownFile(*file))?;
                for id in inode.blocks {
                    self.remove_block(id);
                }
            }
        }
        Ok(())
    }

    fn file(&mut self, file: FileId) -> Result<&mut INodeFile, ReplayError> {
        self.files
            .get_mut(&file)
            .ok_or(ReplayError::UnknownFile(file))
    }

    /// `OP_UPDATE_BLOCKS` (`pipeline` given) or `OP_CLOSE` (`None`): every block but the
    /// last, and the last of a close, is completed; a last block whose stamp changed is
    /// drained.
    fn update_blocks(
        &mut self,
        file: FileId,
        edit: &[Block],
        pipeline: Option<&Vec<StorageId>>,
    ) -> Result<(), ReplayError> {
        let stored_ids = self.file(file)?.blocks.clone();
        let last = edit.len().saturating_sub(1);
        for (position, (id, block)) in stored_ids.iter().zip(edit).enumerate() {
            let Some(stored) = self.blocks.get_mut(id) else {
                continue;
            };
            let gs_changed = stored.block.gs != block.gs;
            stored.block.length = block.length;
            stored.block.gs = block.gs;
            let complete = stored.state == BlockUcState::Complete;
            if !complete && (position != last || pipeline.is_none()) {
                self.complete_on_edit(*id, *block);
            } else if gs_changed {
                if let (Some(pipeline), false) = (pipeline, self.replaying()) {
                    self.remove_stale_replicas(*id);
                    let stored = self.blocks.get_mut(id).expect("present");
                    stored.expected = pipeline
                        .iter()
                        .map(|s| (*s, (block.gs, ReplicaState::Rbw)))
                        .collect();
                }
                self.gs = self.gs.max(block.gs);
                if !self.mutated_by(Mutant::StampChangeNotDrained) {
                    self.drain(*id);
                }
            }
        }
        if edit.len() < stored_ids.len() {
            for removed in &stored_ids[edit.len()..] {
                self.remove_block(*removed);
            }
            self.file(file)?.blocks.truncate(edit.len());
        }
        for block in edit.iter().skip(stored_ids.len()) {
            self.append_block(file, *block);
        }
        Ok(())
    }

    fn append_block(&mut self, file: FileId, block: Block) {
        let stored = StoredBlock {
            block,
            state: BlockUcState::UnderConstruction,
            file,
            locations: BTreeSet::new(),
            expected: BTreeMap::new(),
        };
        self.blocks.insert(block.id, stored);
        if let Some(inode) = self.files.get_mut(&file) {
            inode.blocks.push(block.id);
        }
        self.gs = self.gs.max(block.gs);
        if !self.mutated_by(Mutant::AddedBlockNotDrained) {
            self.drain(block.id);
        }
    }

    /// Replayed: committed and completed at once, stored replicas credited, then drained.
    /// Applied by the active: committed, completed once `minReplication` replicas are live.
    pub(super) fn complete_on_edit(&mut self, id: BlockId, edit: Block) {
        let Some(stored) = self.blocks.get_mut(&id) else {
            return;
        };
        stored.block.gs = edit.gs;
        stored.block.length = edit.length;
        if stored.state != BlockUcState::Complete {
            stored.state = BlockUcState::Committed;
            self.remove_stale_replicas(id);
        }
        if self.replaying() {
            self.complete_block(id);
            self.gs = self.gs.max(edit.gs);
            self.drain(id);
        } else if self.live_replicas(id) >= self.config.min_replication {
            self.complete_block(id);
        }
    }

    pub(super) fn complete_block(&mut self, id: BlockId) {
        let Some(stored) = self.blocks.get_mut(&id) else {
            return;
        };
        if stored.state == BlockUcState::Complete {
            return;
        }
        stored.expected.clear();
        stored.state = BlockUcState::Complete;
        let present = stored.locations.len();
        self.count_completed_block(present);
    }

    /// The locations of expected replicas whose stamp is not the block's go.
    fn remove_stale_replicas(&mut self, id: BlockId) {
        let Some(stored) = self.blocks.get(&id) else {
            return;
        };
        let gs = stored.block.gs;
        let stale: Vec<StorageId> = stored
            .expected
            .iter()
            .filter(|(_, (expected, _))| *expected != gs)
            .map(|(storage, _)| *storage)
            .collect();
        for storage in stale {
            self.remove_stored_location(id, storage);
        }
    }

    /// `OP_APPEND`: the file opens again, its COMPLETE last block goes back under
    /// construction with its storages expected at the present stamp.
    fn reopen(&mut self, file: FileId) -> Result<(), ReplayError> {
        let inode = self.file(file)?;
        let last = inode
            .blocks
            .last()
            .copied()
            .filter(|_| !inode.under_construction);
        let last = last.ok_or(ReplayError::CannotReopen(file))?;
        inode.under_construction = true;
        let Some(stored) = self.blocks.get_mut(&last) else {
            return Ok(());
        };
        if stored.state == BlockUcState::Complete {
            stored.state = BlockUcState::UnderConstruction;
            let gs: GenerationStamp = stored.block.gs;
            stored.expected = stored
                .locations
                .iter()
                .map(|s| (*s, (gs, ReplicaState::Rbw)))
                .collect();
            let locations = stored.locations.len();
            self.uncount_complete_block(locations);
        }
        Ok(())
    }

    fn remove_block(&mut self, id: BlockId) {
        if let Some(stored) = self.blocks.remove(&id) {
            if stored.state == BlockUcState::Complete {
                self.uncount_complete_block(stored.locations.len());
            }
        }
        self.corrupt.remove(&id);
        self.queue.remove(&id);
        self.batch_queue.retain(|r| r.block.id != id);
    }

    /// Re-judges the block's queued reports right after the edit that changed it (the
    /// per-block queue); the batch queue waits for the end of the batch.
    fn drain(&mut self, id: BlockId) {
        if self.queue_kind == Queue::PerBlock {
            if let Some(queued) = self.queue.remove(&id) {
                self.process_queued(queued);
            }
        }
    }

    /// After a batch of edits: the batch queue is judged again, whole, in arrival order.
    pub(super) fn end_of_batch(&mut self) {
        if self.queue_kind == Queue::AfterBatch {
            let queued = std::mem::take(&mut self.batch_queue);
            self.process_queued(queued);
        }
    }
}
