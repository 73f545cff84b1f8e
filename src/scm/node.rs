//! The SCM's registry of datanodes (`SCMNodeManager`, `NodeStateManager`, `DatanodeInfo`)
//! and the `PendingContainerTracker` that keeps each datanode's pending allocations and
//! checks a datanode's space before `ContainerManagerImpl.allocateContainer` grants on it.
//!
//! **The race (HDDS-16891).** The pending buckets are in memory only, created empty with
//! each `DatanodeInfo`: a restarted SCM, a follower that becomes leader, and a datanode that
//! registers again with changed details all start from empty buckets.
//!
//! **The fix.** The rebuild in [`super::container_manager`] reseeds the buckets when the SCM
//! becomes the serving leader. Here, with [`ScmHardening`], a re-registered datanode keeps
//! its space record (bucket and storage reports), and the space check reads the storage
//! reports under the bucket lock.

use std::collections::{BTreeMap, BTreeSet};

use super::config::ScmHardening;
use super::datanode_details::{DatanodeDetails, Registration, RegistrationChange};
use super::error::ScmError;
use super::pending::{TwoWindowBucket, has_slot, slots};
use crate::clock::Clock;
use crate::hdds::ids::{ContainerId, DatanodeId};
use crate::hdds::report::StorageReport;
use crate::sync::{Arc, Mutex, RwCell};

/// What SCM knows of a datanode's space: the storage reports of its last node report
/// (under the `DatanodeInfo` lock in Ozone) and its pending bucket (under the bucket's
/// monitor).
#[derive(Debug)]
struct NodeSpace {
    storage_reports: RwCell<Vec<StorageReport>>,
    pending: Mutex<TwoWindowBucket>,
}

/// One registered datanode (`DatanodeInfo`): its registration details, the storage
/// reports of its last node report, and its pending bucket.
#[derive(Debug)]
pub struct DatanodeInfo {
    details: DatanodeDetails,
    /// Shared with the `DatanodeInfo` that replaces this one on a re-registration when
    /// [`ScmHardening::keep_space_on_reregistration`] is on.
    space: Arc<NodeSpace>,
}

impl DatanodeInfo {
    fn new(details: DatanodeDetails, space: Arc<NodeSpace>) -> Self {
        Self { details, space }
    }

    /// The datanode.
    pub fn id(&self) -> DatanodeId {
        self.details.id
    }

    /// What it registered with.
    pub fn details(&self) -> &DatanodeDetails {
        &self.details
    }

    /// The volumes of its last node report (none before the first one).
    pub fn storage_reports(&self) -> Vec<StorageReport> {
        self.space.storage_reports.read(Clone::clone)
    }

    /// Replaces the storage reports; returns the replaced ones.
    fn set_storage_reports(&self, reports: Vec<StorageReport>) -> Vec<StorageReport> {
        self.space
            .storage_reports
            .write(|current| std::mem::replace(current, reports))
    }
}

/// What one space check saw and did
/// ([`PendingContainerTracker::check_space_and_record`]): the values the story of an
/// allocation shows, so a reader sees which storage report and which pending count a grant
/// was decided on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpaceCheck {
    /// The datanode has sent no storage report yet: no slot, nothing recorded.
    NoReport,
    /// The reports' slots were compared with the pending count.
    Checked {
        /// Slots of the storage reports the check read.
        slots: u64,
        /// Pending allocations it counted (after the roll, before the add).
        pending: usize,
        /// Whether the container was recorded.
        recorded: bool,
    },
}

impl SpaceCheck {
    /// Whether the container was recorded.
    pub fn recorded(self) -> bool {
        matches!(self, SpaceCheck::Checked { recorded: true, .. })
    }
}

/// Keeps the pending allocations of every datanode (`PendingContainerTracker`).
///
/// Ozone's space check reads a datanode's storage reports, then takes the bucket's monitor
/// to roll it and check-and-add; with
/// [`ScmHardening::read_reports_under_bucket_lock`] the reports are read under the bucket
/// lock (see its docs for the race that closes).
#[derive(Debug)]
pub struct PendingContainerTracker {
    container_size: u64,
    read_reports_under_bucket_lock: bool,
    clock: Arc<dyn Clock>,
}

impl PendingContainerTracker {
    /// Slots are `container_size` bytes (`ozone.scm.container.size`); the storage reports
    /// are read under the bucket lock when `read_reports_under_bucket_lock`, before it (as
    /// in Ozone) otherwise.
    pub fn new(
        container_size: u64,
        read_reports_under_bucket_lock: bool,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            container_size,
            read_reports_under_bucket_lock,
            clock,
        }
    }

    /// The slot size in bytes.
    pub fn container_size(&self) -> u64 {
        self.container_size
    }

    /// Rolls the bucket, then records `container` if the datanode has a slot beyond its
    /// pending ones; the check and the add are atomic per datanode. No storage report yet:
    /// no slot.
    pub fn check_space_and_record_allocation(
        &self,
        node: &DatanodeInfo,
        container: ContainerId,
    ) -> bool {
        self.check_space_and_record(node, container).recorded()
    }

    /// [`PendingContainerTracker::check_space_and_record_allocation`], with what the check
    /// saw: the slots of the reports it read and the pending count it compared them with.
    pub fn check_space_and_record(
        &self,
        node: &DatanodeInfo,
        container: ContainerId,
    ) -> SpaceCheck {
        let (reports, mut bucket) = if self.read_reports_under_bucket_lock {
            let bucket = node.space.pending.lock();
            let reports = node.storage_reports();
            if reports.is_empty() {
                return SpaceCheck::NoReport;
            }
            (reports, bucket)
        } else {
            // Ozone's order: the reports first, then the bucket's monitor.
            let reports = node.storage_reports();
            if reports.is_empty() {
                return SpaceCheck::NoReport;
            }
            (reports, node.space.pending.lock())
        };
        bucket.roll_if_needed(self.clock.now_ms());
        let pending = bucket.pending_count();
        let recorded = bucket.check_space_and_add(&reports, self.container_size, container);
        SpaceCheck::Checked {
            slots: slots(&reports, self.container_size),
            pending,
            recorded,
        }
    }

    /// Records `container` without a space check (replication targets, the rebuild).
    pub fn record_allocation(&self, node: &DatanodeInfo, container: ContainerId) {
        let mut bucket = node.space.pending.lock();
        bucket.roll_if_needed(self.clock.now_ms());
        bucket.add(container);
    }

    /// Whether the datanode has a slot beyond its pending ones; records nothing (the
    /// placement policy's `hasEnoughSpace`). Reads the reports in the same order as
    /// [`PendingContainerTracker::check_space_and_record_allocation`].
    pub fn has_available_space(&self, node: &DatanodeInfo) -> bool {
        let (reports, mut bucket) = if self.read_reports_under_bucket_lock {
            let bucket = node.space.pending.lock();
            (node.storage_reports(), bucket)
        } else {
            let reports = node.storage_reports();
            (reports, node.space.pending.lock())
        };
        bucket.roll_if_needed(self.clock.now_ms());
        has_slot(&reports, self.container_size, bucket.pending_count())
    }

    /// Removes `container` from the datanode's bucket; returns whether it was pending.
    pub fn remove_pending_allocation(&self, node: &DatanodeInfo, container: ContainerId) -> bool {
        let mut bucket = node.space.pending.lock();
        bucket.roll_if_needed(self.clock.now_ms());
        bucket.remove(container)
    }

    /// The datanode's pending containers after a roll.
    pub fn pending(&self, node: &DatanodeInfo) -> BTreeSet<ContainerId> {
        let mut bucket = node.space.pending.lock();
        bucket.roll_if_needed(self.clock.now_ms());
        bucket.containers()
    }

    /// Drops every pending entry of the datanode; returns the containers dropped.
    pub fn clear(&self, node: &DatanodeInfo) -> BTreeSet<ContainerId> {
        let mut bucket = node.space.pending.lock();
        let dropped = bucket.containers();
        bucket.clear();
        dropped
    }
}

/// The registered datanodes of one SCM (`SCMNodeManager` and its `NodeStateManager`, the
/// parts used here).
#[derive(Debug)]
pub struct NodeManager {
    nodes: RwCell<BTreeMap<DatanodeId, Arc<DatanodeInfo>>>,
    tracker: PendingContainerTracker,
    keep_space_on_reregistration: bool,
    clock: Arc<dyn Clock>,
    roll_interval_ms: u64,
}

impl NodeManager {
    /// Feeds `state` each registered datanode's details, what its last storage reports
    /// tell the SCM and its pending allocations (both windows of its bucket).
    ///
    /// The reports are fed as their readers see them: whether there are any (the safe-mode
    /// rule, [`SpaceCheck::NoReport`]) and their container [`slots`] (the space check and
    /// the placement policy compare nothing else). Their bytes are left out: each node
    /// report replaces them, and a write or a deletion that moves the bytes but not the
    /// slots changes nothing the SCM does next. Feeding the bytes would make every first
    /// heartbeat after a write a state of its own.
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        let container_size = self.tracker.container_size();
        for node in self.all() {
            node.details.hash(state);
            let reports = node.storage_reports();
            let seen = (!reports.is_empty()).then(|| slots(&reports, container_size));
            seen.hash(state);
            node.space.pending.lock().hash(state);
        }
    }

    /// No datanode registered yet; `hardening` as the SCM's behavior runs it.
    pub fn new(
        container_size: u64,
        roll_interval_ms: u64,
        hardening: ScmHardening,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            nodes: RwCell::new(BTreeMap::new()),
            tracker: PendingContainerTracker::new(
                container_size,
                hardening.read_reports_under_bucket_lock,
                Arc::clone(&clock),
            ),
            keep_space_on_reregistration: hardening.keep_space_on_reregistration,
            clock,
            roll_interval_ms,
        }
    }

    /// The tracker of pending allocations.
    pub fn tracker(&self) -> &PendingContainerTracker {
        &self.tracker
    }

    /// No storage report, an empty bucket.
    fn fresh_space(&self) -> Arc<NodeSpace> {
        Arc::new(NodeSpace {
            storage_reports: RwCell::new(Vec::new()),
            pending: Mutex::new(TwoWindowBucket::new(
                self.clock.now_ms(),
                self.roll_interval_ms,
            )),
        })
    }

    /// `SCMNodeManager.register`: a datanode new to this SCM gets a `DatanodeInfo` with no
    /// storage report and an empty bucket, then `node_report` is processed. A registered
    /// one whose address, version or ports changed gets a new `DatanodeInfo`
    /// (`NodeStateManager.updateNode`) with no storage report and an empty bucket, unless
    /// [`ScmHardening::keep_space_on_reregistration`] hands it the old one's space record
    /// (its reports cleared, its bucket kept); `node_report` is processed after the
    /// replacement only for an address change. Otherwise nothing changes.
    pub fn register(
        &self,
        details: &DatanodeDetails,
        node_report: Vec<StorageReport>,
    ) -> Registration {
        // Made before the map is locked (it reads the clock); dropped if unused.
        let fresh = self.fresh_space();
        let keep = self.keep_space_on_reregistration;
        let replaced = self.nodes.write(|nodes| {
            let (change, space) = match nodes.get(&details.id) {
                None => (None, fresh),
                Some(old) => {
                    let change = old.details.change_to(details)?;
                    let space = if keep { Arc::clone(&old.space) } else { fresh };
                    (Some(change), space)
                }
            };
            let info = DatanodeInfo::new(details.clone(), space);
            nodes.insert(details.id, Arc::new(info));
            Some(change)
        });
        let Some(replaced) = replaced else {
            return Registration::Unchanged;
        };
        if replaced.is_some() && keep {
            // As fresh as Ozone's for the reports: none until the next one.
            self.set_storage_reports(details.id, Vec::new());
        }
        // As in Ozone, the node report is processed after the map was updated.
        match replaced {
            None => {
                self.set_storage_reports(details.id, node_report);
                Registration::New
            }
            Some(RegistrationChange::Address) => {
                self.set_storage_reports(details.id, node_report);
                Registration::Updated(RegistrationChange::Address)
            }
            Some(change) => Registration::Updated(change),
        }
    }

    fn set_storage_reports(&self, id: DatanodeId, reports: Vec<StorageReport>) {
        if let Ok(node) = self.get(id) {
            let _ = node.set_storage_reports(reports);
        }
    }

    /// A registered datanode.
    pub fn get(&self, id: DatanodeId) -> Result<Arc<DatanodeInfo>, ScmError> {
        self.nodes
            .read(|nodes| nodes.get(&id).cloned())
            .ok_or(ScmError::UnknownDatanode { datanode: id })
    }

    /// Every registered datanode, by id.
    pub fn all(&self) -> Vec<Arc<DatanodeInfo>> {
        self.nodes.read(|nodes| nodes.values().cloned().collect())
    }

    /// Replaces the datanode's storage reports (a node report); returns the replaced ones.
    pub fn process_node_report(
        &self,
        id: DatanodeId,
        reports: Vec<StorageReport>,
    ) -> Result<Vec<StorageReport>, ScmError> {
        Ok(self.get(id)?.set_storage_reports(reports))
    }
}
