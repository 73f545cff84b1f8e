//! Blocks being written: their expected replicas (`BlockUnderConstructionFeature`), the
//! append's reopen (`BlockManager.convertLastBlockToUnderConstruction`), the active's
//! pipeline update (`FSNamesystem.updatePipelineInternal`) and the removal of stale
//! replicas (`BlockManager.removeStaleReplicas`).
//!
//! **The race (HDFS-2742's end, by another road).** A datanode left out of an append's or a
//! recovery's new pipeline keeps the block at the old generation stamp; kept as a location,
//! it completes the block, and a lowered replication factor can delete every current replica.
//! **The fix:** the reopen makes the block's storages its expected replicas at the old stamp,
//! and a stamp change on the active and every commit (forced on replay) drop the locations of
//! the expected replicas whose stamp is not the block's, so only current replicas count.

use super::state::State;
use crate::namenode::evaluation::BlockUcState;
use crate::namenode::{BlockId, GenerationStamp, ReplicaState, StorageId};

impl State {
    /// `convertLastBlockToUnderConstruction` (`BlockInfo.convertUnderConstruction` with the
    /// block's storages): a COMPLETE block goes back under construction, every storage it is
    /// stored on (flagged ones too, `getStorages`) an expected replica at the block's
    /// present stamp. Returns how many locations it had, for the safe-mode counts; `None`
    /// if it was not COMPLETE.
    pub(super) fn convert_to_under_construction(&mut self, id: BlockId) -> Option<usize> {
        let stored = self.blocks.get_mut(&id)?;
        if stored.state != BlockUcState::Complete {
            return None;
        }
        stored.state = BlockUcState::UnderConstruction;
        let gs = stored.block.gs;
        stored.expected = stored
            .locations
            .iter()
            .map(|storage| (*storage, (gs, ReplicaState::Rbw)))
            .collect();
        let locations = stored.locations.len();
        crate::events::debug!(
            node = self.node(),
            block = id.0,
            gs,
            expected = locations,
            "block reopened"
        );
        Some(locations)
    }

    /// `updatePipelineInternal` on the active, once the block has its new stamp and length:
    /// the expected replicas of another stamp lose their location
    /// (`setGenerationStampAndVerifyReplicas`, `removeStaleReplicas`), then the new
    /// pipeline's storages become the expected replicas at the new stamp
    /// (`setExpectedLocations`).
    pub(super) fn update_pipeline(&mut self, id: BlockId, pipeline: &[StorageId]) {
        self.remove_stale_replicas(id);
        let Some(stored) = self.blocks.get_mut(&id) else {
            return;
        };
        let gs = stored.block.gs;
        stored.expected = pipeline
            .iter()
            .map(|storage| (*storage, (gs, ReplicaState::Rbw)))
            .collect();
    }

    /// `getStaleReplicas` and `removeStaleReplicas`: every expected replica whose stamp is
    /// not the block's loses its stored location (the expected list itself is kept).
    pub(super) fn remove_stale_replicas(&mut self, id: BlockId) {
        let Some(stored) = self.blocks.get(&id) else {
            return;
        };
        let gs = stored.block.gs;
        let stale: Vec<(StorageId, GenerationStamp)> = stored
            .expected
            .iter()
            .filter(|(_, (expected_gs, _))| *expected_gs != gs)
            .map(|(storage, (expected_gs, _))| (*storage, *expected_gs))
            .collect();
        for (storage, stale_gs) in stale {
            let was_location = self
                .blocks
                .get(&id)
                .is_some_and(|b| b.locations.contains(&storage));
            if was_location {
                crate::events::debug!(
                    node = self.node(),
                    datanode = %storage.datanode,
                    block = id.0,
                    gs = stale_gs,
                    block_gs = gs,
                    why = "stale genstamp",
                    "location removed"
                );
            }
            self.remove_stored_location(id, storage);
        }
    }

    /// `BlockUnderConstructionFeature.addReplicaIfNotPresent`: a replica reported while the
    /// block is written. An expected replica of the storage takes the reported stamp (its
    /// state stays, HDFS-5438); another storage joins with the reported stamp and state.
    pub(super) fn record_expected_replica(
        &mut self,
        id: BlockId,
        storage: StorageId,
        gs: GenerationStamp,
        state: ReplicaState,
    ) {
        let Some(stored) = self.blocks.get_mut(&id) else {
            return;
        };
        stored
            .expected
            .entry(storage)
            .and_modify(|(expected_gs, _)| *expected_gs = gs)
            .or_insert((gs, state));
    }
}
