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
//! one transaction that is durable when [`ContainerStore::commit`] returns. Every file
//! operation and database batch goes through a [`fs::Filesystem`] ([`fs::OsFilesystem`]
//! unless [`DiskStore::open_on`] is given another), so a test can stop between any two.
//!
//! **The race (HDDS-16811)** needs the cached-handle semantics of file-per-block writes:
//! here they come from the operating system. A block file unlinked while its handle is
//! cached keeps receiving writes into the orphaned inode, and finishing the write (closing
//! the handle, then checking the path) reports the file missing; **the fix** relies on
//! exactly that check running before the commit.

use std::collections::BTreeMap;
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
pub mod fs;
mod recovery;
pub use super::store::Recovery;
use db::{ContainerDb, DatabaseRegistry};
use fs::{BlockFile, Filesystem, OsFilesystem};

const DB_FILE: &str = "container.db";

/// The largest tree file a replica reads.
pub const MAX_TREE_FILE_BYTES: u64 = 64 << 20;

/// A replica's storage in a directory.
#[derive(Debug)]
pub struct DiskStore {
    root: PathBuf,
    container: ContainerId,
    /// Every file operation goes through it.
    fs: Arc<dyn Filesystem>,
    /// The open-file cache of block files (`FilePerBlockStrategy`).
    handles: Mutex<BTreeMap<LocalId, Box<dyn BlockFile>>>,
    /// The database as last committed, in memory; [`ContainerDb`] is its durable copy.
    metadata: Mutex<Metadata>,
    db: ContainerDb,
    /// What the last recovery on open did.
    recovery: Mutex<Recovery>,
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
        Self::open_in(os(), root.into(), container, Some(state), None)
    }

    /// Opens the replica kept in `root`, which must hold its database: a directory without
    /// one is [`StoreError::NoDatabase`], not an empty replica.
    pub fn open_existing(
        root: impl Into<PathBuf>,
        container: ContainerId,
    ) -> Result<Self, StoreError> {
        Self::open_in(os(), root.into(), container, None, None)
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
        Self::open_in(os(), root.into(), container, state, Some(registry))
    }

    /// [`open`](Self::open) (with `state`) or [`open_existing`](Self::open_existing)
    /// (without), doing every file operation through `fs`.
    pub fn open_on(
        fs: Arc<dyn Filesystem>,
        root: impl Into<PathBuf>,
        container: ContainerId,
        state: Option<ContainerState>,
    ) -> Result<Self, StoreError> {
        Self::open_in(fs, root.into(), container, state, None)
    }

    fn open_in(
        fs: Arc<dyn Filesystem>,
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
                        fs.create_dir_all(&dir).map_err(|e| io_error(&dir, &e))?;
                        sync_parent(&*fs, &dir)?;
                    }
                }
                let created = ContainerDb::create(&path, container, state, registry)?;
                sync_parent(&*fs, &path)?;
                created
            }
            (false, None) => {
                return Err(StoreError::NoDatabase {
                    path: path.display().to_string(),
                });
            }
        };
        let store = Self {
            root,
            container,
            fs,
            handles: Mutex::new(BTreeMap::new()),
            metadata: Mutex::new(metadata),
            db,
            recovery: Mutex::new(Recovery::default()),
        };
        Ok(store)
    }

    /// What the last recovery on open did (nothing before one ran, or for a new replica).
    pub fn recovery(&self) -> Recovery {
        self.recovery.lock().clone()
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

    /// The path of the container's database file.
    pub fn database_path(&self) -> PathBuf {
        self.root.join("metadata").join(DB_FILE)
    }

    /// Writes `bytes` to `path` through a fsynced temporary file and a rename, then
    /// fsyncs the directory: once it returns, the new content survives a power loss.
    fn replace_file(&self, path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        self.fs
            .write_file(&tmp, bytes)
            .map_err(|e| io_error(&tmp, &e))?;
        self.fs.sync_file(&tmp).map_err(|e| io_error(&tmp, &e))?;
        self.fs.rename(&tmp, path).map_err(|e| io_error(path, &e))?;
        sync_parent(&*self.fs, path)
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
                self.fs
                    .open_block_file(&path)
                    .map_err(|e| io_error(&path, &e))?,
            ),
        };
        // The size of the open file, orphaned or not: what Ozone's offset check reads.
        let file_len = file.size().map_err(|e| io_error(&path, &e))?;
        if offset > file_len {
            return Err(StoreError::ChunkFileInconsistency {
                block,
                offset,
                file_len,
            });
        }
        file.write_at(data, offset).map_err(|e| io_error(&path, &e))
    }

    fn finish_write(&self, block: LocalId) -> Result<(), StoreError> {
        let path = self.block_path(block);
        // The data is made durable before the handle is closed (dropped) and before any
        // metadata naming it can commit; then the file's directory entry.
        let handle = self.handles.lock().remove(&block);
        if let Some(file) = handle {
            file.sync_data().map_err(|e| io_error(&path, &e))?;
        }
        match self.fs.len(&path) {
            Ok(Some(_)) => sync_parent(&*self.fs, &path),
            Ok(None) => Err(StoreError::ChunkFileNotFound { block }),
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
        self.fs
            .read_at(&path, offset, len)
            .map_err(|e| io_error(&path, &e))
    }

    fn block_file_len(&self, block: LocalId) -> Result<Option<u64>, StoreError> {
        let path = self.block_path(block);
        self.fs.len(&path).map_err(|e| io_error(&path, &e))
    }

    fn delete_block_file(&self, block: LocalId) -> Result<bool, StoreError> {
        let path = self.block_path(block);
        match self.fs.remove_file(&path) {
            Ok(()) => sync_parent(&*self.fs, &path).map(|()| true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
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
        let Some(current) = self.fs.len(&path).map_err(|e| io_error(&path, &e))? else {
            return Ok(());
        };
        if len < current {
            self.fs
                .truncate(&path, len)
                .map_err(|e| io_error(&path, &e))?;
            self.fs.sync_file(&path).map_err(|e| io_error(&path, &e))?;
        }
        Ok(())
    }

    fn block_files(&self) -> Result<Vec<LocalId>, StoreError> {
        let dir = self.root.join("chunks");
        let names = self.fs.list_dir(&dir).map_err(|e| io_error(&dir, &e))?;
        let mut blocks: Vec<LocalId> = names
            .iter()
            .filter_map(|name| {
                name.to_str()
                    .and_then(|n| n.strip_suffix(".block"))
                    .and_then(|n| n.parse().ok())
            })
            .collect();
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
        let bcsid = metadata.bcsid_after(&batch);
        self.fs
            .database_batch(&self.database_path(), &mut || self.db.commit(&batch, bcsid))?;
        metadata.apply(batch);
        Ok(())
    }

    fn read_tree_file(&self) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.tree_path();
        let bytes = self
            .fs
            .read_prefix(&path, MAX_TREE_FILE_BYTES.saturating_add(1))
            .map_err(|e| io_error(&path, &e))?;
        if bytes
            .as_ref()
            .is_some_and(|b| b.len() as u64 > MAX_TREE_FILE_BYTES)
        {
            return Err(StoreError::FileTooLarge {
                what: path.display().to_string(),
                limit: MAX_TREE_FILE_BYTES,
            });
        }
        Ok(bytes)
    }

    fn write_tree_file(&self, bytes: &[u8]) -> Result<(), StoreError> {
        self.replace_file(&self.tree_path(), bytes)
    }

    /// Recovery on open (`disk/recovery.rs`): this crate's, beyond upstream.
    fn recover_on_open(&self) -> Result<Recovery, StoreError> {
        let recovery = recovery::recover(self)?;
        *self.recovery.lock() = recovery.clone();
        Ok(recovery)
    }
}

/// The operating system's file system, as the trait object a store holds.
fn os() -> Arc<dyn Filesystem> {
    Arc::new(OsFilesystem)
}

/// Fsyncs the directory holding `path`, making a create, rename or unlink in it durable.
fn sync_parent(fs: &dyn Filesystem, path: &Path) -> Result<(), StoreError> {
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    fs.sync_dir(dir).map_err(|e| io_error(dir, &e))
}
