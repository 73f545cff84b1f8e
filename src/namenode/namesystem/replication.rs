//! The active's replication checks: corrupt replicas invalidated once enough live ones
//! exist, excess replicas deleted (`BlockManager.invalidateCorruptReplicas`,
//! `processOverReplicatedBlock`), and the deletion commands handed to datanodes.
//!
//! **The race (HDFS-2742).** A healthy replica the standby falsely flagged corrupt is
//! deleted here once it becomes active, and a lowered replication factor then deletes the
//! healthy ones as excess: the ten-step data-loss chain. **The fix** keeps false flags from
//! being raised (reports.rs); here every deletion also waits for safe mode to end and for
//! every holder to report after failover (its stale flag, HDFS-1972).

use std::collections::BTreeSet;

use super::state::State;
use super::view::HaState;
use crate::namenode::evaluation::BlockUcState;
use crate::namenode::{Block, BlockId, DatanodeId, StorageId};

impl State {
    /// Invalidates corrupt replicas once enough live ones exist, and deletes excess
    /// replicas; both wait while a holder is stale after failover (HDFS-1972).
    pub(super) fn check_replication(&mut self, id: BlockId) {
        // Safe mode holds back every deletion; leaving it rescans
        // (`processMisReplicatedBlocks`).
        if self.safe_mode.on {
            return;
        }
        for (storage, block) in self.replicas_to_delete(id) {
            self.schedule_deletion(id, storage, block);
        }
    }

    /// The block's corrupt replicas once the live ones reach the replication factor, and
    /// the live replicas past it once the block is COMPLETE (the last ones in storage
    /// order); nothing while a holder is stale.
    fn replicas_to_delete(&self, id: BlockId) -> Vec<(StorageId, Block)> {
        let mut doomed: Vec<(StorageId, Block)> = Vec::new();
        let Some(stored) = self.blocks.get(&id) else {
            return doomed;
        };
        let Some(expected) = self.files.get(&stored.file).map(|f| f.replication) else {
            return doomed;
        };
        if stored
            .locations
            .iter()
            .any(|s| self.stale.contains(&s.datanode))
        {
            return doomed;
        }
        let corrupt: BTreeSet<StorageId> = self
            .corrupt
            .get(&id)
            .map(|m| m.keys().copied().collect())
            .unwrap_or_default();
        let live: Vec<StorageId> = stored
            .locations
            .iter()
            .filter(|s| !corrupt.contains(s))
            .copied()
            .collect();
        if live.len() >= expected {
            for storage in &corrupt {
                let gs = self.corrupt[&id][storage].0;
                doomed.push((*storage, Block { gs, ..stored.block }));
            }
        }
        if live.len() > expected && stored.state == BlockUcState::Complete {
            for storage in live.iter().skip(expected) {
                doomed.push((*storage, stored.block));
            }
        }
        doomed
    }

    /// `invalidateBlocks.add`: the replica goes to the storage's deletion set and stops
    /// being a location.
    fn schedule_deletion(&mut self, id: BlockId, storage: StorageId, block: Block) {
        self.metrics.deletions_scheduled += 1;
        self.pending_deletion
            .entry(storage)
            .or_default()
            .insert(id, block);
        self.remove_stored_location(id, storage);
    }

    /// The replication check of every block (after a full report to the active, and when
    /// the active leaves safe mode).
    pub(super) fn process_over_replicated_blocks(&mut self) {
        let ids: Vec<BlockId> = self.blocks.keys().copied().collect();
        for id in ids {
            self.check_replication(id);
        }
    }

    /// The deletion commands for a datanode's storages, taken out of the deletion set; the
    /// standby hands out none (datanodes ignore its commands).
    pub(super) fn take_deletion_commands(
        &mut self,
        datanode: DatanodeId,
    ) -> Vec<(StorageId, Block)> {
        if self.ha != HaState::Active {
            return Vec::new();
        }
        let storages: Vec<StorageId> = self
            .pending_deletion
            .keys()
            .filter(|s| s.datanode == datanode)
            .copied()
            .collect();
        storages
            .into_iter()
            .flat_map(|s| {
                self.pending_deletion
                    .remove(&s)
                    .into_iter()
                    .flat_map(move |blocks| blocks.into_values().map(move |b| (s, b)))
            })
            .collect()
    }
}
