//! The repair of one block (`reconcileChunksPerBlock`): what the replica and the peer hold
//! of it, the chunks pulled in offset order, then the end the replica's behavior orders
//! (`commit`).

use std::collections::BTreeMap;

use super::super::error::ContainerError;
use super::super::merkle::{ChunkMerkle, ContainerMerkleTree};
use super::super::replica::KeyValueContainer;
use super::super::store::{BlockData, ChunkInfo};
use super::peer::{BlockRepair, PeerDatanode};
use crate::hdds::ids::{ContainerId, LocalId};

/// The target of the pull's protocol events: the module of its public path, so the event
/// log calls it `datanode::container::reconcile` whichever file emits them.
const EVENTS: &str = "hadoop_ref::datanode::container::reconcile";

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
pub(super) struct BlockPull<'a> {
    pub(super) container: &'a KeyValueContainer,
    pub(super) peer: &'a dyn PeerDatanode,
    pub(super) block: LocalId,
    /// The peer's chunks of the block, by offset.
    pub(super) peer_chunks: BTreeMap<u64, ChunkInfo>,
    /// The block's chunks by offset: the local ones, then each one pulled.
    pub(super) chunks: BTreeMap<u64, ChunkInfo>,
    /// The chunks pulled, in offset order.
    pub(super) pulled: Vec<ChunkInfo>,
    /// Whether a chunk write was attempted: a write that failed may still have created
    /// the file, which a failed repair must then remove.
    pub(super) attempted_write: bool,
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
        crate::events::debug!(
            target: EVENTS,
            node = %self.container.datanode(),
            container = self.container.id().0,
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
    pub(super) fn into_block_data(self) -> (BlockData, Vec<ChunkInfo>) {
        (
            BlockData::new(self.block, self.chunks.into_values()),
            self.pulled,
        )
    }
}

fn incomplete_repair(container: ContainerId, block: LocalId, reason: String) -> ContainerError {
    ContainerError::IncompleteRepair {
        container,
        block,
        reason,
    }
}
