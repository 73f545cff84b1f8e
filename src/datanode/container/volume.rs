//! Where a datanode keeps its container replicas (`MutableVolumeSet` with the
//! `ContainerReader` that finds them on startup): one storage per replica, listed when the
//! datanode (re)starts, created by replication, removed by a container deletion.
//!
//! [`MemoryVolume`] holds [`MemoryStore`]s for the checkers; [`DiskVolume`] holds one
//! directory per replica, each a [`DiskStore`].

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::disk::DiskStore;
use super::store::{ContainerStore, MemoryStore, StoreError};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::ContainerId;
use crate::sync::{Arc, Mutex, arc_from_box};

/// A replica found in a volume: its container and its storage.
pub type StoredReplica = (ContainerId, Arc<dyn ContainerStore>);

/// The replicas of one datanode, as storages.
pub trait ContainerVolume: Send + Sync + fmt::Debug {
    /// Every replica kept here, in id order (what `ContainerReader` finds on startup).
    fn containers(&self) -> Result<Vec<StoredReplica>, StoreError>;
    /// Creates the storage of a new replica in `state`; refused if one exists.
    fn create(
        &self,
        container: ContainerId,
        state: ContainerState,
    ) -> Result<Arc<dyn ContainerStore>, StoreError>;
    /// Removes a replica's storage for good; removing one that is not here is a no-op.
    fn remove(&self, container: ContainerId) -> Result<(), StoreError>;
}

fn exists_error(container: ContainerId) -> StoreError {
    StoreError::Io {
        what: format!("container {container}"),
        reason: "a replica's storage already exists".into(),
    }
}

/// Replicas in memory. Clones are handles to the same volume: hand one to the datanode
/// and inspect its stores through another; what is here survives a datanode restart.
#[derive(Debug, Clone, Default)]
pub struct MemoryVolume {
    stores: Arc<Mutex<BTreeMap<ContainerId, MemoryStore>>>,
}

impl MemoryVolume {
    /// An empty volume.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps `store` as the replica of `container` (a replica written before the datanode
    /// started); refused if one exists.
    pub fn insert(&self, container: ContainerId, store: MemoryStore) -> Result<(), StoreError> {
        let mut stores = self.stores.lock();
        if stores.contains_key(&container) {
            return Err(exists_error(container));
        }
        stores.insert(container, store);
        Ok(())
    }

    /// A handle to this volume as the `Arc<dyn ContainerVolume>` a datanode takes.
    pub fn shared(&self) -> Arc<dyn ContainerVolume> {
        arc_from_box(Box::new(self.clone()) as Box<dyn ContainerVolume>)
    }

    /// A handle to the store of `container`, if it is here.
    pub fn store(&self, container: ContainerId) -> Option<MemoryStore> {
        self.stores.lock().get(&container).cloned()
    }
}

impl ContainerVolume for MemoryVolume {
    fn containers(&self) -> Result<Vec<StoredReplica>, StoreError> {
        Ok(self
            .stores
            .lock()
            .iter()
            .map(|(id, store)| (*id, store.shared()))
            .collect())
    }

    fn create(
        &self,
        container: ContainerId,
        state: ContainerState,
    ) -> Result<Arc<dyn ContainerStore>, StoreError> {
        let store = MemoryStore::new(state);
        self.insert(container, store.clone())?;
        Ok(store.shared())
    }

    fn remove(&self, container: ContainerId) -> Result<(), StoreError> {
        self.stores.lock().remove(&container);
        Ok(())
    }
}

/// Replicas on disk: the replica of container `c` lives in the directory `<root>/<c>`.
#[derive(Debug, Clone)]
pub struct DiskVolume {
    root: PathBuf,
}

impl DiskVolume {
    /// The volume rooted at `root`, created if missing.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let root = root.into();
        fs::create_dir_all(&root).map_err(|e| io_error(&root, &e))?;
        Ok(Self { root })
    }

    /// A handle to this volume as the `Arc<dyn ContainerVolume>` a datanode takes.
    pub fn shared(&self) -> Arc<dyn ContainerVolume> {
        arc_from_box(Box::new(self.clone()) as Box<dyn ContainerVolume>)
    }

    /// The directory of `container`'s replica.
    pub fn container_dir(&self, container: ContainerId) -> PathBuf {
        self.root.join(container.0.to_string())
    }
}

fn io_error(path: &Path, error: &std::io::Error) -> StoreError {
    StoreError::Io {
        what: path.display().to_string(),
        reason: error.to_string(),
    }
}

impl ContainerVolume for DiskVolume {
    fn containers(&self) -> Result<Vec<StoredReplica>, StoreError> {
        let entries = fs::read_dir(&self.root).map_err(|e| io_error(&self.root, &e))?;
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| io_error(&self.root, &e))?;
            // Anything that is not a container directory (a temporary file) is not ours.
            if let Some(id) = entry.file_name().to_str().and_then(|n| n.parse().ok()) {
                ids.push(ContainerId(id));
            }
        }
        ids.sort();
        ids.into_iter()
            .map(|id| {
                // The state is only used when the directory holds no replica.
                let store = DiskStore::open(self.container_dir(id), id, ContainerState::Invalid)?;
                Ok((id, store.shared()))
            })
            .collect()
    }

    fn create(
        &self,
        container: ContainerId,
        state: ContainerState,
    ) -> Result<Arc<dyn ContainerStore>, StoreError> {
        let dir = self.container_dir(container);
        if dir.exists() {
            return Err(exists_error(container));
        }
        Ok(DiskStore::open(dir, container, state)?.shared())
    }

    fn remove(&self, container: ContainerId) -> Result<(), StoreError> {
        let dir = self.container_dir(container);
        match fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_error(&dir, &e)),
        }
    }
}
