//! Reconciliation of a replica with its peers (`KeyValueHandler.reconcileContainer`).
//!
//! **The race (HDDS-16811).** Reconciliation pulls a block's chunks from a peer and
//! commits its metadata with no container lock, then finishes the writes: a deletion of
//! the block before or during its repair leaves it restored, or its metadata without file.
//! **The fix (part 2)** finishes the chunk writes (closing the cached handle) before the
//! commit, then commits under the container read lock only if the tree does not mark the
//! block deleted; otherwise the pulled chunks are removed and the block fails.
//!
//! [`SeedPatch`](super::config::ContainerBehavior::SeedPatch) is the patched
//! `reconcileChunksPerBlock`: whatever chunks the block holds are committed, also when the
//! pull stopped early, and the chunks of a refused commit are removed under the commit's
//! read lock. Beyond the seed, each behind its
//! [`ContainerConfig`](super::config::ContainerConfig) switch and all on in
//! [`Hardened`](super::config::ContainerBehavior::Hardened): a pull that stopped early
//! fails the block whole (`fail_incomplete_blocks`); the commit also requires the block
//! file to hold the pulled data (`commit_requires_block_file`); the removal of what a
//! failed repair pulled runs under the write lock (`cleanup_under_write_lock`); and a
//! block that a peer's tree marks deleted while it is live here is deleted here too
//! (HDDS-11765, `apply_peer_deletions`), under the container write lock, recording the
//! deletion in the tree before deleting.
//!
//! Callers run at most one reconciliation per container (the handler refuses a second,
//! as Ozone's replication supervisor does). Should two run all the same, the hardened
//! removal of what a failed repair pulled never cuts below what is committed, so neither
//! undoes the other.
//!
//! Not modelled: the update of the container's BCSID from the repaired blocks that
//! `reconcileContainer` does last, and the incremental container report it sends then.

use std::collections::BTreeMap;
use std::fmt;

use super::error::{ContainerError, PeerError};
use super::merkle::{ChunkMerkle, ContainerMerkleTree};
use super::replica::KeyValueContainer;
use super::store::{BlockData, ChunkInfo};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, DatanodeId, LocalId};
use crate::sync::Arc;

mod commit;
mod steps;

pub use steps::Reconciliation;

/// A peer datanode as reconciliation sees it (the datanode-to-datanode client calls).
pub trait PeerDatanode: Send + Sync + fmt::Debug {
    /// The peer.
    fn id(&self) -> DatanodeId;
    /// The state of the peer's replica of `container` (the container descriptor a
    /// replication source sends with the data).
    fn container_state(&self, container: ContainerId) -> Result<ContainerState, PeerError>;
    /// The peer's tree file of `container` (`getContainerChecksumInfo`); `None` if the
    /// peer has no answer for it (the peer is skipped).
    fn checksum_info(&self, container: ContainerId) -> Result<Option<Vec<u8>>, PeerError>;
    /// The peer's metadata of `block` (opening a block stream).
    fn block(&self, container: ContainerId, block: LocalId) -> Result<BlockData, PeerError>;
    /// The bytes of `chunk` of `block` (at most its length).
    fn read_chunk(
        &self,
        container: ContainerId,
        block: LocalId,
        chunk: &ChunkInfo,
    ) -> Result<Vec<u8>, PeerError>;
}

/// How a datanode reaches its peers by id (`DNContainerOperationClient`): reconcile and
/// replicate commands name datanodes, not connections.
pub trait PeerDirectory: Send + Sync + fmt::Debug {
    /// The peer `datanode`, if this datanode can reach it.
    fn peer(&self, datanode: DatanodeId) -> Option<Arc<dyn PeerDatanode>>;
}

/// How the repair of one block ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockRepair {
    /// Metadata committed with every chunk asked for.
    Repaired {
        /// Chunks pulled.
        chunks: usize,
    },
    /// Metadata committed, but not every chunk could be pulled (the legacy code and the
    /// seed's patch; the hardened code fails such a block).
    Partial {
        /// Chunks pulled.
        chunks: usize,
    },
    /// Nothing to do: no chunk pulled and none local.
    Skipped,
    /// The block failed; what was committed is said by the error.
    Failed(ContainerError),
}

/// What reconciliation with one peer did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerRound {
    /// The peer.
    pub peer: DatanodeId,
    /// Per block, how its repair ended.
    pub blocks: BTreeMap<LocalId, BlockRepair>,
    /// Blocks adopted as deleted from the peer.
    pub adopted_deleted: Vec<LocalId>,
    /// Blocks that were live here and deleted because the peer had deleted them.
    pub applied_peer_deletions: Vec<LocalId>,
}

/// What a reconciliation did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReconcileReport {
    /// Completed rounds, in peer order.
    pub rounds: Vec<PeerRound>,
    /// Peers whose round failed, with the error (the next peer was tried).
    pub peer_failures: Vec<(DatanodeId, ContainerError)>,
}

impl ReconcileReport {
    /// Blocks whose metadata was committed.
    pub fn committed(&self) -> Vec<LocalId> {
        self.rounds
            .iter()
            .flat_map(|r| r.blocks.iter())
            .filter(|(_, outcome)| {
                matches!(
                    outcome,
                    BlockRepair::Repaired { .. } | BlockRepair::Partial { .. }
                )
            })
            .map(|(id, _)| *id)
            .collect()
    }
}

/// `reconcileContainerInternal`: reconciles `container` with each of `peers` in turn, all
/// at once on the caller's thread ([`Reconciliation`] runs the same steps one at a time).
/// Takes no container lock except the patched commit's read lock (and the write lock to
/// remove what a failed repair pulled, or to apply a peer's deletion). Not deduplicated
/// here: the [handler](super::handler::KeyValueHandler) runs at most one per container.
pub fn reconcile_container(
    container: &Arc<KeyValueContainer>,
    peers: &[Arc<dyn PeerDatanode>],
) -> Result<ReconcileReport, ContainerError> {
    let mut reconciliation = Reconciliation::start(Arc::clone(container), peers.to_vec())?;
    // Bounded: each step compares with a peer, repairs one of its blocks or ends its round.
    loop {
        if let Some(report) = reconciliation.step() {
            return Ok(report);
        }
    }
}

/// `reconcileChunksPerBlock`: pulls `wanted` chunks of `block` from `peer`, writes them,
/// and commits the block's metadata as the replica's behavior says.
pub fn reconcile_chunks_per_block(
    container: &KeyValueContainer,
    peer: &dyn PeerDatanode,
    block: LocalId,
    wanted: &[ChunkMerkle],
    writer: &mut ContainerMerkleTree,
) -> BlockRepair {
    let mut pull = match BlockPull::start(container, peer, block) {
        Ok(pull) => pull,
        Err(error) => return BlockRepair::Failed(error),
    };
    let incomplete = pull.pull_wanted(wanted);
    pull.finish(incomplete, writer)
}

/// The repair of one block in progress: what the replica and the peer hold of it, and
/// what was pulled so far.
struct BlockPull<'a> {
    container: &'a KeyValueContainer,
    peer: &'a dyn PeerDatanode,
    block: LocalId,
    /// The peer's chunks of the block, by offset.
    peer_chunks: BTreeMap<u64, ChunkInfo>,
    /// The block's chunks by offset: the local ones, then each one pulled.
    chunks: BTreeMap<u64, ChunkInfo>,
    /// The chunks pulled, in offset order.
    pulled: Vec<ChunkInfo>,
    /// Whether a chunk write was attempted: a write that failed may still have created
    /// the file, which a failed repair must then remove.
    attempted_write: bool,
}

impl<'a> BlockPull<'a> {
    /// Reads the block's local metadata, then the peer's.
    fn start(
        container: &'a KeyValueContainer,
        peer: &'a dyn PeerDatanode,
        block: LocalId,
    ) -> Result<Self, ContainerError> {
        let id = container.id();
        let local_meta = container
            .store()
            .get_block(block)
            .map_err(ContainerError::store(id))?;
        let chunks = local_meta
            .as_ref()
            .map(BlockData::chunks_by_offset)
            .unwrap_or_default();
        let peer_chunks = peer.block(id, block)?.chunks_by_offset();
        Ok(Self {
            container,
            peer,
            block,
            peer_chunks,
            chunks,
            pulled: Vec::new(),
            attempted_write: false,
        })
    }

    /// Pulls the `wanted` chunks in offset order; the first that cannot be pulled stops
    /// the block and is returned (`None`: every healthy wanted chunk was pulled).
    fn pull_wanted(&mut self, wanted: &[ChunkMerkle]) -> Option<ContainerError> {
        let mut wanted: Vec<&ChunkMerkle> = wanted.iter().collect();
        wanted.sort_by_key(|c| c.offset);
        wanted
            .into_iter()
            .find_map(|chunk| self.pull_chunk(chunk).err())
    }

    /// Pulls one chunk: it must follow the block's chunks without a hole; a chunk the peer
    /// marks unhealthy is skipped; the peer's copy must have the local chunk's length and
    /// be read whole before it is written.
    fn pull_chunk(&mut self, chunk: &ChunkMerkle) -> Result<(), ContainerError> {
        let offset = chunk.offset;
        self.check_contiguous(offset)?;
        if !chunk.checksum_matches {
            return Ok(());
        }
        let info = self.peer_chunk(offset)?;
        let data = self.read_from_peer(&info)?;
        self.attempted_write = true;
        self.container
            .write_chunk_for_closed_container(self.block, offset, &data)?;
        tracing::debug!(
            node = %self.container.datanode(),
            container = %self.container.id(),
            block = self.block,
            offset,
            peer = %self.peer.id(),
            "chunk pulled"
        );
        self.chunks.insert(offset, info.clone());
        self.pulled.push(info);
        Ok(())
    }

    /// A chunk past offset 0 must start where the chunk below it ends.
    fn check_contiguous(&self, offset: u64) -> Result<(), ContainerError> {
        if offset == 0 {
            return Ok(());
        }
        let contiguous = self
            .chunks
            .range(..offset)
            .next_back()
            .is_some_and(|(_, below)| below.end() == offset);
        if contiguous {
            Ok(())
        } else {
            Err(self.incomplete(format!("hole before offset {offset}")))
        }
    }

    /// The peer's chunk at `offset`, whose length must match the local chunk's there.
    fn peer_chunk(&self, offset: u64) -> Result<ChunkInfo, ContainerError> {
        let Some(info) = self.peer_chunks.get(&offset).cloned() else {
            return Err(self.incomplete(format!("peer has no chunk at {offset}")));
        };
        match self.chunks.get(&offset) {
            Some(existing) if existing.length != info.length => {
                Err(ContainerError::ChunkLengthMismatch {
                    container: self.container.id(),
                    block: self.block,
                    offset,
                    local: existing.length,
                    peer: info.length,
                })
            }
            _ => Ok(info),
        }
    }

    /// The bytes of `info` from the peer, refused if short.
    fn read_from_peer(&self, info: &ChunkInfo) -> Result<Vec<u8>, ContainerError> {
        let id = self.container.id();
        let data = self.peer.read_chunk(id, self.block, info)?;
        if data.len() as u64 == info.length {
            return Ok(data);
        }
        Err(ContainerError::ShortRead {
            container: id,
            block: self.block,
            offset: info.offset,
            expected: info.length,
            got: data.len() as u64,
        })
    }

    fn incomplete(&self, reason: String) -> ContainerError {
        incomplete_repair(self.container.id(), self.block, reason)
    }

    /// The block's metadata with every chunk it now has.
    fn into_block_data(self) -> (BlockData, Vec<ChunkInfo>) {
        (
            BlockData::new(self.block, self.chunks.into_values()),
            self.pulled,
        )
    }
}

/// Datanode ids as events show them: `[dn2, dn3]`.
fn ids_text(ids: impl Iterator<Item = DatanodeId>) -> String {
    let ids: Vec<String> = ids.map(|id| id.to_string()).collect();
    format!("[{}]", ids.join(", "))
}

fn incomplete_repair(container: ContainerId, block: LocalId, reason: String) -> ContainerError {
    ContainerError::IncompleteRepair {
        container,
        block,
        reason,
    }
}
