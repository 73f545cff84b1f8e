//! A replica kept in a directory, as a datanode keeps it: one file per block under
//! `chunks/`, the tree file under `metadata/` (written to a temporary file and renamed),
//! and the container's database as one file under `metadata/`, rewritten atomically on
//! every batch, so that a restarted datanode reloads exactly what was committed.
//!
//! **The race (HDDS-16811)** needs the cached-handle semantics of file-per-block writes:
//! here they come from the operating system. A block file unlinked while its handle is
//! cached keeps receiving writes into the orphaned inode, and finishing the write (closing
//! the handle, then checking the path) reports the file missing; **the fix** relies on
//! exactly that check running before the commit.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::store::{
    BlockData, ChunkInfo, ContainerStore, Metadata, MetadataBatch, MetadataSummary, StoreError,
};
use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, LocalId};
use crate::sync::{Arc, Mutex, arc_from_box};

const DB_MAGIC: &[u8; 8] = b"HRMETA01";
const DB_FILE: &str = "container.db";

/// A replica's storage in a directory.
#[derive(Debug)]
pub struct DiskStore {
    root: PathBuf,
    container: ContainerId,
    /// The open-file cache of block files (`FilePerBlockStrategy`).
    handles: Mutex<BTreeMap<LocalId, File>>,
    /// The database as last committed; the file under `metadata/` is its durable copy.
    metadata: Mutex<Metadata>,
}

/// An operating-system failure on `what`.
pub(super) fn io_error(what: &Path, error: &std::io::Error) -> StoreError {
    StoreError::Io {
        what: what.display().to_string(),
        reason: error.to_string(),
    }
}

impl DiskStore {
    /// Opens the replica of `container` in `root`, creating it in `state` if the directory
    /// holds none; an existing replica is reloaded as it was committed.
    pub fn open(
        root: impl Into<PathBuf>,
        container: ContainerId,
        state: ContainerState,
    ) -> Result<Self, StoreError> {
        let root = root.into();
        for dir in [root.join("chunks"), root.join("metadata")] {
            fs::create_dir_all(&dir).map_err(|e| io_error(&dir, &e))?;
        }
        let store = Self {
            root,
            container,
            handles: Mutex::new(BTreeMap::new()),
            metadata: Mutex::new(Metadata::new(state)),
        };
        let db = store.db_path();
        match fs::read(&db) {
            Ok(bytes) => *store.metadata.lock() = decode_metadata(&bytes)?,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                let initial = store.metadata.lock().clone();
                store.persist(&initial)?;
            }
            Err(e) => return Err(io_error(&db, &e)),
        }
        Ok(store)
    }

    /// Opens the replica kept in `root`, which must hold its database: a directory without
    /// one is [`StoreError::NoDatabase`], not an empty replica.
    pub fn open_existing(
        root: impl Into<PathBuf>,
        container: ContainerId,
    ) -> Result<Self, StoreError> {
        let root = root.into();
        let db = root.join("metadata").join(DB_FILE);
        if !db.is_file() {
            return Err(StoreError::NoDatabase {
                path: db.display().to_string(),
            });
        }
        Self::open(root, container, ContainerState::Invalid)
    }

    /// Wraps the store as the `Arc<dyn ContainerStore>` a replica takes.
    pub fn shared(self) -> Arc<dyn ContainerStore> {
        arc_from_box(Box::new(self) as Box<dyn ContainerStore>)
    }

    /// The container directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The path of `block`'s file.
    pub fn block_path(&self, block: LocalId) -> PathBuf {
        self.root.join("chunks").join(format!("{block}.block"))
    }

    /// The path of the tree file.
    pub fn tree_path(&self) -> PathBuf {
        self.root
            .join("metadata")
            .join(format!("{}.tree", self.container.0))
    }

    fn db_path(&self) -> PathBuf {
        self.root.join("metadata").join(DB_FILE)
    }

    /// Writes `bytes` to `path` through a temporary file and a rename.
    fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut file = File::create(&tmp).map_err(|e| io_error(&tmp, &e))?;
        file.write_all(bytes).map_err(|e| io_error(&tmp, &e))?;
        file.sync_all().map_err(|e| io_error(&tmp, &e))?;
        fs::rename(&tmp, path).map_err(|e| io_error(path, &e))
    }

    fn persist(&self, metadata: &Metadata) -> Result<(), StoreError> {
        Self::replace_file(&self.db_path(), &encode_metadata(metadata))
    }
}

impl ContainerStore for DiskStore {
    fn write_chunk(&self, block: LocalId, offset: u64, data: &[u8]) -> Result<(), StoreError> {
        if data.is_empty() {
            return Ok(());
        }
        let path = self.block_path(block);
        let mut handles = self.handles.lock();
        let file = match handles.entry(block) {
            std::collections::btree_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::btree_map::Entry::Vacant(entry) => entry.insert(
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&path)
                    .map_err(|e| io_error(&path, &e))?,
            ),
        };
        // The size of the open file, orphaned or not: what Ozone's offset check reads.
        let file_len = file.metadata().map_err(|e| io_error(&path, &e))?.len();
        if offset > file_len {
            return Err(StoreError::ChunkFileInconsistency {
                block,
                offset,
                file_len,
            });
        }
        file.write_all_at(data, offset)
            .map_err(|e| io_error(&path, &e))
    }

    fn finish_write(&self, block: LocalId) -> Result<(), StoreError> {
        // Dropping the handle closes it.
        self.handles.lock().remove(&block);
        let path = self.block_path(block);
        match fs::metadata(&path) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                Err(StoreError::ChunkFileNotFound { block })
            }
            Err(e) => Err(io_error(&path, &e)),
        }
    }

    fn read_block(
        &self,
        block: LocalId,
        offset: u64,
        len: u64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.block_path(block);
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error(&path, &e)),
        };
        let file_len = file.metadata().map_err(|e| io_error(&path, &e))?.len();
        let available = file_len.saturating_sub(offset).min(len);
        let mut buf = vec![
            0u8;
            usize::try_from(available).map_err(|_| StoreError::Io {
                what: path.display().to_string(),
                reason: format!("read of {available} bytes beyond addressable memory"),
            })?
        ];
        file.read_exact_at(&mut buf, offset)
            .map_err(|e| io_error(&path, &e))?;
        Ok(Some(buf))
    }

    fn block_file_len(&self, block: LocalId) -> Result<Option<u64>, StoreError> {
        let path = self.block_path(block);
        match fs::metadata(&path) {
            Ok(meta) => Ok(Some(meta.len())),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(&path, &e)),
        }
    }

    fn delete_block_file(&self, block: LocalId) -> Result<bool, StoreError> {
        let path = self.block_path(block);
        match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
            Err(e) => Err(io_error(&path, &e)),
        }
    }

    fn truncate_block_file(&self, block: LocalId, len: u64) -> Result<(), StoreError> {
        self.handles.lock().remove(&block);
        let path = self.block_path(block);
        if len == 0 {
            self.delete_block_file(block)?;
            return Ok(());
        }
        match OpenOptions::new().write(true).open(&path) {
            Ok(file) => {
                let current = file.metadata().map_err(|e| io_error(&path, &e))?.len();
                if len < current {
                    file.set_len(len).map_err(|e| io_error(&path, &e))?;
                }
                Ok(())
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_error(&path, &e)),
        }
    }

    fn block_files(&self) -> Result<Vec<LocalId>, StoreError> {
        let dir = self.root.join("chunks");
        let entries = fs::read_dir(&dir).map_err(|e| io_error(&dir, &e))?;
        let mut blocks = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| io_error(&dir, &e))?;
            let name = entry.file_name();
            if let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".block"))
                .and_then(|n| n.parse().ok())
            {
                blocks.push(id);
            }
        }
        blocks.sort_unstable();
        Ok(blocks)
    }

    fn get_block(&self, block: LocalId) -> Result<Option<BlockData>, StoreError> {
        Ok(self.metadata.lock().blocks.get(&block).cloned())
    }

    fn blocks(&self) -> Result<Vec<BlockData>, StoreError> {
        Ok(self.metadata.lock().blocks.values().cloned().collect())
    }

    fn pending_transactions(
        &self,
        block_budget: usize,
    ) -> Result<Vec<DeletedBlocksTransaction>, StoreError> {
        Ok(self.metadata.lock().pending(block_budget))
    }

    fn transaction(&self, tx_id: u64) -> Result<Option<DeletedBlocksTransaction>, StoreError> {
        Ok(self.metadata.lock().transactions.get(&tx_id).cloned())
    }

    fn summary(&self) -> Result<MetadataSummary, StoreError> {
        Ok(self.metadata.lock().summary())
    }

    fn commit(&self, batch: MetadataBatch) -> Result<(), StoreError> {
        let mut metadata = self.metadata.lock();
        let mut next = metadata.clone();
        next.apply(batch);
        self.persist(&next)?;
        *metadata = next;
        Ok(())
    }

    fn read_tree_file(&self) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.tree_path();
        let mut file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error(&path, &e)),
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| io_error(&path, &e))?;
        Ok(Some(bytes))
    }

    fn write_tree_file(&self, bytes: &[u8]) -> Result<(), StoreError> {
        Self::replace_file(&self.tree_path(), bytes)
    }
}

// ---------------------------------------------------------------------------------------
// Database file encoding
// ---------------------------------------------------------------------------------------

fn state_code(state: ContainerState) -> u8 {
    match state {
        ContainerState::Open => 1,
        ContainerState::Closing => 2,
        ContainerState::QuasiClosed => 3,
        ContainerState::Closed => 4,
        ContainerState::Unhealthy => 5,
        ContainerState::Invalid => 6,
        ContainerState::Deleted => 7,
        ContainerState::Recovering => 8,
    }
}

fn state_of(code: u8) -> Option<ContainerState> {
    Some(match code {
        1 => ContainerState::Open,
        2 => ContainerState::Closing,
        3 => ContainerState::QuasiClosed,
        4 => ContainerState::Closed,
        5 => ContainerState::Unhealthy,
        6 => ContainerState::Invalid,
        7 => ContainerState::Deleted,
        8 => ContainerState::Recovering,
        _ => return None,
    })
}

fn encode_metadata(m: &Metadata) -> Vec<u8> {
    let mut out = DB_MAGIC.to_vec();
    let u64s = |out: &mut Vec<u8>, v: u64| out.extend_from_slice(&v.to_be_bytes());
    out.push(state_code(m.state));
    u64s(&mut out, m.last_delete_tx_id);
    match m.data_checksum {
        Some(c) => {
            out.push(1);
            u64s(&mut out, c);
        }
        None => out.push(0),
    }
    u64s(&mut out, m.blocks.len() as u64);
    for block in m.blocks.values() {
        u64s(&mut out, block.local_id);
        u64s(&mut out, block.chunks.len() as u64);
        for chunk in &block.chunks {
            u64s(&mut out, chunk.offset);
            u64s(&mut out, chunk.length);
            out.extend_from_slice(&chunk.bytes_per_checksum.to_be_bytes());
            u64s(&mut out, chunk.checksums.len() as u64);
            for c in &chunk.checksums {
                out.extend_from_slice(&c.to_be_bytes());
            }
        }
    }
    u64s(&mut out, m.transactions.len() as u64);
    for tx in m.transactions.values() {
        u64s(&mut out, tx.tx_id);
        u64s(&mut out, tx.container.0);
        u64s(&mut out, tx.local_ids.len() as u64);
        for id in &tx.local_ids {
            u64s(&mut out, *id);
        }
    }
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

fn corrupt(reason: impl Into<String>) -> StoreError {
    StoreError::CorruptMetadata {
        reason: reason.into(),
    }
}

impl Cursor<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], StoreError> {
        let end = self
            .at
            .checked_add(N)
            .filter(|e| *e <= self.bytes.len())
            .ok_or_else(|| corrupt(format!("truncated at byte {}", self.at)))?;
        let mut buf = [0u8; N];
        buf.copy_from_slice(&self.bytes[self.at..end]);
        self.at = end;
        Ok(buf)
    }

    fn u64(&mut self) -> Result<u64, StoreError> {
        self.take::<8>().map(u64::from_be_bytes)
    }

    fn u32(&mut self) -> Result<u32, StoreError> {
        self.take::<4>().map(u32::from_be_bytes)
    }

    fn u8(&mut self) -> Result<u8, StoreError> {
        self.take::<1>().map(|b| b[0])
    }

    /// A count of items of at least `min_size` bytes that the rest of the file can hold.
    fn count(&mut self, min_size: usize) -> Result<usize, StoreError> {
        let count = self.u64()?;
        let fits = (self.bytes.len() - self.at) / min_size.max(1);
        usize::try_from(count)
            .ok()
            .filter(|c| *c <= fits)
            .ok_or_else(|| corrupt(format!("count {count} exceeds the file")))
    }
}

fn decode_metadata(bytes: &[u8]) -> Result<Metadata, StoreError> {
    if bytes.len() < DB_MAGIC.len() + 4 || &bytes[..DB_MAGIC.len()] != DB_MAGIC {
        return Err(corrupt("not a container database file"));
    }
    let (content, trailer) = bytes.split_at(bytes.len() - 4);
    let stored = u32::from_be_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    if stored != crc32c::crc32c(content) {
        return Err(corrupt("file checksum mismatch"));
    }
    let mut c = Cursor {
        bytes: content,
        at: DB_MAGIC.len(),
    };
    let state = state_of(c.u8()?).ok_or_else(|| corrupt("unknown state"))?;
    let mut m = Metadata::new(state);
    m.last_delete_tx_id = c.u64()?;
    m.data_checksum = match c.u8()? {
        0 => None,
        1 => Some(c.u64()?),
        other => return Err(corrupt(format!("flag byte {other}"))),
    };
    for _ in 0..c.count(16)? {
        let id = c.u64()?;
        let mut chunks = Vec::new();
        for _ in 0..c.count(28)? {
            let offset = c.u64()?;
            let length = c.u64()?;
            let bytes_per_checksum = c.u32()?;
            let checksums = (0..c.count(4)?)
                .map(|_| c.u32())
                .collect::<Result<Vec<_>, _>>()?;
            chunks.push(ChunkInfo {
                offset,
                length,
                bytes_per_checksum,
                checksums,
            });
        }
        m.blocks.insert(id, BlockData::new(id, chunks));
    }
    for _ in 0..c.count(24)? {
        let tx_id = c.u64()?;
        let container = ContainerId(c.u64()?);
        let local_ids = (0..c.count(8)?)
            .map(|_| c.u64())
            .collect::<Result<Vec<_>, _>>()?;
        m.transactions.insert(
            tx_id,
            DeletedBlocksTransaction {
                tx_id,
                container,
                local_ids,
            },
        );
    }
    if c.at != content.len() {
        return Err(corrupt("trailing bytes"));
    }
    Ok(m)
}
