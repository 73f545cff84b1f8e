//! The checksum tree itself (`ContainerMerkleTreeWriter` and the `ContainerMerkleTree`
//! message): chunk, block and root checksums, entries and the deletion records.
//!
//! **The race (HDDS-16811).** The tree is the only record of executed deletions: a
//! deleted entry is the one thing that stops reconciliation from copying a block back
//! from a peer, and a block deleted without metadata used to leave no entry at all.
//! **The fix** adds [`ContainerMerkleTree::mark_deleted_keeping_checksum`]: an existing
//! entry is marked deleted with its checksum, a new entry gets the checksum of a block
//! without chunks, so the root moves and the deletion is witnessed.
//!
//! Checksums follow Ozone bit for bit: CRC32C, zero-extended to 64 bits, over big-endian
//! longs; the `deleted` flag, chunk offsets, lengths and health are not hashed.

use std::collections::BTreeMap;

use crate::datanode::container::store::{BlockData, ChunkInfo};
use crate::hdds::ids::{ContainerId, LocalId};

/// CRC32C of `bytes`, zero-extended as Ozone stores it.
fn crc(bytes: &[u8]) -> u64 {
    u64::from(crc32c::crc32c(bytes))
}

/// The checksum of a chunk: CRC32C over the big-endian bytes of each stored checksum in
/// list order; 0 for a chunk without checksums.
pub fn chunk_checksum(checksums: &[u32]) -> u64 {
    if checksums.is_empty() {
        return 0;
    }
    let bytes: Vec<u8> = checksums.iter().flat_map(|c| c.to_be_bytes()).collect();
    crc(&bytes)
}

/// The checksum of a live block: CRC32C over `BE(id) ‖ BE(chunk checksum)…` in offset
/// order. A block without chunks hashes its id alone, which is also the checksum a fixed
/// deleting pass gives a block it never had.
pub fn block_checksum<'a>(id: LocalId, chunk_checksums: impl IntoIterator<Item = &'a u64>) -> u64 {
    let mut bytes = id.to_be_bytes().to_vec();
    for c in chunk_checksums {
        bytes.extend_from_slice(&c.to_be_bytes());
    }
    crc(&bytes)
}

/// One chunk of a block entry (`ChunkMerkleTree`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChunkMerkle {
    /// Offset of the chunk in the block file.
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
    /// [`chunk_checksum`] of its stored or observed checksums.
    pub data_checksum: u64,
    /// False when a scan saw it differ from its stored checksums.
    pub checksum_matches: bool,
}

impl ChunkMerkle {
    /// The entry of `chunk` with the given health.
    pub fn of(chunk: &ChunkInfo, healthy: bool) -> Self {
        Self {
            offset: chunk.offset,
            length: chunk.length,
            data_checksum: chunk_checksum(&chunk.checksums),
            checksum_matches: healthy,
        }
    }
}

/// One block entry (`BlockMerkleTree`). A deleted entry has no chunks and a fixed checksum.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BlockMerkle {
    /// The block's local id.
    pub local_id: LocalId,
    /// Its checksum: computed from the chunks when live, fixed when deleted.
    pub data_checksum: u64,
    /// Chunks by offset (empty when deleted).
    pub chunks: BTreeMap<u64, ChunkMerkle>,
    /// Whether a deletion of the block was witnessed.
    pub deleted: bool,
}

impl BlockMerkle {
    pub(super) fn live(local_id: LocalId) -> Self {
        Self {
            local_id,
            data_checksum: block_checksum(local_id, []),
            chunks: BTreeMap::new(),
            deleted: false,
        }
    }

    pub(super) fn deleted(local_id: LocalId, data_checksum: u64) -> Self {
        Self {
            local_id,
            data_checksum,
            chunks: BTreeMap::new(),
            deleted: true,
        }
    }

    pub(super) fn recompute(&mut self) {
        self.data_checksum = block_checksum(
            self.local_id,
            self.chunks.values().map(|c| &c.data_checksum),
        );
    }
}

/// A container's checksum tree: its block entries and, once a scan or a metadata build
/// produced one, its root checksum (absence is meaningful: a tree written only by the
/// deleting service lists deleted blocks, not every block).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ContainerMerkleTree {
    pub(super) blocks: BTreeMap<LocalId, BlockMerkle>,
    pub(super) data_checksum: Option<u64>,
}

impl ContainerMerkleTree {
    /// An empty tree without a root.
    pub fn new() -> Self {
        Self::default()
    }

    /// A tree with one live entry per block of `blocks` (all chunks healthy) and its root:
    /// the build from block metadata (`updateAndGetContainerChecksumFromMetadata`).
    pub fn from_metadata<'a>(blocks: impl IntoIterator<Item = &'a BlockData>) -> Self {
        let mut tree = Self::new();
        for block in blocks {
            tree.add_block(block.local_id);
            tree.add_chunks(block.local_id, true, &block.chunks);
        }
        tree.compute_root();
        tree
    }

    /// The root checksum, if one was computed.
    pub fn data_checksum(&self) -> Option<u64> {
        self.data_checksum
    }

    /// The entries, by local id.
    pub fn blocks(&self) -> &BTreeMap<LocalId, BlockMerkle> {
        &self.blocks
    }

    /// The entry of `id`.
    pub fn block(&self, id: LocalId) -> Option<&BlockMerkle> {
        self.blocks.get(&id)
    }

    /// Whether the tree marks `id` deleted.
    pub fn is_deleted(&self, id: LocalId) -> bool {
        self.blocks.get(&id).is_some_and(|b| b.deleted)
    }

    /// Computes and sets the root: CRC32C over the big-endian checksum of every entry, live
    /// and deleted, in id order; 0 for an empty tree.
    pub fn compute_root(&mut self) -> u64 {
        let root = if self.blocks.is_empty() {
            0
        } else {
            let bytes: Vec<u8> = self
                .blocks
                .values()
                .flat_map(|b| b.data_checksum.to_be_bytes())
                .collect();
            crc(&bytes)
        };
        self.data_checksum = Some(root);
        root
    }

    /// Forgets the root (a tree that lists only some blocks).
    pub fn clear_root(&mut self) {
        self.data_checksum = None;
    }

    /// Creates an empty live entry for `id` if it has none (`addBlock`).
    pub fn add_block(&mut self, id: LocalId) {
        self.blocks
            .entry(id)
            .or_insert_with(|| BlockMerkle::live(id));
    }

    /// Adds or replaces (by offset) chunks of `id`, creating the entry if needed
    /// (`addChunks`). A deleted entry is left as it is: a witnessed delete wins.
    pub fn add_chunks(&mut self, id: LocalId, healthy: bool, chunks: &[ChunkInfo]) {
        self.add_chunk_entries(id, chunks.iter().map(|c| ChunkMerkle::of(c, healthy)));
    }

    /// Adds or replaces (by offset) already built chunk entries of `id` (a scan's
    /// observations). A deleted entry is left as it is.
    pub fn add_chunk_entries(
        &mut self,
        id: LocalId,
        chunks: impl IntoIterator<Item = ChunkMerkle>,
    ) {
        let entry = self
            .blocks
            .entry(id)
            .or_insert_with(|| BlockMerkle::live(id));
        if entry.deleted {
            return;
        }
        for chunk in chunks {
            entry.chunks.insert(chunk.offset, chunk);
        }
        entry.recompute();
    }

    /// Replaces any entry of `id` with a deleted one of checksum `checksum`
    /// (`setDeletedBlock`).
    pub fn set_deleted_block(&mut self, id: LocalId, checksum: u64) {
        self.blocks.insert(id, BlockMerkle::deleted(id, checksum));
    }

    /// Removes the entry of `id` whatever it is; true if there was one.
    pub fn remove_block(&mut self, id: LocalId) -> bool {
        self.blocks.remove(&id).is_some()
    }

    /// Marks deleted the blocks whose metadata the deleting service removed
    /// (`addDeletedBlocks`): each gets a fresh entry built from its metadata chunks, so the
    /// same checksum it had live. The root is computed only if `compute_root`.
    pub fn add_deleted_blocks<'a>(
        &mut self,
        blocks: impl IntoIterator<Item = &'a BlockData>,
        compute_root: bool,
    ) {
        for block in blocks {
            let checksum = block_checksum(
                block.local_id,
                block
                    .chunks_by_offset()
                    .values()
                    .map(|c| chunk_checksum(&c.checksums))
                    .collect::<Vec<_>>()
                    .iter(),
            );
            self.blocks.insert(
                block.local_id,
                BlockMerkle::deleted(block.local_id, checksum),
            );
        }
        if compute_root {
            self.compute_root();
        }
    }

    /// HDDS-16811 part 1: marks deleted the blocks the deleting service found without
    /// metadata. An existing entry, live or deleted, keeps its checksum; a new entry gets
    /// the checksum of a block without chunks. The root is computed only if
    /// `compute_root`.
    pub fn mark_deleted_keeping_checksum(
        &mut self,
        ids: impl IntoIterator<Item = LocalId>,
        compute_root: bool,
    ) {
        for id in ids {
            let checksum = self
                .blocks
                .get(&id)
                .map_or_else(|| block_checksum(id, []), |b| b.data_checksum);
            self.blocks.insert(id, BlockMerkle::deleted(id, checksum));
        }
        if compute_root {
            self.compute_root();
        }
    }

    /// Merges the tree on disk into this one (`update`, used by every tree write): an
    /// entry deleted on disk replaces a live one here; an entry only on disk is kept only
    /// if deleted (a live one is dropped: this tree is the newer view of live blocks). The
    /// root is always computed. Rule: a delete, once witnessed, wins.
    pub fn merge_existing(&mut self, existing: &ContainerMerkleTree) {
        for (id, theirs) in &existing.blocks {
            match self.blocks.get(id) {
                Some(ours) if !ours.deleted && theirs.deleted => {
                    self.blocks.insert(*id, theirs.clone());
                }
                Some(_) => {}
                None if theirs.deleted => {
                    self.blocks.insert(*id, theirs.clone());
                }
                None => {}
            }
        }
        self.compute_root();
    }
}

/// A container's checksum tree with its id (`ContainerChecksumInfo`), the content of the
/// tree file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ContainerChecksumInfo {
    /// The container.
    pub container: ContainerId,
    /// Its tree.
    pub tree: ContainerMerkleTree,
}

impl ContainerChecksumInfo {
    /// An empty tree of `container`.
    pub fn empty(container: ContainerId) -> Self {
        Self {
            container,
            tree: ContainerMerkleTree::new(),
        }
    }

    /// Whether the tree has a root (`hasDataChecksum`).
    pub fn has_data_checksum(&self) -> bool {
        self.tree.data_checksum.is_some()
    }
}
