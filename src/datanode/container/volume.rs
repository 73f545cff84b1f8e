//! Where a datanode keeps its container replicas (`MutableVolumeSet`, with the
//! `ContainerReader` that lists them on startup and the `ContainerImporter` that brings a
//! replica in): one storage per replica, listed when the datanode (re)starts, staged and
//! published by replication, removed by a container deletion.
//!
//! Two steps are atomic, as a replica's life needs them to be:
//! - an import fills a *staged* replica that nothing lists, and publishes it whole, so a
//!   half-copied replica is never served, reported or loaded after a crash (Ozone unpacks
//!   into a temporary directory and moves it in place);
//! - a removal first moves the replica out of the listing (a rename to a tombstone in
//!   Ozone's `tmp/deleted-containers`), then frees it, so a crash half-way never brings a
//!   deleted replica back.
//!
//! [`MemoryVolume`] holds any storages in memory, for the checkers and for tests;
//! [`DiskVolume`] holds one directory per replica, each a [`DiskStore`].

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io::ErrorKind;
use std::path::PathBuf;

use super::disk::db::DatabaseRegistry;
use super::disk::{DiskStore, io_error};
use super::store::{ContainerStore, MemoryStore, StoreError};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::ContainerId;
use crate::sync::{Arc, Mutex, arc_from_box};

/// What a volume refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VolumeError {
    /// A replica of the container is already in the volume, or being imported.
    #[error("container {container}: a replica is already in the volume or being imported")]
    Exists {
        /// The container.
        container: ContainerId,
    },
    /// No replica of the container is staged for import.
    #[error("container {container}: no replica staged for import")]
    NotStaged {
        /// The container.
        container: ContainerId,
    },
    /// A disk volume keeps replicas only in its own directories.
    #[error("container {container}: this volume cannot adopt a storage it did not create")]
    CannotAdopt {
        /// The container.
        container: ContainerId,
    },
    /// A replica's storage failed.
    #[error("container {container}: {source}")]
    Store {
        /// The container.
        container: ContainerId,
        /// The failure.
        #[source]
        source: StoreError,
    },
    /// The volume itself failed (listing its directory, a rename).
    #[error("volume: {source}")]
    Io {
        /// The failure.
        #[source]
        source: StoreError,
    },
}

/// The replicas of one datanode, as storages.
pub trait ContainerVolume: Send + Sync + fmt::Debug {
    /// The replicas kept here, in id order (what `ContainerReader` finds on startup).
    fn containers(&self) -> Result<Vec<ContainerId>, VolumeError>;
    /// The storage of a listed replica.
    fn open(&self, container: ContainerId) -> Result<Arc<dyn ContainerStore>, VolumeError>;
    /// Keeps `store`, created elsewhere, as the replica of `container`.
    fn adopt(
        &self,
        container: ContainerId,
        store: Arc<dyn ContainerStore>,
    ) -> Result<(), VolumeError>;
    /// Creates the storage of a replica to import, in `state`, unlisted until
    /// [`publish`](Self::publish); refused while a replica of `container` is here or staged.
    fn stage(
        &self,
        container: ContainerId,
        state: ContainerState,
    ) -> Result<Arc<dyn ContainerStore>, VolumeError>;
    /// Lists a staged replica, atomically, and returns its storage at its final place.
    fn publish(&self, container: ContainerId) -> Result<Arc<dyn ContainerStore>, VolumeError>;
    /// Drops a staged replica; a no-op if none is staged.
    fn discard(&self, container: ContainerId) -> Result<(), VolumeError>;
    /// Removes a replica for good: first out of the listing, then its data; a no-op if
    /// it is not here.
    fn remove(&self, container: ContainerId) -> Result<(), VolumeError>;
}

#[derive(Debug, Default)]
struct MemoryReplicas {
    listed: BTreeMap<ContainerId, Arc<dyn ContainerStore>>,
    staged: BTreeMap<ContainerId, Arc<dyn ContainerStore>>,
}

/// Replicas in memory: any storages. Clones are handles to the same volume: hand one to
/// the datanode and inspect it through another; what is here survives a datanode restart.
#[derive(Debug, Clone, Default)]
pub struct MemoryVolume {
    replicas: Arc<Mutex<MemoryReplicas>>,
}

impl MemoryVolume {
    /// An empty volume.
    pub fn new() -> Self {
        Self::default()
    }

    /// A handle to this volume as the `Arc<dyn ContainerVolume>` a datanode takes.
    pub fn shared(&self) -> Arc<dyn ContainerVolume> {
        arc_from_box(Box::new(self.clone()) as Box<dyn ContainerVolume>)
    }

    /// Keeps `store` as the replica of `container` (a replica written before the datanode
    /// started); refused if one exists.
    pub fn insert(&self, container: ContainerId, store: MemoryStore) -> Result<(), VolumeError> {
        self.adopt(container, store.shared())
    }

    /// The storage of `container`, if a replica of it is listed here.
    pub fn store(&self, container: ContainerId) -> Option<Arc<dyn ContainerStore>> {
        self.replicas.lock().listed.get(&container).cloned()
    }
}

impl ContainerVolume for MemoryVolume {
    fn containers(&self) -> Result<Vec<ContainerId>, VolumeError> {
        Ok(self.replicas.lock().listed.keys().copied().collect())
    }

    fn open(&self, container: ContainerId) -> Result<Arc<dyn ContainerStore>, VolumeError> {
        self.store(container).ok_or(VolumeError::Store {
            container,
            source: StoreError::NoDatabase {
                path: format!("memory volume, container {container}"),
            },
        })
    }

    fn adopt(
        &self,
        container: ContainerId,
        store: Arc<dyn ContainerStore>,
    ) -> Result<(), VolumeError> {
        let mut replicas = self.replicas.lock();
        if replicas.listed.contains_key(&container) || replicas.staged.contains_key(&container) {
            return Err(VolumeError::Exists { container });
        }
        replicas.listed.insert(container, store);
        Ok(())
    }

    fn stage(
        &self,
        container: ContainerId,
        state: ContainerState,
    ) -> Result<Arc<dyn ContainerStore>, VolumeError> {
        let mut replicas = self.replicas.lock();
        if replicas.listed.contains_key(&container) || replicas.staged.contains_key(&container) {
            return Err(VolumeError::Exists { container });
        }
        let store = MemoryStore::new(state).shared();
        replicas.staged.insert(container, Arc::clone(&store));
        Ok(store)
    }

    fn publish(&self, container: ContainerId) -> Result<Arc<dyn ContainerStore>, VolumeError> {
        let mut replicas = self.replicas.lock();
        if replicas.listed.contains_key(&container) {
            return Err(VolumeError::Exists { container });
        }
        let store = replicas
            .staged
            .remove(&container)
            .ok_or(VolumeError::NotStaged { container })?;
        replicas.listed.insert(container, Arc::clone(&store));
        Ok(store)
    }

    fn discard(&self, container: ContainerId) -> Result<(), VolumeError> {
        self.replicas.lock().staged.remove(&container);
        Ok(())
    }

    fn remove(&self, container: ContainerId) -> Result<(), VolumeError> {
        self.replicas.lock().listed.remove(&container);
        Ok(())
    }
}

/// Replicas on disk: the replica of container `c` lives in the directory `<root>/<c>`; an
/// import is staged in `<root>/.staging-<c>`, a removal passes through
/// `<root>/.deleted-<c>`. Opening the volume (the datanode's start) clears what a crash
/// left of either.
#[derive(Debug, Clone)]
pub struct DiskVolume {
    root: PathBuf,
    /// Orders the volume's own check-then-act steps (is a replica here? then create,
    /// rename): one datanode process owns a volume.
    changes: Arc<Mutex<()>>,
    /// The replicas' open databases, shared by every store of a replica.
    databases: DatabaseRegistry,
}

const STAGING_PREFIX: &str = ".staging-";
const DELETED_PREFIX: &str = ".deleted-";

impl DiskVolume {
    /// The volume rooted at `root`, created if missing. What a crash left of an import or
    /// a removal is cleared: no import or removal of this volume is in flight yet.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, VolumeError> {
        let root = root.into();
        fs::create_dir_all(&root).map_err(|e| Self::io(&root, &e))?;
        let volume = Self {
            root,
            changes: Arc::new(Mutex::new(())),
            databases: DatabaseRegistry::new(),
        };
        volume.clear_leftovers()?;
        Ok(volume)
    }

    /// Removes the staging directories and tombstones a crash left behind.
    fn clear_leftovers(&self) -> Result<(), VolumeError> {
        let entries = fs::read_dir(&self.root).map_err(|e| Self::io(&self.root, &e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Self::io(&self.root, &e))?;
            if Self::is_leftover(&entry.file_name()) {
                self.clear(&entry.path())?;
            }
        }
        Ok(())
    }

    fn is_leftover(name: &std::ffi::OsStr) -> bool {
        name.to_str()
            .is_some_and(|n| n.starts_with(STAGING_PREFIX) || n.starts_with(DELETED_PREFIX))
    }

    /// A handle to this volume as the `Arc<dyn ContainerVolume>` a datanode takes.
    pub fn shared(&self) -> Arc<dyn ContainerVolume> {
        arc_from_box(Box::new(self.clone()) as Box<dyn ContainerVolume>)
    }

    /// The directory of `container`'s replica.
    pub fn container_dir(&self, container: ContainerId) -> PathBuf {
        self.root.join(container.0.to_string())
    }

    fn staging_dir(&self, container: ContainerId) -> PathBuf {
        self.root.join(format!("{STAGING_PREFIX}{}", container.0))
    }

    fn tombstone(&self, container: ContainerId) -> PathBuf {
        self.root.join(format!("{DELETED_PREFIX}{}", container.0))
    }

    fn io(path: &std::path::Path, error: &std::io::Error) -> VolumeError {
        VolumeError::Io {
            source: io_error(path, error),
        }
    }

    /// Removes a staging directory or a tombstone, and all below it.
    fn clear(&self, path: &std::path::Path) -> Result<(), VolumeError> {
        match fs::remove_dir_all(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Self::io(path, &e)),
        }
    }
}

impl ContainerVolume for DiskVolume {
    fn containers(&self) -> Result<Vec<ContainerId>, VolumeError> {
        let _changes = self.changes.lock();
        let entries = fs::read_dir(&self.root).map_err(|e| Self::io(&self.root, &e))?;
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Self::io(&self.root, &e))?;
            let name = entry.file_name();
            // Staging directories, tombstones and stray files are not listed replicas.
            if let (true, Some(Ok(id))) = (entry.path().is_dir(), name.to_str().map(str::parse)) {
                ids.push(ContainerId(id));
            }
        }
        ids.sort();
        Ok(ids)
    }

    fn open(&self, container: ContainerId) -> Result<Arc<dyn ContainerStore>, VolumeError> {
        DiskStore::open_registered(
            self.container_dir(container),
            container,
            None,
            &self.databases,
        )
        .map(DiskStore::shared)
        .map_err(|source| VolumeError::Store { container, source })
    }

    fn adopt(
        &self,
        container: ContainerId,
        _store: Arc<dyn ContainerStore>,
    ) -> Result<(), VolumeError> {
        Err(VolumeError::CannotAdopt { container })
    }

    fn stage(
        &self,
        container: ContainerId,
        state: ContainerState,
    ) -> Result<Arc<dyn ContainerStore>, VolumeError> {
        let _changes = self.changes.lock();
        let staging = self.staging_dir(container);
        if self.container_dir(container).exists() {
            return Err(VolumeError::Exists { container });
        }
        match fs::create_dir(&staging) {
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                return Err(VolumeError::Exists { container });
            }
            Err(e) => return Err(Self::io(&staging, &e)),
            Ok(()) => {}
        }
        DiskStore::open_registered(staging, container, Some(state), &self.databases)
            .map(DiskStore::shared)
            .map_err(|source| VolumeError::Store { container, source })
    }

    fn publish(&self, container: ContainerId) -> Result<Arc<dyn ContainerStore>, VolumeError> {
        let changes = self.changes.lock();
        let (staging, dir) = (self.staging_dir(container), self.container_dir(container));
        if dir.exists() {
            return Err(VolumeError::Exists { container });
        }
        if !staging.is_dir() {
            return Err(VolumeError::NotStaged { container });
        }
        fs::rename(&staging, &dir).map_err(|e| Self::io(&dir, &e))?;
        drop(changes);
        self.open(container)
    }

    fn discard(&self, container: ContainerId) -> Result<(), VolumeError> {
        let _changes = self.changes.lock();
        self.databases.forget(container);
        self.clear(&self.staging_dir(container))
    }

    fn remove(&self, container: ContainerId) -> Result<(), VolumeError> {
        let _changes = self.changes.lock();
        let (dir, tombstone) = (self.container_dir(container), self.tombstone(container));
        match fs::rename(&dir, &tombstone) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Self::io(&dir, &e)),
        }
        // The replica is out of the listing: a crash from here on leaves a tombstone that
        // the next listing clears.
        self.databases.forget(container);
        self.clear(&tombstone)
    }
}
