//! Whole replicas on a datanode: loading them from the volume when the datanode starts or
//! restarts (`ContainerReader`), creating or adding one, deleting one (`KeyValueHandler.deleteInternal`)
//! and importing one from a peer (`DownloadAndImportReplicator` with `ContainerImporter`).
//!
//! **Why it matters (HDDS-17268).** The harm of a stale SCM leader's command is done here:
//! a force delete removes a replica and its data. The fencing in
//! [`StateContext`](crate::datanode::state_context::StateContext) and the dispatcher decides
//! whether the delete runs; this module makes sure that when it runs, it removes the real
//! replica, durably, under the replica's write lock.
//!
//! An import is staged in the volume and published whole, and the replica is added to the
//! set only then: until it is complete it is not served to peers, reported, deleted or
//! loaded after a crash.

use std::collections::BTreeMap;

use super::error::{ContainerError, PeerError};
use super::handler::KeyValueHandler;
use super::reconcile::{self, BlockRepair, PeerDatanode};
use super::replica::KeyValueContainer;
use super::store::ContainerStore;
use super::volume::{ContainerVolume, VolumeError};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, DatanodeId};
use crate::sync::Arc;

impl KeyValueHandler {
    /// Forgets every replica in memory and loads them again from the volume, as a
    /// restarted datanode does. A replica that does not load is left out and recorded in
    /// [`load_failures`](Self::load_failures) (`ContainerReader` logs and skips it); only a
    /// volume that cannot be listed fails the restart, and then nothing changes. Call it with
    /// no operation in flight (the datanode's threads stopped).
    pub fn restart(&self) -> Result<(), ContainerError> {
        let ids = self.volume.containers()?;
        let mut loaded = BTreeMap::new();
        let mut failures = Vec::new();
        for id in ids {
            let replica = self
                .volume
                .open(id)
                .map_err(ContainerError::from)
                .and_then(|store| KeyValueContainer::load(self.datanode, id, self.config, store));
            match replica {
                Ok(replica) => {
                    loaded.insert(id, Arc::new(replica));
                }
                Err(error) => failures.push((id, error)),
            }
        }
        self.containers.write(|containers| *containers = loaded);
        *self.load_failures.lock() = failures;
        self.scanner().clear();
        Ok(())
    }

    /// The replicas the last (re)start found in the volume but could not load, with why.
    pub fn load_failures(&self) -> Vec<(ContainerId, ContainerError)> {
        self.load_failures.lock().clone()
    }

    /// `KeyValueHandler.handleCreateContainer` (a client's first write to a container): a
    /// new, empty OPEN replica of `id`, staged in the volume and published whole (a crash
    /// leaves none or an empty one), loaded and added. The client's writes then go to its
    /// store. A replica already here is [`ContainerError::ContainerExists`].
    pub fn create_container(
        &self,
        id: ContainerId,
    ) -> Result<Arc<KeyValueContainer>, ContainerError> {
        let container = self.add_new(id, |volume| {
            volume.stage(id, ContainerState::Open)?;
            volume.publish(id)
        })?;
        crate::events::debug!(node = %self.datanode, container = id.0, "container created");
        Ok(container)
    }

    /// Keeps `store` in the volume as the replica of `id`, loads it and adds it. A replica
    /// already here is [`ContainerError::ContainerExists`]; a volume that keeps replicas
    /// only in its own directories refuses a storage made elsewhere.
    pub fn add_container(
        &self,
        id: ContainerId,
        store: Arc<dyn ContainerStore>,
    ) -> Result<Arc<KeyValueContainer>, ContainerError> {
        self.add_new(id, |volume| {
            volume.adopt(id, Arc::clone(&store))?;
            Ok(store)
        })
    }

    /// Under the creation lock (`containerCreationLock`): refuses an `id` already here,
    /// lists its storage in the volume with `list`, loads it and adds it. A replica that
    /// does not load is taken out of the volume again.
    fn add_new(
        &self,
        id: ContainerId,
        list: impl FnOnce(&dyn ContainerVolume) -> Result<Arc<dyn ContainerStore>, VolumeError>,
    ) -> Result<Arc<KeyValueContainer>, ContainerError> {
        let _creation = self.creation.lock();
        if self
            .containers
            .read(|containers| containers.contains_key(&id))
        {
            return Err(ContainerError::ContainerExists { container: id });
        }
        let store = list(self.volume.as_ref())?;
        let container = match KeyValueContainer::load(self.datanode, id, self.config, store) {
            Ok(container) => Arc::new(container),
            Err(error) => {
                // Nothing was added: the volume must not list what the set does not hold.
                self.volume.remove(id)?;
                return Err(error);
            }
        };
        self.containers
            .write(|containers| containers.insert(id, Arc::clone(&container)));
        Ok(container)
    }

    /// `KeyValueHandler.deleteInternal`: under the replica's write lock, refuses (unless
    /// `force`) an OPEN replica or one with blocks, removes its storage from the volume,
    /// marks it DELETED and takes it out of the set. A replica a concurrent delete removed
    /// first is [`ContainerError::UnknownContainer`].
    pub(super) fn delete_replica(
        &self,
        id: ContainerId,
        force: bool,
    ) -> Result<(), ContainerError> {
        let container = self.container(id)?;
        let write = container.write_lock();
        let state = container.state();
        if state == ContainerState::Deleted {
            return Err(ContainerError::UnknownContainer { container: id });
        }
        if !force {
            if state == ContainerState::Open {
                return Err(ContainerError::DeleteOnOpenContainer { container: id });
            }
            let blocks = container
                .store()
                .summary()
                .map_err(ContainerError::store(id))?
                .block_count;
            if blocks > 0 {
                return Err(ContainerError::DeleteOnNonEmptyContainer {
                    container: id,
                    blocks,
                });
            }
        }
        // Durable first: a failed removal leaves the replica as it was.
        self.volume.remove(id)?;
        container.mark_deleted(&write);
        self.containers.write(|containers| containers.remove(&id));
        Ok(())
    }

    /// The peers named by `ids` that the peer directory reaches, in order. An error when a
    /// non-empty list resolves to nothing: no directory, or no route to any of them.
    pub(super) fn resolve_peers(
        &self,
        ids: &[DatanodeId],
    ) -> Result<Vec<Arc<dyn PeerDatanode>>, ContainerError> {
        let Some(first) = ids.first().copied() else {
            return Ok(Vec::new());
        };
        let Some(directory) = &self.peers else {
            return Err(ContainerError::NoPeerDirectory { peer: first });
        };
        let resolved: Vec<_> = ids.iter().filter_map(|id| directory.peer(*id)).collect();
        if resolved.is_empty() {
            return Err(ContainerError::Peer(PeerError::Unreachable {
                peer: first,
                reason: "no route to the peer from this datanode".into(),
            }));
        }
        Ok(resolved)
    }

    /// Replication (`DownloadAndImportReplicator`, simplified): imports the replica from
    /// the first of `sources` that holds a closed one ([`import_from`](Self::import_from)).
    pub(super) fn import_replica(
        &self,
        id: ContainerId,
        sources: &[DatanodeId],
    ) -> Result<(), ContainerError> {
        if self
            .containers
            .read(|containers| containers.contains_key(&id))
        {
            return Err(ContainerError::ContainerExists { container: id });
        }
        let source = self
            .resolve_peers(sources)?
            .into_iter()
            .find(
                |peer| matches!(peer.container_state(id), Ok(state) if state.is_closed_for_data()),
            )
            .ok_or_else(|| ContainerError::NoReplicationSource {
                container: id,
                sources: sources.to_vec(),
            })?;
        self.import_from(id, source)
    }

    /// Imports `source`'s replica of `id` (`ContainerImporter`): stages a replica in the
    /// source's state, fills it by reconciling with the source, publishes it, and only then
    /// adds it to the set. On failure the staged replica is dropped and nothing is left
    /// behind; a replica of `id` already here or being imported is refused.
    pub fn import_from(
        &self,
        id: ContainerId,
        source: Arc<dyn PeerDatanode>,
    ) -> Result<(), ContainerError> {
        if self
            .containers
            .read(|containers| containers.contains_key(&id))
        {
            return Err(ContainerError::ContainerExists { container: id });
        }
        let state = source.container_state(id)?;
        if !state.is_closed_for_data() {
            return Err(ContainerError::InvalidState {
                container: id,
                state,
                operation: "replicating an unclosed replica",
            });
        }
        let staged = self.volume.stage(id, state)?;
        if let Err(error) = self.fill_staged(id, staged, &source) {
            // Best effort: the import failed either way, and that is the error to report.
            let _ = self.volume.discard(id);
            return Err(error);
        }
        let store = self.volume.publish(id)?;
        match KeyValueContainer::load(self.datanode, id, self.config, store) {
            Ok(replica) => {
                self.containers
                    .write(|containers| containers.insert(id, Arc::new(replica)));
                Ok(())
            }
            Err(error) => {
                // The volume must not list what the set does not hold; the load's error
                // is the one to report.
                let _ = self.volume.remove(id);
                Err(error)
            }
        }
    }

    /// Pulls every block of `source`'s replica into the staged storage; any block that
    /// fails fails the import.
    fn fill_staged(
        &self,
        id: ContainerId,
        staged: Arc<dyn ContainerStore>,
        source: &Arc<dyn PeerDatanode>,
    ) -> Result<(), ContainerError> {
        let replica = Arc::new(KeyValueContainer::load(
            self.datanode,
            id,
            self.config,
            staged,
        )?);
        let report = reconcile::reconcile_container(&replica, std::slice::from_ref(source))?;
        if let Some((_, error)) = report.peer_failures.into_iter().next() {
            return Err(error);
        }
        let failed = report
            .rounds
            .into_iter()
            .flat_map(|round| round.blocks.into_values())
            .find_map(|outcome| match outcome {
                BlockRepair::Failed(error) => Some(error),
                _ => None,
            });
        failed.map_or(Ok(()), Err)
    }
}
