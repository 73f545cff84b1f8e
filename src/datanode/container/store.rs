//! What a container replica keeps: block files, block metadata, delete transactions and
//! the tree file, behind [`ContainerStore`], with an in-memory implementation
//! ([`MemoryStore`]) for the checkers and one on disk ([`DiskStore`](super::disk::DiskStore)).
//!
//! **The race (HDDS-16811).** Ozone caches an open handle per block file and neither
//! deletion path closes it: a block file unlinked during its repair keeps receiving the
//! later chunks into an orphan, and only finishing the write sees the file gone.
//! **The fix** finishes the writes before committing metadata, so that "chunk file not
//! found" stops the commit. [`MemoryStore`] models exactly these POSIX semantics; the
//! disk store gets them from the operating system.

use std::collections::BTreeMap;
use std::fmt;

use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::LocalId;
use crate::sync::{Arc, RwCell, arc_from_box};

/// Bytes covered by one stored checksum in the scenarios (`bytes.per.checksum` is 16 KiB
/// in Ozone; small here so that chunks of a few bytes still have several windows).
pub const BYTES_PER_CHECKSUM: u32 = 4;

/// A chunk as block metadata records it (`ChunkInfo`): where it lies in the block file and
/// the CRC32C of each checksum window of its data.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChunkInfo {
    /// Offset in the block file.
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
    /// Window size of `checksums`.
    pub bytes_per_checksum: u32,
    /// CRC32C of each window of the data, in order.
    pub checksums: Vec<u32>,
}

impl ChunkInfo {
    /// The chunk holding `data` at `offset`, with its window checksums.
    pub fn for_data(offset: u64, data: &[u8], bytes_per_checksum: u32) -> Self {
        Self {
            offset,
            length: data.len() as u64,
            bytes_per_checksum,
            checksums: window_checksums(data, bytes_per_checksum),
        }
    }

    /// The offset just past the chunk.
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(self.length)
    }
}

/// CRC32C of each `bytes_per_checksum` window of `data` (a zero window size is one window).
pub fn window_checksums(data: &[u8], bytes_per_checksum: u32) -> Vec<u32> {
    let window = usize::try_from(bytes_per_checksum.max(1)).unwrap_or(usize::MAX);
    data.chunks(window).map(crc32c::crc32c).collect()
}

/// A block's metadata (`BlockData`): its chunks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BlockData {
    /// The block.
    pub local_id: LocalId,
    /// Its chunks, in offset order.
    pub chunks: Vec<ChunkInfo>,
}

impl BlockData {
    /// Metadata of `local_id` with `chunks` (sorted by offset; a later chunk at the same
    /// offset replaces an earlier one).
    pub fn new(local_id: LocalId, chunks: impl IntoIterator<Item = ChunkInfo>) -> Self {
        let by_offset: BTreeMap<u64, ChunkInfo> =
            chunks.into_iter().map(|c| (c.offset, c)).collect();
        Self {
            local_id,
            chunks: by_offset.into_values().collect(),
        }
    }

    /// The chunks keyed by offset.
    pub fn chunks_by_offset(&self) -> BTreeMap<u64, ChunkInfo> {
        self.chunks.iter().map(|c| (c.offset, c.clone())).collect()
    }

    /// Bytes the block's chunks cover.
    pub fn length(&self) -> u64 {
        self.chunks.iter().map(|c| c.length).sum()
    }

    /// The offset just past its last chunk.
    pub fn end(&self) -> u64 {
        self.chunks.iter().map(ChunkInfo::end).max().unwrap_or(0)
    }
}

/// One atomic write of block metadata and container metadata (a RocksDB batch).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataBatch {
    /// Block metadata to write.
    pub put_blocks: Vec<BlockData>,
    /// Block metadata to remove.
    pub delete_blocks: Vec<LocalId>,
    /// Delete transactions to store.
    pub put_transactions: Vec<DeletedBlocksTransaction>,
    /// Delete transactions to remove, by id.
    pub delete_transactions: Vec<u64>,
    /// New last delete transaction id.
    pub last_delete_tx_id: Option<u64>,
    /// New persisted data checksum.
    pub data_checksum: Option<u64>,
    /// New persisted state.
    pub state: Option<ContainerState>,
    /// Deletions to record in the database, each block with its tree checksum (the
    /// hardened `deletion_records_in_database`; Ozone keeps them in the tree file only).
    pub put_deleted: Vec<(LocalId, u64)>,
}

/// What recovery on open did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Block files without metadata that were unlinked.
    pub orphan_files_reclaimed: Vec<LocalId>,
    /// Blocks whose deletion was completed: the tree file marks them deleted, or their
    /// file was gone and a pending delete transaction lists them.
    pub deletions_completed: Vec<LocalId>,
}

/// The container metadata a store persists besides blocks and transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetadataSummary {
    /// Persisted state.
    pub state: ContainerState,
    /// Highest delete transaction id stored.
    pub last_delete_tx_id: u64,
    /// Persisted data checksum (`None` until one was computed).
    pub data_checksum: Option<u64>,
    /// Blocks with metadata.
    pub block_count: u64,
    /// Bytes the blocks' chunks cover (the container report's `used`).
    pub used_bytes: u64,
    /// Delete transactions pending.
    pub pending_transactions: u64,
    /// The highest block commit sequence id committed (`blockCommitSequenceId`): here a
    /// block's sequence id is its local id, which the cluster hands out in increasing
    /// order as Ratis does log indexes. Never lowered by a deletion.
    pub bcsid: u64,
}

/// What the storage of a replica refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// Finishing a write found no block file (`UNABLE_TO_FIND_CHUNK`): it was deleted while
    /// its handle was cached.
    #[error("chunk file not found: block {block}")]
    ChunkFileNotFound {
        /// The block.
        block: LocalId,
    },
    /// A write past the end of the file (`CHUNK_FILE_INCONSISTENCY`): holes are not
    /// supported.
    #[error("chunk file inconsistency: block {block} write at {offset}, file length {file_len}")]
    ChunkFileInconsistency {
        /// The block.
        block: LocalId,
        /// The write's offset.
        offset: u64,
        /// The file's length.
        file_len: u64,
    },
    /// An injected or operating-system failure.
    #[error("I/O error on {what}: {reason}")]
    Io {
        /// What was accessed.
        what: String,
        /// The failure.
        reason: String,
    },
    /// A replica's directory holds no database: it is not a replica that was committed.
    #[error("no container database at {path}")]
    NoDatabase {
        /// Where the database was looked for.
        path: String,
    },
    /// A file longer than the store reads (a damaged or foreign file).
    #[error("{what} is longer than the {limit} bytes a replica reads")]
    FileTooLarge {
        /// The file.
        what: String,
        /// The cap, in bytes.
        limit: u64,
    },
    /// Persisted metadata that cannot be read back.
    #[error("corrupt container metadata: {reason}")]
    CorruptMetadata {
        /// Why.
        reason: String,
    },
}

/// The files and the database of one container replica. Every method is atomic with
/// respect to the others; ordering across calls is the caller's (the container lock).
pub trait ContainerStore: Send + Sync + fmt::Debug {
    /// Writes `data` at `offset` of the block file through the cached handle, opening
    /// (creating) the file if no handle is cached. A write at an offset below the file
    /// length overwrites; above it is [`StoreError::ChunkFileInconsistency`].
    fn write_chunk(&self, block: LocalId, offset: u64, data: &[u8]) -> Result<(), StoreError>;
    /// Closes the cached handle of the block file, then requires the file to exist
    /// (`finishWriteChunks`).
    fn finish_write(&self, block: LocalId) -> Result<(), StoreError>;
    /// Reads up to `len` bytes at `offset` of the block file (fewer at its end); `None` if
    /// there is no file.
    fn read_block(
        &self,
        block: LocalId,
        offset: u64,
        len: u64,
    ) -> Result<Option<Vec<u8>>, StoreError>;
    /// The block file's length; `None` if there is no file.
    fn block_file_len(&self, block: LocalId) -> Result<Option<u64>, StoreError>;
    /// Unlinks the block file without touching a cached handle; whether there was one.
    fn delete_block_file(&self, block: LocalId) -> Result<bool, StoreError>;
    /// Cuts the block file to `len` bytes; `len` 0 unlinks it. Closes a cached handle
    /// first (the caller is giving up on its writes).
    fn truncate_block_file(&self, block: LocalId, len: u64) -> Result<(), StoreError>;
    /// Blocks that have a file.
    fn block_files(&self) -> Result<Vec<LocalId>, StoreError>;

    /// Metadata of `block`.
    fn get_block(&self, block: LocalId) -> Result<Option<BlockData>, StoreError>;
    /// Metadata of every block, in id order.
    fn blocks(&self) -> Result<Vec<BlockData>, StoreError>;
    /// The deletions recorded in the database, each block with its tree checksum.
    fn deleted_blocks(&self) -> Result<BTreeMap<LocalId, u64>, StoreError>;
    /// Whether the database records `block`'s deletion.
    fn deletion_recorded(&self, block: LocalId) -> Result<bool, StoreError>;
    /// Pending delete transactions in id order, whole transactions until their block ids
    /// reach `block_budget` (at least one transaction if any).
    fn pending_transactions(
        &self,
        block_budget: usize,
    ) -> Result<Vec<DeletedBlocksTransaction>, StoreError>;
    /// The pending delete transaction `tx_id`, if stored and not executed yet.
    fn transaction(&self, tx_id: u64) -> Result<Option<DeletedBlocksTransaction>, StoreError>;
    /// The container metadata.
    fn summary(&self) -> Result<MetadataSummary, StoreError>;
    /// Applies `batch` atomically.
    fn commit(&self, batch: MetadataBatch) -> Result<(), StoreError>;

    /// The tree file's bytes; `None` if there is none.
    fn read_tree_file(&self) -> Result<Option<Vec<u8>>, StoreError>;
    /// Replaces the tree file atomically (temporary file, then rename).
    fn write_tree_file(&self, bytes: &[u8]) -> Result<(), StoreError>;
    /// Resolves what a crash between two durable steps left in the replica, before it
    /// serves anything ([`ContainerConfig::recover_on_open`]); nothing for a store that
    /// cannot be left half-written (the default).
    ///
    /// [`ContainerConfig::recover_on_open`]: super::config::ContainerConfig::recover_on_open
    fn recover_on_open(&self) -> Result<Recovery, StoreError> {
        Ok(Recovery::default())
    }
}

/// The database part of a replica, shared by both stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Metadata {
    pub(super) state: ContainerState,
    pub(super) last_delete_tx_id: u64,
    pub(super) data_checksum: Option<u64>,
    pub(super) blocks: BTreeMap<LocalId, BlockData>,
    pub(super) transactions: BTreeMap<u64, DeletedBlocksTransaction>,
    pub(super) deleted: BTreeMap<LocalId, u64>,
    pub(super) bcsid: u64,
}

impl Metadata {
    pub(super) fn new(state: ContainerState) -> Self {
        Self {
            state,
            last_delete_tx_id: 0,
            data_checksum: None,
            blocks: BTreeMap::new(),
            transactions: BTreeMap::new(),
            deleted: BTreeMap::new(),
            bcsid: 0,
        }
    }

    /// The block commit sequence id after `batch`, when the batch raises it.
    pub(super) fn bcsid_after(&self, batch: &MetadataBatch) -> Option<u64> {
        let committed = batch.put_blocks.iter().map(|b| b.local_id).max()?;
        (committed > self.bcsid).then_some(committed)
    }

    pub(super) fn apply(&mut self, batch: MetadataBatch) {
        if let Some(bcsid) = self.bcsid_after(&batch) {
            self.bcsid = bcsid;
        }
        for block in batch.put_blocks {
            self.blocks.insert(block.local_id, block);
        }
        for id in batch.delete_blocks {
            self.blocks.remove(&id);
        }
        for tx in batch.put_transactions {
            self.transactions.insert(tx.tx_id, tx);
        }
        for id in batch.delete_transactions {
            self.transactions.remove(&id);
        }
        if let Some(last) = batch.last_delete_tx_id {
            self.last_delete_tx_id = last;
        }
        if let Some(checksum) = batch.data_checksum {
            self.data_checksum = Some(checksum);
        }
        if let Some(state) = batch.state {
            self.state = state;
        }
        self.deleted.extend(batch.put_deleted);
    }

    pub(super) fn pending(&self, block_budget: usize) -> Vec<DeletedBlocksTransaction> {
        let mut out = Vec::new();
        let mut blocks = 0usize;
        for tx in self.transactions.values() {
            if !out.is_empty() && blocks >= block_budget {
                break;
            }
            blocks = blocks.saturating_add(tx.local_ids.len());
            out.push(tx.clone());
        }
        out
    }

    pub(super) fn summary(&self) -> MetadataSummary {
        MetadataSummary {
            state: self.state,
            last_delete_tx_id: self.last_delete_tx_id,
            data_checksum: self.data_checksum,
            block_count: self.blocks.len() as u64,
            used_bytes: self.blocks.values().map(BlockData::length).sum(),
            pending_transactions: self.transactions.len() as u64,
            bcsid: self.bcsid,
        }
    }
}

type InodeId = u64;

/// The chunks directory and its files.
#[derive(Debug)]
struct MemoryFiles {
    /// Directory entries of the chunks directory: block file path → inode.
    paths: BTreeMap<LocalId, InodeId>,
    /// File contents, kept while a path or a cached handle refers to them.
    inodes: BTreeMap<InodeId, Vec<u8>>,
    /// The open-file cache (`FilePerBlockStrategy`): block → inode of the cached handle.
    handles: BTreeMap<LocalId, InodeId>,
    next_inode: InodeId,
}

impl MemoryFiles {
    /// Drops an inode of `block` that neither its path nor its cached handle refers to
    /// any more (the kernel freeing an orphan). An inode is only ever reached through the
    /// path or the handle of the block it was created for, so this is O(log n).
    fn release(&mut self, block: LocalId, inode: InodeId) {
        let referenced =
            self.paths.get(&block) == Some(&inode) || self.handles.get(&block) == Some(&inode);
        if !referenced {
            self.inodes.remove(&inode);
        }
    }
}

/// A replica's storage in memory, with the POSIX semantics the race depends on: unlinking
/// a path leaves a cached handle writing into the orphaned inode. Clones are handles to the
/// same storage: hand one to the replica (see [`MemoryStore::shared`]) and inspect or
/// fault it through another.
///
/// Each call touches exactly one of three parts, the block files, the database or the
/// tree file, each behind its own lock, a leaf in the lock order: every call is atomic,
/// and a checker sees that a chunk write and a metadata read, say, do not conflict (loom
/// explores only the orders of calls on one part).
#[derive(Debug, Clone)]
pub struct MemoryStore {
    files: Arc<RwCell<MemoryFiles>>,
    metadata: Arc<RwCell<Metadata>>,
    tree_file: Arc<RwCell<Option<Vec<u8>>>>,
}

impl MemoryStore {
    /// An empty replica in `state`.
    pub fn new(state: ContainerState) -> Self {
        Self {
            files: Arc::new(RwCell::new(MemoryFiles {
                paths: BTreeMap::new(),
                inodes: BTreeMap::new(),
                handles: BTreeMap::new(),
                next_inode: 1,
            })),
            metadata: Arc::new(RwCell::new(Metadata::new(state))),
            tree_file: Arc::new(RwCell::new(None)),
        }
    }

    /// A clone as the `Arc<dyn ContainerStore>` a replica takes.
    pub fn shared(&self) -> Arc<dyn ContainerStore> {
        arc_from_box(Box::new(self.clone()) as Box<dyn ContainerStore>)
    }

    /// Replaces the tree file's bytes without any check (a test corrupting the file).
    pub fn overwrite_tree_file(&self, bytes: Option<Vec<u8>>) {
        self.tree_file.write(|file| *file = bytes);
    }

    /// Overwrites bytes of an existing block file in place (a test corrupting data).
    /// Returns false if there is no file or the range is outside it.
    pub fn corrupt_block_file(&self, block: LocalId, offset: u64, data: &[u8]) -> bool {
        self.files.write(|files| {
            let Some(inode) = files.paths.get(&block).copied() else {
                return false;
            };
            let Some(file) = files.inodes.get_mut(&inode) else {
                return false;
            };
            let Ok(start) = usize::try_from(offset) else {
                return false;
            };
            match start.checked_add(data.len()) {
                Some(end) if end <= file.len() => {
                    file[start..end].copy_from_slice(data);
                    true
                }
                _ => false,
            }
        })
    }

    /// Blocks whose cached handle points at an unlinked file (the orphans of the race).
    pub fn orphaned_handles(&self) -> Vec<LocalId> {
        self.files.read(|files| {
            files
                .handles
                .iter()
                .filter(|(block, inode)| files.paths.get(block) != Some(inode))
                .map(|(block, _)| *block)
                .collect()
        })
    }
}

fn to_index(value: u64, what: &str) -> Result<usize, StoreError> {
    usize::try_from(value).map_err(|_| StoreError::Io {
        what: what.to_owned(),
        reason: format!("offset {value} beyond addressable memory"),
    })
}

impl ContainerStore for MemoryStore {
    fn write_chunk(&self, block: LocalId, offset: u64, data: &[u8]) -> Result<(), StoreError> {
        if data.is_empty() {
            return Ok(());
        }
        self.files.write(|files| {
            let inode = match files.handles.get(&block) {
                Some(inode) => *inode,
                None => {
                    let inode = match files.paths.get(&block) {
                        Some(inode) => *inode,
                        None => {
                            let inode = files.next_inode;
                            files.next_inode += 1;
                            files.paths.insert(block, inode);
                            files.inodes.insert(inode, Vec::new());
                            inode
                        }
                    };
                    files.handles.insert(block, inode);
                    inode
                }
            };
            let file = files.inodes.entry(inode).or_default();
            let file_len = file.len() as u64;
            if offset > file_len {
                return Err(StoreError::ChunkFileInconsistency {
                    block,
                    offset,
                    file_len,
                });
            }
            let start = to_index(offset, "block file")?;
            let end = start
                .checked_add(data.len())
                .ok_or_else(|| StoreError::Io {
                    what: "block file".into(),
                    reason: "write past addressable memory".into(),
                })?;
            if file.len() < end {
                file.resize(end, 0);
            }
            file[start..end].copy_from_slice(data);
            Ok(())
        })
    }

    fn finish_write(&self, block: LocalId) -> Result<(), StoreError> {
        self.files.write(|files| {
            if let Some(inode) = files.handles.remove(&block) {
                files.release(block, inode);
            }
            if files.paths.contains_key(&block) {
                Ok(())
            } else {
                Err(StoreError::ChunkFileNotFound { block })
            }
        })
    }

    fn read_block(
        &self,
        block: LocalId,
        offset: u64,
        len: u64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.files.read(|files| {
            let Some(file) = files.paths.get(&block).and_then(|i| files.inodes.get(i)) else {
                return Ok(None);
            };
            let start = to_index(offset, "block file")?.min(file.len());
            let end = start
                .saturating_add(to_index(len, "block file")?)
                .min(file.len());
            Ok(Some(file[start..end].to_vec()))
        })
    }

    fn block_file_len(&self, block: LocalId) -> Result<Option<u64>, StoreError> {
        self.files.read(|files| {
            Ok(files
                .paths
                .get(&block)
                .and_then(|i| files.inodes.get(i))
                .map(|f| f.len() as u64))
        })
    }

    fn delete_block_file(&self, block: LocalId) -> Result<bool, StoreError> {
        self.files.write(|files| match files.paths.remove(&block) {
            Some(inode) => {
                files.release(block, inode);
                Ok(true)
            }
            None => Ok(false),
        })
    }

    fn truncate_block_file(&self, block: LocalId, len: u64) -> Result<(), StoreError> {
        self.files.write(|files| {
            if let Some(inode) = files.handles.remove(&block) {
                files.release(block, inode);
            }
            if len == 0 {
                if let Some(inode) = files.paths.remove(&block) {
                    files.release(block, inode);
                }
                return Ok(());
            }
            let len = to_index(len, "block file")?;
            if let Some(inode) = files.paths.get(&block).copied()
                && let Some(file) = files.inodes.get_mut(&inode)
            {
                file.truncate(len);
            }
            Ok(())
        })
    }

    fn block_files(&self) -> Result<Vec<LocalId>, StoreError> {
        Ok(self
            .files
            .read(|files| files.paths.keys().copied().collect()))
    }

    fn get_block(&self, block: LocalId) -> Result<Option<BlockData>, StoreError> {
        Ok(self.metadata.read(|m| m.blocks.get(&block).cloned()))
    }

    fn blocks(&self) -> Result<Vec<BlockData>, StoreError> {
        Ok(self.metadata.read(|m| m.blocks.values().cloned().collect()))
    }

    fn deleted_blocks(&self) -> Result<BTreeMap<LocalId, u64>, StoreError> {
        Ok(self.metadata.read(|m| m.deleted.clone()))
    }

    fn deletion_recorded(&self, block: LocalId) -> Result<bool, StoreError> {
        Ok(self.metadata.read(|m| m.deleted.contains_key(&block)))
    }

    fn pending_transactions(
        &self,
        block_budget: usize,
    ) -> Result<Vec<DeletedBlocksTransaction>, StoreError> {
        Ok(self.metadata.read(|m| m.pending(block_budget)))
    }

    fn transaction(&self, tx_id: u64) -> Result<Option<DeletedBlocksTransaction>, StoreError> {
        Ok(self.metadata.read(|m| m.transactions.get(&tx_id).cloned()))
    }

    fn summary(&self) -> Result<MetadataSummary, StoreError> {
        Ok(self.metadata.read(Metadata::summary))
    }

    fn commit(&self, batch: MetadataBatch) -> Result<(), StoreError> {
        self.metadata.write(|m| m.apply(batch));
        Ok(())
    }

    fn read_tree_file(&self) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.tree_file.read(Clone::clone))
    }

    fn write_tree_file(&self, bytes: &[u8]) -> Result<(), StoreError> {
        self.tree_file.write(|file| *file = Some(bytes.to_vec()));
        Ok(())
    }
}
