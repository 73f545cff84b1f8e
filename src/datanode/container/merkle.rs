//! The container checksum tree (`ContainerMerkleTreeWriter` and the `ContainerMerkleTree`
//! message, spec C.2), its diff (C.4) and the encoding of the tree file.
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

use super::store::{BlockData, ChunkInfo};
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
#[derive(Debug, Clone, PartialEq, Eq)]
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
    fn live(local_id: LocalId) -> Self {
        Self {
            local_id,
            data_checksum: block_checksum(local_id, []),
            chunks: BTreeMap::new(),
            deleted: false,
        }
    }

    fn deleted(local_id: LocalId, data_checksum: u64) -> Self {
        Self {
            local_id,
            data_checksum,
            chunks: BTreeMap::new(),
            deleted: true,
        }
    }

    fn recompute(&mut self) {
        self.data_checksum = block_checksum(
            self.local_id,
            self.chunks.values().map(|c| &c.data_checksum),
        );
    }
}

/// A container's checksum tree: its block entries and, once a scan or a metadata build
/// produced one, its root checksum (absence is meaningful: a tree written only by the
/// deleting service lists deleted blocks, not every block).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerMerkleTree {
    blocks: BTreeMap<LocalId, BlockMerkle>,
    data_checksum: Option<u64>,
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
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// What reconciliation must do to converge on a peer (`ContainerDiffReport`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerDiffReport {
    /// Live blocks of the peer with no local entry: pulled whole.
    pub missing_blocks: Vec<BlockMerkle>,
    /// Healthy peer chunks at offsets the local live block lacks, per block.
    pub missing_chunks: BTreeMap<LocalId, Vec<ChunkMerkle>>,
    /// Healthy peer chunks where the local chunk is unhealthy and differs, per block.
    pub corrupt_chunks: BTreeMap<LocalId, Vec<ChunkMerkle>>,
    /// Blocks to adopt as deleted with the peer's checksum.
    pub diverged_deleted: Vec<(LocalId, u64)>,
    /// Peer chunks skipped because the peer itself marks them unhealthy.
    pub unhealthy_filtered: usize,
}

impl ContainerDiffReport {
    /// Whether nothing needs doing.
    pub fn is_empty(&self) -> bool {
        self.missing_blocks.is_empty()
            && self.missing_chunks.is_empty()
            && self.corrupt_chunks.is_empty()
            && self.diverged_deleted.is_empty()
    }
}

/// Two trees of different containers were compared (`CONTAINER_ID_MISMATCH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("checksum trees of different containers: local {local}, peer {peer}")]
pub struct ContainerIdMismatch {
    /// The local container.
    pub local: ContainerId,
    /// The peer's.
    pub peer: ContainerId,
}

/// Compares the local tree with a peer's (spec C.4). With `witness_peer_deletions`
/// (HDDS-11765, beyond the seed) the block lists are walked even when the roots are
/// equal, and a local live block that the peer marks deleted is reported as diverged
/// deleted even with an equal checksum — the deleted flag is not hashed, so otherwise a
/// restored block is invisible.
pub fn diff(
    local: &ContainerChecksumInfo,
    peer: &ContainerChecksumInfo,
    witness_peer_deletions: bool,
) -> Result<ContainerDiffReport, ContainerIdMismatch> {
    if local.container != peer.container {
        return Err(ContainerIdMismatch {
            local: local.container,
            peer: peer.container,
        });
    }
    let mut report = ContainerDiffReport::default();
    let roots_equal =
        local.tree.data_checksum.is_some() && local.tree.data_checksum == peer.tree.data_checksum;
    if roots_equal && !witness_peer_deletions {
        return Ok(report);
    }
    for (id, theirs) in &peer.tree.blocks {
        let Some(ours) = local.tree.blocks.get(id) else {
            if theirs.deleted {
                report.diverged_deleted.push((*id, theirs.data_checksum));
            } else {
                report.missing_blocks.push(theirs.clone());
            }
            continue;
        };
        if ours.data_checksum == theirs.data_checksum {
            if witness_peer_deletions && !ours.deleted && theirs.deleted {
                report.diverged_deleted.push((*id, theirs.data_checksum));
            }
            continue;
        }
        match (ours.deleted, theirs.deleted) {
            (true, true) => {
                if ours.data_checksum < theirs.data_checksum {
                    report.diverged_deleted.push((*id, theirs.data_checksum));
                }
            }
            (true, false) => {}
            (false, true) => report.diverged_deleted.push((*id, theirs.data_checksum)),
            (false, false) => diff_chunks(*id, ours, theirs, &mut report),
        }
    }
    Ok(report)
}

fn diff_chunks(
    id: LocalId,
    ours: &BlockMerkle,
    theirs: &BlockMerkle,
    report: &mut ContainerDiffReport,
) {
    for (offset, peer_chunk) in &theirs.chunks {
        match ours.chunks.get(offset) {
            Some(local_chunk) => {
                if local_chunk.data_checksum != peer_chunk.data_checksum
                    && !local_chunk.checksum_matches
                {
                    if peer_chunk.checksum_matches {
                        report
                            .corrupt_chunks
                            .entry(id)
                            .or_default()
                            .push(*peer_chunk);
                    } else {
                        report.unhealthy_filtered += 1;
                    }
                }
            }
            None => {
                if peer_chunk.checksum_matches {
                    report
                        .missing_chunks
                        .entry(id)
                        .or_default()
                        .push(*peer_chunk);
                } else {
                    report.unhealthy_filtered += 1;
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Tree file encoding
// ---------------------------------------------------------------------------------------

/// Why bytes are not a tree file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TreeDecodeError {
    /// The file does not start with the tree file's magic.
    #[error("not a checksum tree file (bad magic)")]
    BadMagic,
    /// The file ends before a field it announces.
    #[error("truncated at byte {at}: {what} expected")]
    Truncated {
        /// Where the bytes ran out.
        at: usize,
        /// What was being read.
        what: &'static str,
    },
    /// The trailing CRC32C does not match the content.
    #[error("file checksum {stored:#010x} does not match content {computed:#010x}")]
    FileChecksumMismatch {
        /// What the file says.
        stored: u32,
        /// What its content hashes to.
        computed: u32,
    },
    /// A field has a value no writer produces.
    #[error("invalid {field}: {reason}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// Why.
        reason: String,
    },
    /// Bytes follow the end of the tree.
    #[error("{extra} byte(s) after the end of the tree")]
    TrailingBytes {
        /// How many.
        extra: usize,
    },
}

const MAGIC: &[u8; 8] = b"HRTREE01";

/// Encodes a tree file: magic, container id, optional root, blocks with their chunks, and
/// a trailing CRC32C of everything before it. Integers are big-endian.
pub fn encode(info: &ContainerChecksumInfo) -> Vec<u8> {
    let tree = &info.tree;
    let mut out = Vec::with_capacity(32 + tree.blocks.len() * 32);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&info.container.0.to_be_bytes());
    match tree.data_checksum {
        Some(root) => {
            out.push(1);
            out.extend_from_slice(&root.to_be_bytes());
        }
        None => out.push(0),
    }
    out.extend_from_slice(&(tree.blocks.len() as u64).to_be_bytes());
    for block in tree.blocks.values() {
        out.extend_from_slice(&block.local_id.to_be_bytes());
        out.extend_from_slice(&block.data_checksum.to_be_bytes());
        out.push(u8::from(block.deleted));
        out.extend_from_slice(&(block.chunks.len() as u64).to_be_bytes());
        for chunk in block.chunks.values() {
            out.extend_from_slice(&chunk.offset.to_be_bytes());
            out.extend_from_slice(&chunk.length.to_be_bytes());
            out.extend_from_slice(&chunk.data_checksum.to_be_bytes());
            out.push(u8::from(chunk.checksum_matches));
        }
    }
    let file_crc = crc32c::crc32c(&out);
    out.extend_from_slice(&file_crc.to_be_bytes());
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], TreeDecodeError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|end| *end <= self.bytes.len())
            .ok_or(TreeDecodeError::Truncated { at: self.at, what })?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, TreeDecodeError> {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_be_bytes(buf))
    }

    fn flag(&mut self, what: &'static str) -> Result<bool, TreeDecodeError> {
        match self.take(1, what)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(TreeDecodeError::Invalid {
                field: what,
                reason: format!("flag byte {other}"),
            }),
        }
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    /// A count of items of at least `min_size` bytes each, refused if the rest of the
    /// file cannot hold that many (so a corrupt count cannot make us allocate).
    fn count(&mut self, what: &'static str, min_size: usize) -> Result<usize, TreeDecodeError> {
        let count = self.u64(what)?;
        let fits = self.remaining() / min_size;
        usize::try_from(count)
            .ok()
            .filter(|c| *c <= fits)
            .ok_or_else(|| TreeDecodeError::Invalid {
                field: what,
                reason: format!("{count} items cannot fit in {} bytes", self.remaining()),
            })
    }
}

/// Block ids and chunk offsets are stored strictly ascending: checks that `value` follows
/// `previous` and records it. `block` names the block of a chunk offset.
fn ascend(
    previous: &mut Option<u64>,
    value: u64,
    field: &'static str,
    block: Option<LocalId>,
) -> Result<(), TreeDecodeError> {
    if previous.is_some_and(|p| p >= value) {
        let within = block.map_or_else(|| "the container".to_owned(), |id| format!("block {id}"));
        return Err(TreeDecodeError::Invalid {
            field,
            reason: format!("{value} after {previous:?} in {within}: must ascend"),
        });
    }
    *previous = Some(value);
    Ok(())
}

fn checksum32(value: u64, field: &'static str) -> Result<u64, TreeDecodeError> {
    if value > u64::from(u32::MAX) {
        return Err(TreeDecodeError::Invalid {
            field,
            reason: format!("{value:#x} is not a zero-extended CRC32C"),
        });
    }
    Ok(value)
}

/// Decodes a tree file written by [`encode`]. Live block checksums are recomputed from
/// their chunks, as Ozone does on load; deleted entries keep their stored checksum and
/// must have no chunks. Any malformation is a [`TreeDecodeError`], never a panic.
pub fn decode(bytes: &[u8]) -> Result<ContainerChecksumInfo, TreeDecodeError> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(TreeDecodeError::BadMagic);
    }
    if bytes.len() < MAGIC.len() + 4 {
        return Err(TreeDecodeError::Truncated {
            at: bytes.len(),
            what: "file checksum",
        });
    }
    let (content, trailer) = bytes.split_at(bytes.len() - 4);
    let stored = u32::from_be_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    let computed = crc32c::crc32c(content);
    if stored != computed {
        return Err(TreeDecodeError::FileChecksumMismatch { stored, computed });
    }
    let mut r = Reader {
        bytes: content,
        at: MAGIC.len(),
    };
    let container = ContainerId(r.u64("container id")?);
    let root = if r.flag("root present")? {
        Some(checksum32(r.u64("root")?, "root")?)
    } else {
        None
    };
    const BLOCK_MIN: usize = 8 + 8 + 1 + 8;
    const CHUNK_SIZE: usize = 8 + 8 + 8 + 1;
    let block_count = r.count("block count", BLOCK_MIN)?;
    let mut tree = ContainerMerkleTree::new();
    let mut previous: Option<LocalId> = None;
    for _ in 0..block_count {
        let id = r.u64("block id")?;
        ascend(&mut previous, id, "block id", None)?;
        let stored = checksum32(r.u64("block checksum")?, "block checksum")?;
        let deleted = r.flag("deleted")?;
        let chunk_count = r.count("chunk count", CHUNK_SIZE)?;
        if deleted && chunk_count > 0 {
            return Err(TreeDecodeError::Invalid {
                field: "chunk count",
                reason: format!("deleted block {id} lists {chunk_count} chunk(s)"),
            });
        }
        let mut block = if deleted {
            BlockMerkle::deleted(id, stored)
        } else {
            BlockMerkle::live(id)
        };
        let mut previous_offset: Option<u64> = None;
        for _ in 0..chunk_count {
            let offset = r.u64("chunk offset")?;
            ascend(&mut previous_offset, offset, "chunk offset", Some(id))?;
            let length = r.u64("chunk length")?;
            let data_checksum = checksum32(r.u64("chunk checksum")?, "chunk checksum")?;
            let checksum_matches = r.flag("chunk health")?;
            block.chunks.insert(
                offset,
                ChunkMerkle {
                    offset,
                    length,
                    data_checksum,
                    checksum_matches,
                },
            );
        }
        if !deleted {
            block.recompute();
        }
        tree.blocks.insert(id, block);
    }
    if r.remaining() > 0 {
        return Err(TreeDecodeError::TrailingBytes {
            extra: r.remaining(),
        });
    }
    tree.data_checksum = root;
    Ok(ContainerChecksumInfo { container, tree })
}
