//! The replicas of one datanode and the operations on them (`ContainerSet` and
//! `KeyValueHandler` in one): loading them from the volume, the block deleting service,
//! reconciliation, the on-demand scanner, serving peers, and the deletion and import of
//! whole replicas that the [`ContainerController`](super::controller::ContainerController)
//! commands run.
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

use super::config::ContainerConfig;
use super::deletion::{self, BlockDeletingService, DeletionRound, TransactionStored};
use super::error::ContainerError;
use super::merkle;
use super::reconcile::{self, PeerDatanode, PeerDirectory, ReconcileReport, Reconciliation};
use super::replica::KeyValueContainer;
use super::scanner::{OnDemandContainerScanner, ScanReport};
use super::store::{BlockData, ChunkInfo};
use super::volume::{ContainerVolume, MemoryVolume};
use crate::hdds::command::DeletedBlocksTransaction;

use crate::hdds::ids::{ContainerId, DatanodeId, LocalId, PipelineId};
use crate::sync::{Arc, Mutex, RwCell};

/// The container replicas of one datanode with its block deleting service and scanner.
#[derive(Debug)]
pub struct KeyValueHandler {
    pub(super) datanode: DatanodeId,
    pub(super) config: ContainerConfig,
    /// Where the replicas' storages live; a restart reloads from it.
    pub(super) volume: Arc<dyn ContainerVolume>,
    /// How peers are reached by id (reconcile and replicate commands name datanodes).
    pub(super) peers: Option<Arc<dyn PeerDirectory>>,
    /// The replicas (`ContainerSet`, a concurrent map upstream): each access is a short
    /// closure, a leaf in the lock order.
    pub(super) containers: RwCell<BTreeMap<ContainerId, Arc<KeyValueContainer>>>,
    /// Serialises container creation (`containerCreationLock`): held across the check
    /// that the id is free, the volume's adoption and the insertion.
    pub(super) creation: Mutex<()>,
    /// Replicas the last (re)start found in the volume but could not load.
    pub(super) load_failures: Mutex<Vec<(ContainerId, ContainerError)>>,
    /// Containers with a reconciliation in flight (the supervisor's in-flight set).
    reconciling: Arc<Mutex<BTreeSet<ContainerId>>>,
    /// The write pipelines whose Ratis group this datanode has left (`XceiverServerRatis`
    /// keeps the active groups; here every pipeline a command names is taken to be active
    /// unless it was left). Kept across a restart, as Ratis keeps its groups on disk.
    left_pipelines: RwCell<BTreeSet<PipelineId>>,
    deleting: BlockDeletingService,
    scanner: OnDemandContainerScanner,
}

impl KeyValueHandler {
    /// A datanode without replicas, over an empty [`MemoryVolume`] of its own. Replicas
    /// come from [`add_container`](Self::add_container).
    pub fn new(datanode: DatanodeId, config: ContainerConfig) -> Self {
        Self::with_volume(datanode, config, MemoryVolume::new().shared())
    }

    /// A datanode over `volume`, with the replicas the volume holds loaded
    /// (`ContainerReader`); see [`restart`](Self::restart) for what a replica that does not
    /// load does.
    pub fn open(
        datanode: DatanodeId,
        config: ContainerConfig,
        volume: Arc<dyn ContainerVolume>,
    ) -> Result<Self, ContainerError> {
        let handler = Self::with_volume(datanode, config, volume);
        handler.restart()?;
        Ok(handler)
    }

    fn with_volume(
        datanode: DatanodeId,
        config: ContainerConfig,
        volume: Arc<dyn ContainerVolume>,
    ) -> Self {
        Self {
            datanode,
            config,
            volume,
            peers: None,
            containers: RwCell::new(BTreeMap::new()),
            creation: Mutex::new(()),
            load_failures: Mutex::new(Vec::new()),
            reconciling: Arc::new(Mutex::new(BTreeSet::new())),
            left_pipelines: RwCell::new(BTreeSet::new()),
            deleting: BlockDeletingService {
                block_limit_per_interval: config.block_deleting_limit_per_interval,
            },
            scanner: OnDemandContainerScanner::new(),
        }
    }

    /// The same handler reaching peers through `peers`.
    pub fn with_peers(mut self, peers: Arc<dyn PeerDirectory>) -> Self {
        self.peers = Some(peers);
        self
    }

    /// This datanode leaves the Ratis group of `pipeline` (the pipeline failed or was
    /// closed): a close command naming it quasi-closes the replica unless forced.
    pub fn leave_pipeline(&self, pipeline: PipelineId) {
        self.left_pipelines.write(|left| left.insert(pipeline));
    }

    /// Whether this datanode is still a member of `pipeline`'s Ratis group
    /// (`XceiverServerRatis.isExist`).
    pub fn is_pipeline_active(&self, pipeline: PipelineId) -> bool {
        !self.left_pipelines.read(|left| left.contains(&pipeline))
    }

    /// This datanode.
    pub fn datanode(&self) -> DatanodeId {
        self.datanode
    }

    /// Its configuration.
    pub fn config(&self) -> &ContainerConfig {
        &self.config
    }

    /// The replica of `id`.
    pub fn container(&self, id: ContainerId) -> Result<Arc<KeyValueContainer>, ContainerError> {
        self.containers
            .read(|containers| containers.get(&id).cloned())
            .ok_or(ContainerError::UnknownContainer { container: id })
    }

    /// Ids of the replicas here.
    pub fn container_ids(&self) -> Vec<ContainerId> {
        self.containers
            .read(|containers| containers.keys().copied().collect())
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
        let containers: Vec<_> = self
            .containers
            .read(|containers| containers.values().cloned().collect());
        containers
            .into_iter()
            .filter(|c| BlockDeletingService::is_deletion_allowed(c))
            .map(|c| (c.id(), self.deleting.run_task(&c)))
            .collect()
    }

    /// Marks a reconciliation of `id` in flight until the guard is dropped; refused, without
    /// waiting, when one already is.
    fn begin_reconciliation(&self, id: ContainerId) -> Result<InFlight, ContainerError> {
        if !self.reconciling.lock().insert(id) {
            crate::events::debug!(
                node = %self.datanode,
                container = id.0,
                why = "one in flight",
                "reconciliation refused"
            );
            return Err(ContainerError::ReconciliationInProgress { container: id });
        }
        Ok(InFlight {
            set: Arc::clone(&self.reconciling),
            id,
        })
    }

    /// `reconcileContainer`: reconciles with each peer, then (whatever the outcome)
    /// requests an on-demand scan without gap. The scan's result is in the second part
    /// (`None` when a scan of the replica was already in flight). A request while a
    /// reconciliation of the same container runs is refused with
    /// [`ContainerError::ReconciliationInProgress`] and starts no scan (the task is dropped).
    pub fn reconcile_with(
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
    /// like [`reconcile_with`](Self::reconcile_with) while another one of the
    /// same container runs.
    pub fn reconcile_without_scan(
        &self,
        id: ContainerId,
        peers: &[Arc<dyn PeerDatanode>],
    ) -> Result<ReconcileReport, ContainerError> {
        let container = self.container(id)?;
        let _in_flight = self.begin_reconciliation(id)?;
        reconcile::reconcile_container(&container, peers)
    }

    /// `reconcileContainer` as the replication supervisor runs it: the reconciliation of
    /// `id` with the peers named by `peers`, started (refused like
    /// [`reconcile_with`](Self::reconcile_with) while another one runs), to be stepped to
    /// its end; [`request_scan`](Self::request_scan) then queues the scan that ends it.
    pub fn start_reconciliation(
        &self,
        id: ContainerId,
        peers: &[DatanodeId],
    ) -> Result<ReconcileTask, ContainerError> {
        let peers = self.resolve_peers(peers)?;
        let container = self.container(id)?;
        let in_flight = self.begin_reconciliation(id)?;
        Ok(ReconcileTask {
            reconciliation: Reconciliation::start(container, peers)?,
            _in_flight: in_flight,
        })
    }

    /// Queues an on-demand scan of `id` for the scanner's thread (dropped when one is
    /// queued or running already).
    pub fn request_scan(&self, id: ContainerId) -> Result<bool, ContainerError> {
        Ok(self.scanner.request(&self.container(id)?))
    }

    /// Feeds `state` the handler's own state beside its replicas: the pipelines it left
    /// and the scans queued (each replica's state is its store's and its report's).
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        self.left_pipelines
            .read(|left| left.iter().for_each(|p| p.hash(state)));
        self.scanner.digest(state);
    }

    /// The on-demand scanner, whose queue the scanner's thread (or a stepping driver) runs.
    pub fn scanner(&self) -> &OnDemandContainerScanner {
        &self.scanner
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
        if !state.is_closed_for_data() {
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
struct InFlight {
    set: Arc<Mutex<BTreeSet<ContainerId>>>,
    id: ContainerId,
}

/// A reconciliation of one replica that the replication supervisor runs a step at a time
/// ([`KeyValueHandler::start_reconciliation`]); the replica counts as being reconciled
/// until it is dropped.
#[derive(Debug)]
pub struct ReconcileTask {
    reconciliation: Reconciliation,
    _in_flight: InFlight,
}

impl ReconcileTask {
    /// One step ([`Reconciliation::step`]): the report once the last peer was tried.
    pub fn step(&mut self) -> Option<ReconcileReport> {
        self.reconciliation.step()
    }

    /// The replica it reconciles.
    pub fn container(&self) -> ContainerId {
        self.reconciliation.container().id()
    }

    /// Feeds `state` how far it got ([`Reconciliation::digest`]).
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        self.reconciliation.digest(state);
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.set.lock().remove(&self.id);
    }
}
