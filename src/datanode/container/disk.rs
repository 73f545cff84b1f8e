//! A replica kept in a directory, as a datanode keeps it: one file per block under
//! `chunks/`, the tree file under `metadata/` (written to a temporary file and renamed),
//! and the container's database under `metadata/` (redb, [`db`]), where each batch is one
//! durable transaction, so that a restarted datanode reloads exactly what was committed.
//!
//! **Durable steps, in this order.** A block's data is fsynced when its write finishes
//! ([`ContainerStore::finish_write`]), and the `chunks/` directory with it (the file's
//! entry), so data is durable before any metadata that names it commits. A replaced file
//! (the database, the tree file) is written to a temporary file, fsynced, renamed over
//! the old one, and its directory fsynced. An unlinked block file's directory is fsynced
//! before the call returns, and a truncated file is fsynced. Reads of the database and
//! the tree file are capped ([`MAX_TREE_FILE_BYTES`]); the database commits a batch in
//! one transaction that is durable when [`ContainerStore::commit`] returns.
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
    BlockData, ContainerStore, Metadata, MetadataBatch, MetadataSummary, StoreError,
};
use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, LocalId};
use crate::sync::{Arc, Mutex, arc_from_box};

mod codec;
pub mod db;
mod recovery;
use db::{ContainerDb, DatabaseRegistry};
pub use recovery::Recovery;

const DB_FILE: &str = "container.db";

/// The largest tree file a replica reads.
pub const MAX_TREE_FILE_BYTES: u64 = 64 << 20;

/// A replica's storage in a directory.
#[derive(Debug)]
pub struct DiskStore {
    root: PathBuf,
    container: ContainerId,
    /// The open-file cache of block files (`FilePerBlockStrategy`).
    handles: Mutex<BTreeMap<LocalId, File>>,
    /// The database as last committed, in memory; [`ContainerDb`] is its durable copy.
    metadata: Mutex<Metadata>,
    db: ContainerDb,
    /// What recovery did when this store opened an existing replica.
    recovery: Recovery,
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
        Self::open_in(root.into(), container, Some(state), None)
    }

    /// Opens the replica kept in `root`, which must hold its database: a directory without
    /// one is [`StoreError::NoDatabase`], not an empty replica.
    pub fn open_existing(
        root: impl Into<PathBuf>,
        container: ContainerId,
    ) -> Result<Self, StoreError> {
        Self::open_in(root.into(), container, None, None)
    }

    /// [`open`](Self::open) (with `state`) or [`open_existing`](Self::open_existing)
    /// (without), sharing the database with every other store of the replica opened
    /// through `registry`: how a volume opens its replicas.
    pub fn open_registered(
        root: impl Into<PathBuf>,
        container: ContainerId,
        state: Option<ContainerState>,
        registry: &DatabaseRegistry,
    ) -> Result<Self, StoreError> {
        Self::open_in(root.into(), container, state, Some(registry))
    }

    fn open_in(
        root: PathBuf,
        container: ContainerId,
        create_in: Option<ContainerState>,
        registry: Option<&DatabaseRegistry>,
    ) -> Result<Self, StoreError> {
        let path = root.join("metadata").join(DB_FILE);
        let existing = path.is_file();
        let (db, metadata) = match (existing, create_in) {
            (true, _) => ContainerDb::open(&path, container, registry)?,
            (false, Some(state)) => {
                for dir in [root.join("chunks"), root.join("metadata")] {
                    if !dir.is_dir() {
                        fs::create_dir_all(&dir).map_err(|e| io_error(&dir, &e))?;
                        sync_parent(&dir)?;
                    }
                }
                let created = ContainerDb::create(&path, container, state, registry)?;
                sync_parent(&path)?;
                created
            }
            (false, None) => {
                return Err(StoreError::NoDatabase {
                    path: path.display().to_string(),
                });
            }
        };
        let mut store = Self {
            root,
            container,
            handles: Mutex::new(BTreeMap::new()),
            metadata: Mutex::new(metadata),
            db,
            recovery: Recovery::default(),
        };
        if existing {
            store.recovery = recovery::recover(&store)?;
        }
        Ok(store)
    }

    /// What recovery did when this store opened the replica (nothing for a new one).
    pub fn recovery(&self) -> &Recovery {
        &self.recovery
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

    /// Writes `bytes` to `path` through a fsynced temporary file and a rename, then
    /// fsyncs the directory: once it returns, the new content survives a power loss.
    fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut file = File::create(&tmp).map_err(|e| io_error(&tmp, &e))?;
        file.write_all(bytes).map_err(|e| io_error(&tmp, &e))?;
        file.sync_all().map_err(|e| io_error(&tmp, &e))?;
        fs::rename(&tmp, path).map_err(|e| io_error(path, &e))?;
        sync_parent(path)
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
        let path = self.block_path(block);
        // The data is made durable before the handle is closed (dropped) and before any
        // metadata naming it can commit; then the file's directory entry.
        let handle = self.handles.lock().remove(&block);
        if let Some(file) = handle {
            file.sync_data().map_err(|e| io_error(&path, &e))?;
        }
        match fs::metadata(&path) {
            Ok(_) => sync_parent(&path),
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
            Ok(()) => sync_parent(&path).map(|()| true),
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
                    file.sync_data().map_err(|e| io_error(&path, &e))?;
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

    fn deleted_blocks(&self) -> Result<BTreeMap<LocalId, u64>, StoreError> {
        Ok(self.metadata.lock().deleted.clone())
    }

    fn deletion_recorded(&self, block: LocalId) -> Result<bool, StoreError> {
        Ok(self.metadata.lock().deleted.contains_key(&block))
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
        // Durable first, then visible: a failed commit leaves memory as the database is.
        let mut metadata = self.metadata.lock();
        self.db.commit(&batch)?;
        metadata.apply(batch);
        Ok(())
    }

    fn read_tree_file(&self) -> Result<Option<Vec<u8>>, StoreError> {
        read_capped(&self.tree_path(), MAX_TREE_FILE_BYTES)
    }

    fn write_tree_file(&self, bytes: &[u8]) -> Result<(), StoreError> {
        Self::replace_file(&self.tree_path(), bytes)
    }
}

/// Fsyncs the directory holding `path`, making a create, rename or unlink in it durable.
fn sync_parent(path: &Path) -> Result<(), StoreError> {
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    File::open(dir)
        .and_then(|dir| dir.sync_all())
        .map_err(|e| io_error(dir, &e))
}

/// The bytes of `path`, `None` if there is no such file; a file longer than `limit` bytes
/// is [`StoreError::FileTooLarge`], and nothing past the limit is read.
fn read_capped(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, StoreError> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(path, &e)),
    };
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(path, &e))?;
    if bytes.len() as u64 > limit {
        return Err(StoreError::FileTooLarge {
            what: path.display().to_string(),
            limit,
        });
    }
    Ok(Some(bytes))
}
