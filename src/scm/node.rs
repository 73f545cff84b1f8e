//! The SCM's registry of datanodes (`SCMNodeManager`, `DatanodeInfo`) and the
//! `PendingContainerTracker` that keeps each datanode's pending allocations and checks a
//! datanode's space before `ContainerManagerImpl.allocateContainer` grants on it.
//!
//! **The race (HDDS-16891).** The pending buckets are in memory only, created empty when a
//! datanode registers; a restarted SCM, or a follower that becomes leader, has empty
//! buckets for containers the previous leader granted and nobody wrote yet.
//!
//! **The fix** lives in [`super::container_manager`]: it drops and reseeds these buckets
//! when the SCM becomes the serving leader. Here, every operation on a bucket holds that
//! bucket's lock and rolls it first, so a space check and the add it allows are one step
//! per datanode: two allocations never both take a datanode's last slot.

use std::collections::{BTreeMap, BTreeSet};

use super::error::ScmError;
use super::pending::{TwoWindowBucket, has_slot};
use crate::clock::Clock;
use crate::hdds::ids::{ContainerId, DatanodeId};
use crate::hdds::report::StorageReport;
use crate::sync::{Arc, Mutex, RwLock};

/// One registered datanode (`DatanodeInfo`).
#[derive(Debug)]
pub struct DatanodeInfo {
    id: DatanodeId,
    storage_reports: RwLock<Vec<StorageReport>>,
    pending: Mutex<TwoWindowBucket>,
}

impl DatanodeInfo {
    fn new(id: DatanodeId, now_ms: u64, roll_interval_ms: u64) -> Self {
        Self {
            id,
            storage_reports: RwLock::new(Vec::new()),
            pending: Mutex::new(TwoWindowBucket::new(now_ms, roll_interval_ms)),
        }
    }

    /// The datanode.
    pub fn id(&self) -> DatanodeId {
        self.id
    }

    /// The volumes of its last node report (none before the first one).
    pub fn storage_reports(&self) -> Vec<StorageReport> {
        self.storage_reports.read().clone()
    }
}

/// Keeps the pending allocations of every datanode (`PendingContainerTracker`).
///
/// A space check reads the datanode's storage reports *while holding its bucket lock*.
/// Ozone reads them before taking the bucket's monitor; then a check can pair a storage
/// report from before a container was created (not counting it as committed) with a
/// bucket from after its container report removed the entry (not counting it as pending),
/// and grant the slot twice. The shuttle cluster scenario found that interleaving; a
/// datanode's node report reaches SCM before the container report for the same create, so
/// under the bucket lock the check sees the container at least once.
#[derive(Debug)]
pub struct PendingContainerTracker {
    container_size: u64,
    clock: Arc<dyn Clock>,
}

impl PendingContainerTracker {
    /// Slots are `container_size` bytes (`ozone.scm.container.size`).
    pub fn new(container_size: u64, clock: Arc<dyn Clock>) -> Self {
        Self {
            container_size,
            clock,
        }
    }

    /// The slot size in bytes.
    pub fn container_size(&self) -> u64 {
        self.container_size
    }

    /// Rolls the bucket, then records `container` if the datanode has a slot beyond its
    /// pending ones; atomic per datanode. No storage report yet: no slot.
    pub fn check_space_and_record_allocation(
        &self,
        node: &DatanodeInfo,
        container: ContainerId,
    ) -> bool {
        let mut bucket = node.pending.lock();
        // Read under the bucket lock: see `PendingContainerTracker`'s docs.
        let reports = node.storage_reports();
        if reports.is_empty() {
            return false;
        }
        bucket.roll_if_needed(self.clock.now_ms());
        bucket.check_space_and_add(&reports, self.container_size, container)
    }

    /// Records `container` without a space check (replication targets, the rebuild).
    pub fn record_allocation(&self, node: &DatanodeInfo, container: ContainerId) {
        let mut bucket = node.pending.lock();
        bucket.roll_if_needed(self.clock.now_ms());
        bucket.add(container);
    }

    /// Whether the datanode has a slot beyond its pending ones; records nothing.
    pub fn has_available_space(&self, node: &DatanodeInfo) -> bool {
        let mut bucket = node.pending.lock();
        let reports = node.storage_reports();
        bucket.roll_if_needed(self.clock.now_ms());
        has_slot(&reports, self.container_size, bucket.pending_count())
    }

    /// Removes `container` from the datanode's bucket; returns whether it was pending.
    pub fn remove_pending_allocation(&self, node: &DatanodeInfo, container: ContainerId) -> bool {
        let mut bucket = node.pending.lock();
        bucket.roll_if_needed(self.clock.now_ms());
        bucket.remove(container)
    }

    /// The datanode's pending containers after a roll.
    pub fn pending(&self, node: &DatanodeInfo) -> BTreeSet<ContainerId> {
        let mut bucket = node.pending.lock();
        bucket.roll_if_needed(self.clock.now_ms());
        bucket.containers()
    }

    /// Drops every pending entry of the datanode.
    pub fn clear(&self, node: &DatanodeInfo) {
        node.pending.lock().clear();
    }
}

/// The registered datanodes of one SCM (`SCMNodeManager`, the parts used here).
#[derive(Debug)]
pub struct NodeManager {
    nodes: RwLock<BTreeMap<DatanodeId, Arc<DatanodeInfo>>>,
    tracker: PendingContainerTracker,
    clock: Arc<dyn Clock>,
    roll_interval_ms: u64,
}

impl NodeManager {
    /// No datanode registered yet.
    pub fn new(container_size: u64, roll_interval_ms: u64, clock: Arc<dyn Clock>) -> Self {
        Self {
            nodes: RwLock::new(BTreeMap::new()),
            tracker: PendingContainerTracker::new(container_size, Arc::clone(&clock)),
            clock,
            roll_interval_ms,
        }
    }

    /// The tracker of pending allocations.
    pub fn tracker(&self) -> &PendingContainerTracker {
        &self.tracker
    }

    /// Registers a datanode with an empty bucket; registering again keeps what it has.
    pub fn register(&self, id: DatanodeId) -> Arc<DatanodeInfo> {
        let mut nodes = self.nodes.write();
        Arc::clone(nodes.entry(id).or_insert_with(|| {
            Arc::new(DatanodeInfo::new(
                id,
                self.clock.now_ms(),
                self.roll_interval_ms,
            ))
        }))
    }

    /// A registered datanode.
    pub fn get(&self, id: DatanodeId) -> Result<Arc<DatanodeInfo>, ScmError> {
        self.nodes
            .read()
            .get(&id)
            .cloned()
            .ok_or(ScmError::UnknownDatanode { datanode: id })
    }

    /// Every registered datanode, by id.
    pub fn all(&self) -> Vec<Arc<DatanodeInfo>> {
        self.nodes.read().values().cloned().collect()
    }

    /// Replaces the datanode's storage reports (a node report).
    pub fn process_node_report(
        &self,
        id: DatanodeId,
        reports: Vec<StorageReport>,
    ) -> Result<(), ScmError> {
        let node = self.get(id)?;
        *node.storage_reports.write() = reports;
        Ok(())
    }
}
