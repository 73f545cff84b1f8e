//! The active's replication checks: corrupt replicas invalidated once enough live ones
//! exist, excess replicas deleted (`BlockManager.markBlockAsCorrupt`,
//! `invalidateCorruptReplicas`, `processExtraRedundancyBlock`), and the deletion commands
//! handed to datanodes.
//!
//! **The race (HDFS-2742).** A healthy replica the standby falsely flagged corrupt is
//! deleted here once it becomes active, and a lowered replication factor then deletes the
//! healthy ones as excess: the ten-step data-loss chain. **The fix** keeps false flags from
//! being raised (reports.rs); here every deletion also waits for every holder to report
//! after failover (its stale flag, HDFS-1972), and no command leaves in safe mode.

use std::collections::BTreeSet;

use super::state::State;
use super::view::HaState;
use crate::namenode::evaluation::BlockUcState;
use crate::namenode::{Block, BlockId, DatanodeId, StorageId};

impl State {
    /// `markBlockAsCorrupt`'s invalidation: the flagged replica on `storage` is deleted at
    /// once (location removed, command queued) when the live replicas reach the
    /// replication factor and no holder is stale (`invalidateBlock`, HDFS-1972). Safe mode
    /// does not hold this back, only the command (`invalidateWorkForOneNode`). Trunk's
    /// extra clauses (HDFS-16064: more live plus corrupt than expected, corrupted during
    /// write) are not modelled.
    pub(super) fn invalidate_if_enough_live(&mut self, id: BlockId, storage: StorageId) {
        if self.any_holder_stale(id) {
            return;
        }
        let expected = self.expected_replication(id);
        let reported_gs = self
            .corrupt
            .get(&id)
            .and_then(|flagged| flagged.get(&storage))
            .map(|(gs, _)| *gs);
        let stored = self.blocks.get(&id).map(|stored| stored.block);
        if let (Some(expected), Some(gs), Some(stored)) = (expected, reported_gs, stored) {
            if self.live_replicas(id) >= expected {
                let block = Block { gs, ..stored };
                self.schedule_deletion(id, storage, block, "corrupt");
            }
        }
    }

    /// The replication check of a COMPLETE block (`addStoredBlock`, `setReplication`,
    /// `processMisReplicatedBlocks`), skipped in safe mode (`isPopulatingReplQueues`):
    /// corrupt replicas go once the live ones reach the factor
    /// (`invalidateCorruptReplicas`), and live ones past it as excess; nothing while a
    /// holder is stale (the block is postponed).
    pub(super) fn check_replication(&mut self, id: BlockId) {
        if self.safe_mode.on {
            return;
        }
        for (storage, block, why) in self.replicas_to_delete(id) {
            self.schedule_deletion(id, storage, block, why);
        }
    }

    fn any_holder_stale(&self, id: BlockId) -> bool {
        self.blocks.get(&id).is_some_and(|stored| {
            stored
                .locations
                .iter()
                .any(|s| self.stale.contains(&s.datanode))
        })
    }

    fn expected_replication(&self, id: BlockId) -> Option<usize> {
        let stored = self.blocks.get(&id)?;
        self.files.get(&stored.file).map(|f| f.replication)
    }

    /// The block's corrupt replicas once the live ones reach the replication factor, and
    /// the live replicas past it once the block is COMPLETE (chosen by
    /// [`excess_order`]), each with why; nothing while a holder is stale.
    fn replicas_to_delete(&self, id: BlockId) -> Vec<(StorageId, Block, &'static str)> {
        let mut doomed: Vec<(StorageId, Block, &'static str)> = Vec::new();
        let (Some(stored), Some(expected)) = (self.blocks.get(&id), self.expected_replication(id))
        else {
            return doomed;
        };
        if self.any_holder_stale(id) {
            return doomed;
        }
        let corrupt: BTreeSet<StorageId> = self
            .corrupt
            .get(&id)
            .map(|m| m.keys().copied().collect())
            .unwrap_or_default();
        let mut live: Vec<StorageId> = stored
            .locations
            .iter()
            .filter(|s| !corrupt.contains(s))
            .copied()
            .collect();
        if live.len() >= expected {
            for storage in &corrupt {
                let gs = self.corrupt[&id][storage].0;
                doomed.push((*storage, Block { gs, ..stored.block }, "corrupt"));
            }
        }
        if live.len() > expected && stored.state == BlockUcState::Complete {
            let seed = self.config.excess_choice_seed;
            live.sort_by_key(|s| excess_order(seed, id, *s));
            let excess = live.len() - expected;
            doomed.extend(
                live.iter()
                    .take(excess)
                    .map(|s| (*s, stored.block, "excess")),
            );
        }
        doomed
    }

    /// `invalidateBlocks.add`: the replica goes to the storage's deletion set and stops
    /// being a location; `why` it goes (`corrupt`, `excess`) is for a failure's story.
    fn schedule_deletion(
        &mut self,
        id: BlockId,
        storage: StorageId,
        block: Block,
        why: &'static str,
    ) {
        crate::events::debug!(
            node = self.node(),
            datanode = %storage.datanode,
            block = id.0,
            gs = block.gs,
            why,
            "replica invalidated"
        );
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
    /// standby hands out none (datanodes ignore its commands), nor does the active in safe
    /// mode (`invalidateWorkForOneNode`).
    pub(super) fn take_deletion_commands(
        &mut self,
        datanode: DatanodeId,
    ) -> Vec<(StorageId, Block)> {
        if self.ha != HaState::Active || self.safe_mode.on {
            return Vec::new();
        }
        let storages: Vec<StorageId> = self
            .pending_deletion
            .keys()
            .filter(|s| s.datanode == datanode)
            .copied()
            .collect();
        let commands: Vec<(StorageId, Block)> = storages
            .into_iter()
            .flat_map(|s| {
                self.pending_deletion
                    .remove(&s)
                    .into_iter()
                    .flat_map(move |blocks| blocks.into_values().map(move |b| (s, b)))
            })
            .collect();
        if !commands.is_empty() {
            crate::events::debug!(
                node = self.node(),
                datanode = %datanode,
                blocks = %BlockList(&commands),
                "deletion commands sent"
            );
        }
        commands
    }
}

/// The rank of `storage` as an excess replica of block `id`: the lowest ranks are deleted
/// first. A seeded hash (splitmix64), standing in for `chooseReplicaToDelete`'s rack and
/// free-space rule, which the model has no input for; like `TestDNFencing`'s
/// `RandomDeleterPolicy`, it lets two NameNodes make different choices.
pub fn excess_order(seed: u64, id: BlockId, storage: StorageId) -> u64 {
    let mut x = seed
        ^ (id.0 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ storage.datanode.0.rotate_left(32)
        ^ u64::from(storage.index);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Blocks of deletion commands, shown `blk_100_5,blk_101_6` in an event.
struct BlockList<'a>(&'a [(StorageId, Block)]);

impl std::fmt::Display for BlockList<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (_, block)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{block}")?;
        }
        Ok(())
    }
}
