//! One container replica (`KeyValueContainer` with its `ContainerData`), which owns its
//! checksum tree file through a [`ContainerChecksumTreeManager`].
//!
//! **The race (HDDS-16811, HDDS-16808).** Reconciliation committed block metadata with no
//! container lock while the block deleting service deleted under the write lock, and the
//! deleting service's tree write left the data checksum in memory and on disk stale.
//! **The fix**: the commit of a repaired block runs under the read lock ([`KeyValueContainer::read_lock`])
//! after a check of the tree; every tree write, the deleting service's included, refreshes
//! the data checksum in memory and in the database from the new root.
//!
//! Beyond the seed's patch, each behind its [`ContainerConfig`] switch: the manager counts
//! its writes (a generation) and keeps the parsed tree of the last write or read, so the
//! per-block commit check re-reads the tree file only when the generation moved
//! (`tree_generation_check`); and the refresh of the data checksum runs inside the tree
//! write's critical section (`refresh_checksum_in_tree_write`): in Ozone's order (compare
//! and set after the write) two concurrent tree writes can leave the in-memory and
//! persisted value on the older root, which loom and shuttle find
//! (`data_checksum_follows_concurrent_tree_writes`).

pub use super::checksum_tree::{ContainerChecksumTreeManager, TreeWriter};

use super::checksum_tree::ChecksumText;
use super::config::ContainerConfig;
use super::error::ContainerError;
use super::merkle::{ContainerChecksumInfo, ContainerMerkleTree};
use super::store::{BlockData, ContainerStore, MetadataBatch};
use crate::hdds::container::{ContainerReplicaReport, ContainerState};
use crate::hdds::ids::{ContainerId, DatanodeId, LocalId};
use crate::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crate::sync::{Arc, RwCell, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// In-memory container data (`ContainerData`).
/// `ContainerData`'s fields that change while the replica serves, each on its own as in
/// Ozone: the state behind synchronized accessors (here one sequentially consistent
/// atomic, written only under the container write lock), the data checksum and the
/// empty flag as plain fields (a cell and an atomic). Reads take no lock, so a checker
/// sees that two threads reading them do not conflict.
#[derive(Debug)]
struct ContainerData {
    state: AtomicUsize,
    data_checksum: RwCell<Option<u64>>,
    empty: AtomicBool,
}

/// Every state, indexed by the code [`ContainerData::state`] holds.
const STATES: [ContainerState; 8] = [
    ContainerState::Open,
    ContainerState::Closing,
    ContainerState::QuasiClosed,
    ContainerState::Closed,
    ContainerState::Unhealthy,
    ContainerState::Invalid,
    ContainerState::Deleted,
    ContainerState::Recovering,
];

impl ContainerData {
    fn new(state: ContainerState, data_checksum: Option<u64>, empty: bool) -> Self {
        Self {
            state: AtomicUsize::new(Self::code(state)),
            data_checksum: RwCell::new(data_checksum),
            empty: AtomicBool::new(empty),
        }
    }

    fn code(state: ContainerState) -> usize {
        STATES
            .iter()
            .position(|s| *s == state)
            .unwrap_or_else(|| unreachable!("STATES lists every state"))
    }

    fn state(&self) -> ContainerState {
        STATES[self.state.load(Ordering::SeqCst)]
    }

    fn set_state(&self, state: ContainerState) {
        self.state.store(Self::code(state), Ordering::SeqCst);
    }
}

/// One container replica on a datanode (`KeyValueContainer`).
#[derive(Debug)]
pub struct KeyValueContainer {
    datanode: DatanodeId,
    id: ContainerId,
    config: ContainerConfig,
    /// The container lock (`ReentrantReadWriteLock`): guards no data itself, it orders
    /// the block deleting service (write), delete-transaction storage (write), state
    /// transitions (write) and the patched reconciliation commit (read).
    lock: RwLock<()>,
    data: ContainerData,
    store: Arc<dyn ContainerStore>,
    checksums: ContainerChecksumTreeManager,
}

impl KeyValueContainer {
    /// Loads `datanode`'s replica of `id` from `store`. A replica that is not OPEN and has
    /// no block metadata is marked empty on load, as Ozone's container loading does
    /// (`KeyValueContainerData.markAsEmpty`).
    pub fn load(
        datanode: DatanodeId,
        id: ContainerId,
        config: ContainerConfig,
        store: Arc<dyn ContainerStore>,
    ) -> Result<Self, ContainerError> {
        if config.recover_on_open {
            store.recover_on_open().map_err(ContainerError::store(id))?;
        }
        let summary = store.summary().map_err(ContainerError::store(id))?;
        let checksums = ContainerChecksumTreeManager::new(
            datanode,
            id,
            Arc::clone(&store),
            [
                config.tree_generation_check,
                config.refreshes_in_tree_write(),
                config.records_deletions_in_database(),
            ],
        );
        Ok(Self {
            datanode,
            id,
            config,
            lock: RwLock::new(()),
            data: ContainerData::new(
                summary.state,
                summary.data_checksum,
                summary.state != ContainerState::Open && summary.block_count == 0,
            ),
            store,
            checksums,
        })
    }

    /// Its id.
    pub fn id(&self) -> ContainerId {
        self.id
    }

    /// The datanode it is on (the `node` of its events).
    pub fn datanode(&self) -> DatanodeId {
        self.datanode
    }

    /// Its configuration.
    pub fn config(&self) -> &ContainerConfig {
        &self.config
    }

    /// Its storage.
    pub fn store(&self) -> &Arc<dyn ContainerStore> {
        &self.store
    }

    /// Its tree file.
    pub fn checksums(&self) -> &ContainerChecksumTreeManager {
        &self.checksums
    }

    /// Takes the container read lock.
    pub fn read_lock(&self) -> RwLockReadGuard<'_, ()> {
        self.lock.read()
    }

    /// Takes the container write lock.
    pub fn write_lock(&self) -> RwLockWriteGuard<'_, ()> {
        self.lock.write()
    }

    /// Its state.
    pub fn state(&self) -> ContainerState {
        self.data.state()
    }

    /// The data checksum in memory; `None` until a tree with a root was written.
    pub fn data_checksum(&self) -> Option<u64> {
        self.data.data_checksum.read(|checksum| *checksum)
    }

    /// The data checksum as reported to SCM (unset is 0).
    pub fn reported_data_checksum(&self) -> u64 {
        self.data_checksum().unwrap_or(0)
    }

    /// Whether the replica was marked empty (sticky).
    pub fn is_empty(&self) -> bool {
        self.data.empty.load(Ordering::SeqCst)
    }

    /// Marks the replica empty (`KeyValueContainerData.markAsEmpty`); the flag is never
    /// cleared: SCM deletes a container once every replica reports it empty.
    pub(super) fn mark_empty(&self) {
        let was_empty = self.data.empty.swap(true, Ordering::SeqCst);
        if !was_empty {
            crate::events::debug!(node = %self.datanode, container = self.id.0, "container marked empty");
        }
    }

    /// `markContainerForDelete`: the replica is DELETED in memory from now on; its storage
    /// is about to be removed, so nothing is persisted. The caller holds the write lock.
    pub(super) fn mark_deleted(&self, _write: &RwLockWriteGuard<'_, ()>) {
        self.data.set_state(ContainerState::Deleted);
    }

    /// The replica's entry in a container report. Its origin is this datanode: a replica
    /// copied here by replication reports this datanode too (Ozone keeps the source's).
    pub fn report(&self) -> Result<ContainerReplicaReport, ContainerError> {
        // One read of the store: the summary has the counts a report needs.
        let summary = self.storage(self.store.summary())?;
        Ok(ContainerReplicaReport {
            container: self.id,
            state: self.state(),
            block_count: summary.block_count,
            used_bytes: summary.used_bytes,
            data_checksum: self.reported_data_checksum(),
            sequence_id: summary.bcsid,
            origin: self.datanode,
            is_empty: self.is_empty(),
        })
    }

    /// Feeds `state` everything of the replica that decides what it does next: its report
    /// (state, counts, data checksum, sequence id, empty flag), the checksum in memory,
    /// its blocks' metadata, its block files and their lengths, the deletions its database
    /// records, its pending transactions and its tree file.
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) -> Result<(), ContainerError> {
        use std::hash::Hash;
        self.report()?.hash(state);
        self.data_checksum().hash(state);
        let store = &self.store;
        self.storage(store.blocks())?.hash(state);
        for block in self.storage(store.block_files())? {
            (block, self.storage(store.block_file_len(block))?).hash(state);
        }
        self.storage(store.deleted_blocks())?.hash(state);
        self.storage(store.pending_transactions(usize::MAX))?
            .hash(state);
        self.storage(store.read_tree_file())?.hash(state);
        Ok(())
    }

    fn storage<T>(&self, result: Result<T, super::store::StoreError>) -> Result<T, ContainerError> {
        result.map_err(ContainerError::store(self.id))
    }

    fn invalid_state(&self, state: ContainerState, operation: &'static str) -> ContainerError {
        ContainerError::InvalidState {
            container: self.id,
            state,
            operation,
        }
    }

    /// Moves to `to` under the write lock, persisting the state. Allowed (the moves of
    /// `KeyValueHandler`'s close, quasi-close and mark-unhealthy paths):
    /// OPEN/RECOVERING → CLOSING; CLOSING/QUASI_CLOSED → QUASI_CLOSED; CLOSING/QUASI_CLOSED/
    /// CLOSED → CLOSED (UNHEALTHY refused); anything but DELETED → UNHEALTHY. Nothing
    /// leaves DELETED: a deleted replica's storage is gone. A replica left without a data
    /// checksum by a close or an unhealthy marking gets its tree built from metadata.
    pub fn transition(&self, to: ContainerState) -> Result<(), ContainerError> {
        let changed = {
            let write = self.write_lock();
            self.transition_locked(&write, to)?
        };
        self.after_transition(changed, to)
    }

    /// `CloseContainerCommandHandler` on this replica, decided under the write lock: an
    /// OPEN or RECOVERING replica is first marked CLOSING (`markContainerForClose`); a
    /// CLOSING one then closes through its write pipeline when `pipeline_active` (this
    /// datanode is still a member of the container's Ratis pipeline, which closes it
    /// whatever `force`), closes when `force`, and is quasi-closed otherwise ("Ratis
    /// pipeline does not exist", HDDS-16811's starting state); a QUASI_CLOSED one closes
    /// only when `force`; CLOSED, UNHEALTHY, INVALID and DELETED replicas are left as they
    /// are. Returns the state after.
    pub fn close(
        &self,
        force: bool,
        pipeline_active: bool,
    ) -> Result<ContainerState, ContainerError> {
        use ContainerState as S;
        let (changed, to) = {
            let write = self.write_lock();
            if matches!(self.state(), S::Open | S::Recovering) {
                self.transition_locked(&write, S::Closing)?;
            }
            match self.state() {
                S::Closing if pipeline_active || force => {
                    (self.transition_locked(&write, S::Closed)?, S::Closed)
                }
                S::Closing => (
                    self.transition_locked(&write, S::QuasiClosed)?,
                    S::QuasiClosed,
                ),
                S::QuasiClosed if force => (self.transition_locked(&write, S::Closed)?, S::Closed),
                state => (false, state),
            }
        };
        self.after_transition(changed, to)?;
        Ok(self.state())
    }

    /// The checked move to `to`, with the write lock held; whether the state changed.
    fn transition_locked(
        &self,
        _write: &RwLockWriteGuard<'_, ()>,
        to: ContainerState,
    ) -> Result<bool, ContainerError> {
        use ContainerState as S;
        let from = self.state();
        let allowed = match to {
            _ if from == S::Deleted => false,
            S::Closing => matches!(from, S::Open | S::Recovering | S::Closing),
            S::QuasiClosed => matches!(from, S::Closing | S::QuasiClosed),
            S::Closed => matches!(from, S::Closing | S::QuasiClosed | S::Closed),
            S::Unhealthy => true,
            S::Open | S::Recovering | S::Invalid | S::Deleted => false,
        };
        if !allowed {
            return Err(ContainerError::InvalidTransition {
                container: self.id,
                from,
                to,
            });
        }
        if from != to {
            self.storage(self.store.commit(MetadataBatch {
                state: Some(to),
                ..MetadataBatch::default()
            }))?;
            self.data.set_state(to);
            crate::events::debug!(
                node = %self.datanode,
                container = self.id.0,
                ?from,
                ?to,
                "container state changed"
            );
        }
        Ok(from != to)
    }

    /// A replica closed or marked unhealthy without a data checksum gets its tree built
    /// from metadata, once the write lock is released (the tree write refreshes the data
    /// checksum, which takes the replica's locks itself).
    fn after_transition(&self, changed: bool, to: ContainerState) -> Result<(), ContainerError> {
        use ContainerState as S;
        if changed
            && matches!(to, S::QuasiClosed | S::Closed | S::Unhealthy)
            && self.data_checksum().is_none()
        {
            self.update_checksum_from_metadata()?;
        }
        Ok(())
    }

    /// Marks the replica UNHEALTHY unless it already is (`markContainerUnhealthy`).
    pub fn mark_unhealthy(&self) -> Result<(), ContainerError> {
        if self.state() == ContainerState::Unhealthy {
            return Ok(());
        }
        self.transition(ContainerState::Unhealthy)
    }

    /// HDDS-16808: makes the data checksum in memory and in the database follow `info`'s
    /// root when it differs from the value before the write. Inside the tree write
    /// ([`ContainerConfig::refresh_checksum_in_tree_write`]) that value is the current one;
    /// in Ozone's order (`updateAndGetContainerChecksum`) it is `original`, read before the
    /// tree write, and this runs after the writer lock was released. Simplified: a failed
    /// database write is an error here (Ozone logs it and keeps the new value in memory).
    fn refresh_data_checksum(
        &self,
        info: &ContainerChecksumInfo,
        original: Option<u64>,
    ) -> Result<(), ContainerError> {
        let Some(root) = info.tree.data_checksum() else {
            return Ok(());
        };
        let before = if self.config.refreshes_in_tree_write() {
            self.data_checksum()
        } else {
            original
        };
        if before == Some(root) {
            return Ok(());
        }
        self.storage(self.store.commit(MetadataBatch {
            data_checksum: Some(root),
            ..MetadataBatch::default()
        }))?;
        let previous = self
            .data
            .data_checksum
            .write(|checksum| checksum.replace(root));
        crate::events::debug!(
            node = %self.datanode,
            container = self.id.0,
            from = %ChecksumText(previous),
            to = %ChecksumText(Some(root)),
            "checksum refreshed"
        );
        Ok(())
    }

    /// A tree write followed by the HDDS-16808 refresh, in the order the configuration
    /// says (see [`refresh_data_checksum`](Self::refresh_data_checksum)).
    fn write_tree_and_refresh(
        &self,
        by: TreeWriter,
        update: impl FnOnce(&ContainerMerkleTree) -> ContainerMerkleTree,
    ) -> Result<Arc<ContainerChecksumInfo>, ContainerError> {
        // Ozone's order reads the value before the write; inside the write the current
        // one is compared, so nothing is read here.
        let original = if self.config.refreshes_in_tree_write() {
            None
        } else {
            self.data_checksum()
        };
        self.checksums.write(by, update, |info| {
            self.refresh_data_checksum(info, original)
        })
    }

    /// `updateAndGetContainerChecksum`: merges `writer` with the tree on disk (a delete
    /// witnessed on disk wins), writes it and refreshes the data checksum; `by` is the
    /// writer the `tree written` event names.
    pub fn update_and_get_container_checksum(
        &self,
        by: TreeWriter,
        writer: &ContainerMerkleTree,
    ) -> Result<Arc<ContainerChecksumInfo>, ContainerError> {
        self.write_tree_and_refresh(by, |existing| {
            let mut tree = writer.clone();
            tree.merge_existing(existing);
            tree
        })
    }

    /// Builds a tree from block metadata and merges it in
    /// (`updateAndGetContainerChecksumFromMetadata`).
    pub fn update_checksum_from_metadata(
        &self,
    ) -> Result<Arc<ContainerChecksumInfo>, ContainerError> {
        let blocks = self.storage(self.store.blocks())?;
        let tree = ContainerMerkleTree::from_metadata(&blocks);
        self.update_and_get_container_checksum(TreeWriter::Metadata, &tree)
    }

    /// The deleting round's tree write (`addDeletedBlocks`): `deleted` are the blocks whose
    /// metadata it removed, `unreferenced` those it found without metadata. The patched
    /// behaviors record both (HDDS-16811 part 1) and refresh the data checksum
    /// (HDDS-16808); [`Legacy`](super::config::ContainerBehavior::Legacy) records only
    /// `deleted` and leaves the data checksum alone.
    pub(super) fn add_deleted_blocks(
        &self,
        deleted: &[BlockData],
        unreferenced: &[LocalId],
    ) -> Result<Arc<ContainerChecksumInfo>, ContainerError> {
        let patched = self.config.behavior.is_patched();
        let update = |current: &ContainerMerkleTree| {
            let mut tree = current.clone();
            let compute_root = current.data_checksum().is_some();
            tree.add_deleted_blocks(deleted, false);
            if patched {
                tree.mark_deleted_keeping_checksum(unreferenced.iter().copied(), false);
            }
            if compute_root {
                tree.compute_root();
            } else {
                tree.clear_root();
            }
            tree
        };
        if patched {
            self.write_tree_and_refresh(TreeWriter::DeletingRound, update)
        } else {
            self.checksums
                .write(TreeWriter::DeletingRound, update, |_| Ok(()))
        }
    }

    /// Marks `block` deleted in the tree file with `checksum` (a deletion a peer witnessed,
    /// HDDS-11765), keeping the root set only if it was, and refreshing the data checksum
    /// as the deleting round's tree write does.
    pub(super) fn record_deleted_block(
        &self,
        block: LocalId,
        checksum: u64,
    ) -> Result<(), ContainerError> {
        self.write_tree_and_refresh(TreeWriter::PeerDeletion, |current| {
            let mut tree = current.clone();
            tree.set_deleted_block(block, checksum);
            if current.data_checksum().is_some() {
                tree.compute_root();
            } else {
                tree.clear_root();
            }
            tree
        })?;
        Ok(())
    }

    /// `checkContainerClose`: reconciliation writes only to QUASI_CLOSED, CLOSED or
    /// UNHEALTHY replicas.
    pub fn check_closed_for_repair(&self) -> Result<(), ContainerError> {
        let state = self.state();
        if state.is_closed_for_data() {
            Ok(())
        } else {
            Err(self.invalid_state(state, "reconciliation write (not in closed state)"))
        }
    }

    /// `writeChunkForClosedContainer`: state check, then the write; no container lock.
    pub fn write_chunk_for_closed_container(
        &self,
        block: LocalId,
        offset: u64,
        data: &[u8],
    ) -> Result<(), ContainerError> {
        self.check_closed_for_repair()?;
        self.storage(self.store.write_chunk(block, offset, data))
    }

    /// `putBlockForClosedContainer`: state check, then one batch writing the block's
    /// metadata; takes no lock of its own.
    pub fn put_block_for_closed_container(&self, block: BlockData) -> Result<(), ContainerError> {
        self.check_closed_for_repair()?;
        self.storage(self.store.commit(MetadataBatch {
            put_blocks: vec![block],
            ..MetadataBatch::default()
        }))
    }

    /// `finishWriteChunks`: closes the cached handle and requires the block file.
    pub fn finish_write_chunks(&self, block: LocalId) -> Result<(), ContainerError> {
        self.storage(self.store.finish_write(block))
    }

    /// Whether the checksum tree marks `block` deleted. With the generation check the tree
    /// file is re-read only if a tree write happened since the last read.
    pub fn tree_marks_deleted(&self, block: LocalId) -> Result<bool, ContainerError> {
        Ok(self.checksums.read_latest()?.tree.is_deleted(block))
    }

    /// Whether `block`'s deletion is recorded: in the tree, or (with
    /// [`deletion_records_in_database`](ContainerConfig::deletion_records_in_database))
    /// in the database.
    pub fn deletion_recorded(&self, block: LocalId) -> Result<bool, ContainerError> {
        if self.tree_marks_deleted(block)? {
            return Ok(true);
        }
        if !self.config.records_deletions_in_database() {
            return Ok(false);
        }
        self.storage(self.store.deletion_recorded(block))
    }

    /// Where the replica's data checksum stands: in memory, in the database, in the tree
    /// file.
    pub fn checksum_views(&self) -> Result<ChecksumViews, ContainerError> {
        let persisted = self.storage(self.store.summary())?.data_checksum;
        let tree = self.checksums.read()?.tree.data_checksum();
        Ok(ChecksumViews {
            in_memory: self.data_checksum(),
            persisted,
            tree,
        })
    }
}

/// A replica's data checksum in its three places, which must agree once a tree write
/// has returned (HDDS-16808).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChecksumViews {
    /// In `ContainerData`.
    pub in_memory: Option<u64>,
    /// In the container's database.
    pub persisted: Option<u64>,
    /// The tree file's root.
    pub tree: Option<u64>,
}

impl ChecksumViews {
    /// Whether all three agree.
    pub fn agree(&self) -> bool {
        self.in_memory == self.persisted && self.persisted == self.tree
    }
}
