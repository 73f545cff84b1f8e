//! The replicas of one datanode and the operations on them (`KeyValueHandler`,
//! `ContainerController`), and a peer answered in process by another datanode's handler.
//!
//! **The race (HDDS-16811).** Two entry points of this handler meet on one block: the
//! block deleting service's task and `reconcileContainer`, which runs with no container
//! lock and restores a block deleted before or during its repair.
//! **The fix** lives in the replica ([`deletion`] records every deleted
//! block in the tree, [`reconcile`] commits under the read lock after
//! checking it); the handler only wires the entry points as Ozone does.
//!
//! Like Ozone's replication supervisor, which drops a reconcile task while one for the same
//! container is in flight, the handler runs at most one reconciliation per container: two
//! of them would each remove what the other pulled and committed.

use std::collections::{BTreeMap, BTreeSet};

use super::ContainerConfig;
use super::deletion::{self, BlockDeletingService, DeletionRound, TransactionStored};
use super::error::{ContainerError, PeerError};
use super::merkle;
use super::reconcile::{self, PeerDatanode, ReconcileReport};
use super::replica::KeyValueContainer;
use super::scanner::{OnDemandContainerScanner, ScanReport};
use super::store::{BlockData, ChunkInfo, ContainerStore, LocalId};
use crate::datanode::commands::DeletedBlocksTransaction;
use crate::datanode::container_set::ContainerState;
use crate::ids::{ContainerId, DatanodeId};
use crate::sync::{Arc, Mutex, RwLock, arc_from_box};

/// The container replicas of one datanode with its block deleting service and scanner.
#[derive(Debug)]
pub struct KeyValueHandler {
    datanode: DatanodeId,
    config: ContainerConfig,
    containers: RwLock<BTreeMap<ContainerId, Arc<KeyValueContainer>>>,
    /// Containers with a reconciliation in flight (the supervisor's in-flight set).
    reconciling: Mutex<BTreeSet<ContainerId>>,
    deleting: BlockDeletingService,
    scanner: OnDemandContainerScanner,
}

impl KeyValueHandler {
    /// A datanode without replicas.
    pub fn new(datanode: DatanodeId, config: ContainerConfig) -> Self {
        Self {
            datanode,
            config,
            containers: RwLock::new(BTreeMap::new()),
            reconciling: Mutex::new(BTreeSet::new()),
            deleting: BlockDeletingService {
                block_limit_per_interval: config.block_deleting_limit_per_interval,
            },
            scanner: OnDemandContainerScanner::new(),
        }
    }

    /// This datanode.
    pub fn datanode(&self) -> DatanodeId {
        self.datanode
    }

    /// Its configuration.
    pub fn config(&self) -> &ContainerConfig {
        &self.config
    }

    /// Loads the replica of `id` kept in `store` and adds it.
    pub fn add_container(
        &self,
        id: ContainerId,
        store: Arc<dyn ContainerStore>,
    ) -> Result<Arc<KeyValueContainer>, ContainerError> {
        let mut containers = self.containers.write();
        if containers.contains_key(&id) {
            return Err(ContainerError::ContainerExists { container: id });
        }
        let container = Arc::new(KeyValueContainer::load(id, self.config, store)?);
        containers.insert(id, Arc::clone(&container));
        Ok(container)
    }

    /// The replica of `id`.
    pub fn container(&self, id: ContainerId) -> Result<Arc<KeyValueContainer>, ContainerError> {
        self.containers
            .read()
            .get(&id)
            .cloned()
            .ok_or(ContainerError::UnknownContainer { container: id })
    }

    /// Ids of the replicas here.
    pub fn container_ids(&self) -> Vec<ContainerId> {
        self.containers.read().keys().copied().collect()
    }

    /// `DeleteBlocksCommandHandler`: stores each transaction with its container; a
    /// transaction of an unknown container fails alone (the SCM resends it).
    pub fn handle_delete_blocks(
        &self,
        transactions: &[DeletedBlocksTransaction],
    ) -> Vec<Result<TransactionStored, ContainerError>> {
        transactions
            .iter()
            .map(|tx| deletion::store_delete_transaction(&*self.container(tx.container)?, tx))
            .collect()
    }

    /// One run of the block deleting service: a task for every replica where deletion is
    /// allowed.
    pub fn run_block_deleting_service(
        &self,
    ) -> Vec<(ContainerId, Result<Vec<DeletionRound>, ContainerError>)> {
        let containers: Vec<_> = self.containers.read().values().cloned().collect();
        containers
            .into_iter()
            .filter(|c| BlockDeletingService::is_deletion_allowed(c))
            .map(|c| (c.id(), self.deleting.run_task(&c)))
            .collect()
    }

    /// Marks a reconciliation of `id` in flight until the guard is dropped; refused, without
    /// waiting, when one already is.
    fn begin_reconciliation(&self, id: ContainerId) -> Result<InFlight<'_>, ContainerError> {
        if !self.reconciling.lock().insert(id) {
            return Err(ContainerError::ReconciliationInProgress { container: id });
        }
        Ok(InFlight {
            set: &self.reconciling,
            id,
        })
    }

    /// `reconcileContainer`: reconciles with each peer, then (whatever the outcome)
    /// requests an on-demand scan without gap. The scan's result is in the second part
    /// (`None` when a scan of the replica was already in flight). A request while a
    /// reconciliation of the same container runs is refused with
    /// [`ContainerError::ReconciliationInProgress`] and starts no scan (the task is dropped).
    pub fn reconcile_container(
        &self,
        id: ContainerId,
        peers: &[Arc<dyn PeerDatanode>],
    ) -> (
        Result<ReconcileReport, ContainerError>,
        Option<Result<ScanReport, ContainerError>>,
    ) {
        let container = match self.container(id) {
            Ok(container) => container,
            Err(error) => return (Err(error), None),
        };
        let result = match self.begin_reconciliation(id) {
            Ok(_in_flight) => reconcile::reconcile_container(&container, peers),
            Err(error) => return (Err(error), None),
        };
        // The task ends once the scan is requested: the scanner has its own dedupe.
        let scan = self.scanner.scan_container_without_gap(&container);
        (result, scan)
    }

    /// Reconciliation without the scan that ends it (`reconcileContainerInternal`), refused
    /// like [`reconcile_container`](Self::reconcile_container) while another one of the
    /// same container runs.
    pub fn reconcile_container_internal(
        &self,
        id: ContainerId,
        peers: &[Arc<dyn PeerDatanode>],
    ) -> Result<ReconcileReport, ContainerError> {
        let container = self.container(id)?;
        let _in_flight = self.begin_reconciliation(id)?;
        reconcile::reconcile_container(&container, peers)
    }

    /// An on-demand scan of `id` (`None` if one was already in flight).
    pub fn scan(&self, id: ContainerId) -> Result<Option<ScanReport>, ContainerError> {
        let container = self.container(id)?;
        self.scanner
            .scan_container_without_gap(&container)
            .transpose()
    }

    /// Serves the tree file of `id` to a peer (`handleGetContainerChecksumInfo`): only
    /// for CLOSED, QUASI_CLOSED and UNHEALTHY replicas; an existing file is served as it
    /// is, a missing one is first built from metadata.
    pub fn checksum_info_bytes(&self, id: ContainerId) -> Result<Vec<u8>, ContainerError> {
        let container = self.container(id)?;
        let state = container.state();
        if !matches!(
            state,
            ContainerState::Closed | ContainerState::QuasiClosed | ContainerState::Unhealthy
        ) {
            return Err(ContainerError::InvalidState {
                container: id,
                state,
                operation: "serving the checksum tree (UNCLOSED_CONTAINER_IO)",
            });
        }
        let store = container.store();
        match store.read_tree_file().map_err(ContainerError::store(id))? {
            Some(bytes) => Ok(bytes),
            None => Ok(merkle::encode(&*container.update_checksum_from_metadata()?)),
        }
    }

    /// Serves block metadata to a peer.
    pub fn block(&self, id: ContainerId, block: LocalId) -> Result<BlockData, ContainerError> {
        self.container(id)?
            .store()
            .get_block(block)
            .map_err(ContainerError::store(id))?
            .ok_or(ContainerError::UnknownBlock {
                container: id,
                block,
            })
    }

    /// Serves a chunk's bytes to a peer (as many as the file holds, at most its length).
    pub fn read_chunk(
        &self,
        id: ContainerId,
        block: LocalId,
        chunk: &ChunkInfo,
    ) -> Result<Vec<u8>, ContainerError> {
        let container = self.container(id)?;
        container
            .store()
            .read_block(block, chunk.offset, chunk.length)
            .map_err(ContainerError::store(id))?
            .ok_or(ContainerError::UnknownChunk {
                container: id,
                block,
                offset: chunk.offset,
                length: chunk.length,
            })
    }
}

/// A reconciliation in flight; dropping it (also on unwind) lets the next one start.
#[derive(Debug)]
struct InFlight<'a> {
    set: &'a Mutex<BTreeSet<ContainerId>>,
    id: ContainerId,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.set.lock().remove(&self.id);
    }
}

/// A peer datanode answered in process by its [`KeyValueHandler`] (no network).
#[derive(Debug, Clone)]
pub struct InProcessPeer {
    handler: Arc<KeyValueHandler>,
}

impl InProcessPeer {
    /// The peer served by `handler`.
    pub fn new(handler: Arc<KeyValueHandler>) -> Self {
        Self { handler }
    }

    /// The peer as reconciliation takes it.
    pub fn shared(handler: &Arc<KeyValueHandler>) -> Arc<dyn PeerDatanode> {
        arc_from_box(Box::new(Self::new(Arc::clone(handler))) as Box<dyn PeerDatanode>)
    }

    fn refused(&self, error: ContainerError) -> PeerError {
        PeerError::Refused {
            peer: self.handler.datanode(),
            source: Box::new(error),
        }
    }
}

impl PeerDatanode for InProcessPeer {
    fn id(&self) -> DatanodeId {
        self.handler.datanode()
    }

    fn checksum_info(&self, container: ContainerId) -> Result<Option<Vec<u8>>, PeerError> {
        self.handler
            .checksum_info_bytes(container)
            .map(Some)
            .map_err(|e| self.refused(e))
    }

    fn block(&self, container: ContainerId, block: LocalId) -> Result<BlockData, PeerError> {
        self.handler
            .block(container, block)
            .map_err(|e| self.refused(e))
    }

    fn read_chunk(
        &self,
        container: ContainerId,
        block: LocalId,
        chunk: &ChunkInfo,
    ) -> Result<Vec<u8>, PeerError> {
        self.handler
            .read_chunk(container, block, chunk)
            .map_err(|e| self.refused(e))
    }
}
