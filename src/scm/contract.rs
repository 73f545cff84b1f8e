//! The SCM's pending-allocation boundary (HDDS-16891): [`PendingContainerTrackerApi`],
//! what Ratis's leadership notifications, clients' allocations and datanodes' reports ask
//! of an SCM, so that another implementation of the pending allocations can stand where
//! this crate's `StorageContainerManager` does and be checked the same way.
//!
//! **The race.** A container granted but not yet written has no footprint in any storage
//! report; only the leader's `PendingContainerTracker` remembers it, so after a leader
//! change or restart the new leader grants its slot again.
//!
//! **The fix** is what the trait's documentation asks of every implementation: on becoming
//! the serving leader, rebuild the pending allocations from the replicated container table
//! before any allocation is served (an allocation gate), and keep them across re-registrations.

use std::collections::BTreeSet;
use std::fmt;

use super::config::{ScmBehavior, ScmConfig};
use super::container_info::ContainerInfo;
use super::container_manager::StorageContainerManager;
use super::datanode_details::{DatanodeDetails, Registration};
use super::error::ScmError;
use super::ha::{ReplicatedLog, ScmDb};
use crate::clock::Clock;
use crate::hdds::container::ContainerReplicaReport;
use crate::hdds::ids::{ContainerId, DatanodeId, ScmId};
use crate::hdds::report::StorageReport;
use crate::hdds::term::Term;
use crate::sync::Arc;

/// An SCM as its pending container allocations are used: Ratis's notifications
/// (`SCMStateMachine.notifyLeaderChanged`, `notifyLeaderReady`, `notifyNotLeader`), the
/// safe-mode exit, a client's `allocateContainer`, and a datanode's registration, node
/// report and container report; with the per-datanode `PendingContainerTracker` and its
/// `TwoWindowBucket`s inside, however the implementation keeps them.
///
/// The boundary carries what a harness of SCMs over one replicated log needs and nothing
/// of this crate's internals: no node manager, no bucket type, no gate. An implementation
/// is given its settings, the [`ReplicatedLog`] (the part of `SCMRatisServer` an SCM
/// uses: submit, catch up, the sequence ids) and its database [`ScmDb`] (what survives a
/// restart) by its [`ScmFactory`]; of the settings it needs the slot size
/// ([`ScmConfig::container_size`]), the roll interval and the OPEN pipelines, and may
/// ignore the rest (the hardening switches, the block-deletion and replication settings).
///
/// # What a conforming SCM guarantees (HDDS-16891)
///
/// - **Grant within the slots.** On the serving leader (leader ready, out of safe mode) an
///   allocation chooses one OPEN pipeline (at random, as
///   `ContainerManagerImpl.allocateContainer` does) whose every datanode has a slot beyond
///   its pending containers (`PendingContainerTracker.hasAvailableSpace`: a volume's free
///   space less its committed space holds one more `ozone.scm.container.size`), records
///   the container as pending on each of them
///   (`PipelineManagerImpl.checkSpaceAndRecordAllocation`), the check and the record
///   atomic per datanode, then submits the add-container to the [`ReplicatedLog`] and
///   applies it. A submit that is not confirmed keeps the slots reserved (Ratis may commit
///   what it answered with an error): [`ScmError::SubmitNotConfirmed`]. It refuses with
///   [`ScmError::NotLeader`] when not the leader-ready leader, [`ScmError::InSafeMode`] in
///   safe mode, and [`ScmError::NoPipelineWithSpace`] when the chosen pipeline does not
///   fit or has a datanode not registered.
/// - **Rebuild before serving.** When it becomes the serving leader (the later of
///   `notifyLeaderReady` and the safe-mode exit), it drops every pending entry and records
///   one for each OPEN container of the table on each datanode of its pipeline that has
///   not reported a replica of it, and serves no allocation of that term before this
///   rebuild is done.
/// - **Confirm by reports.** A container report of a replica removes the container from
///   the datanode's `TwoWindowBucket` and records the replica; a node report replaces the
///   datanode's storage reports; entries age out of a bucket after one to two roll
///   intervals (`ozone.scm.pending.container.roll.interval`), read from the [`Clock`].
/// - **Followers and restarts.** [`catch_up`](Self::catch_up) applies what the log
///   committed (installing a snapshot when the log was compacted past it) and persists it
///   in the [`ScmDb`]; a restarted SCM starts from that database, in safe mode, with no
///   datanode registered and nothing pending.
/// - [`pending`](Self::pending) shows a datanode's pending containers, and the table
///   ([`containers`](Self::containers), [`replicas`](Self::replicas)) what is granted and
///   written: the invariants read them.
///
/// `ScmBehavior::SeedPatch` meets every item; `ScmBehavior::Hardened` also closes the
/// races beyond the seed (the report-order race, the re-election race, re-registration
/// with changed details, a closed container not yet reported), which the suites check
/// when `Hardened` is the reference.
///
/// # Synchronization
///
/// Use [`crate::sync`] (or `hadoop_ref::sync` from another crate) for every lock and
/// atomic, [`Clock`] for the buckets' roll intervals: loom and shuttle see only those.
pub trait PendingContainerTrackerApi: Send + Sync + fmt::Debug + 'static {
    /// This SCM's id.
    fn id(&self) -> ScmId;
    /// Ratis made this SCM leader at `term`; not ready yet.
    fn notify_leader_changed(&self, term: Term);
    /// The leader applied its log: it may serve once out of safe mode.
    fn notify_leader_ready(&self);
    /// Another SCM leads.
    fn notify_not_leader(&self);
    /// Safe mode ends.
    fn exit_safe_mode(&self);
    /// Whether it is the serving leader (leader ready, out of safe mode).
    fn is_serving(&self) -> bool;
    /// Applies what the replicated log committed; returns the applied index.
    fn catch_up(&self) -> u64;
    /// A client's `allocateContainer`.
    fn allocate_container(&self) -> Result<ContainerId, ScmError>;
    /// A datanode registers (after every start of either side) with its node report.
    fn register_datanode(
        &self,
        details: &DatanodeDetails,
        reports: Vec<StorageReport>,
    ) -> Registration;
    /// A heartbeat's node report.
    fn process_node_report(
        &self,
        datanode: DatanodeId,
        reports: Vec<StorageReport>,
    ) -> Result<(), ScmError>;
    /// A container report (incremental).
    fn process_container_report(
        &self,
        datanode: DatanodeId,
        replicas: &[ContainerReplicaReport],
    ) -> Result<(), ScmError>;
    /// A container of the table.
    fn container(&self, id: ContainerId) -> Option<ContainerInfo> {
        self.containers().into_iter().find(|info| info.id == id)
    }
    /// Every container of the table.
    fn containers(&self) -> Vec<ContainerInfo>;
    /// The datanodes that reported a replica of `id`.
    fn replicas(&self, id: ContainerId) -> BTreeSet<DatanodeId>;
    /// A datanode's pending containers.
    fn pending(&self, datanode: DatanodeId) -> Result<BTreeSet<ContainerId>, ScmError>;
}

/// Starts an SCM for a scenario or a conformance run: SCM `id` with `config`, over the
/// replicated `log`, loading its table from `db`, in safe mode, not leading.
///
/// [`ScmBehavior`] is one (the crate's `StorageContainerManager`), and so is any function
/// or closure with the signature of [`ScmFactory::create`].
pub trait ScmFactory: Copy + Send + Sync + 'static {
    /// What it starts.
    type Scm: PendingContainerTrackerApi;

    /// A freshly started SCM.
    fn create(
        &self,
        id: ScmId,
        config: ScmConfig,
        log: Arc<dyn ReplicatedLog>,
        db: Arc<ScmDb>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self::Scm, ScmError>;
}

impl ScmFactory for ScmBehavior {
    type Scm = StorageContainerManager;

    fn create(
        &self,
        id: ScmId,
        config: ScmConfig,
        log: Arc<dyn ReplicatedLog>,
        db: Arc<ScmDb>,
        clock: Arc<dyn Clock>,
    ) -> Result<StorageContainerManager, ScmError> {
        StorageContainerManager::new(id, *self, config, log, db, clock)
    }
}

impl<S, F> ScmFactory for F
where
    S: PendingContainerTrackerApi,
    F: Fn(
            ScmId,
            ScmConfig,
            Arc<dyn ReplicatedLog>,
            Arc<ScmDb>,
            Arc<dyn Clock>,
        ) -> Result<S, ScmError>
        + Copy
        + Send
        + Sync
        + 'static,
{
    type Scm = S;

    fn create(
        &self,
        id: ScmId,
        config: ScmConfig,
        log: Arc<dyn ReplicatedLog>,
        db: Arc<ScmDb>,
        clock: Arc<dyn Clock>,
    ) -> Result<S, ScmError> {
        self(id, config, log, db, clock)
    }
}

impl PendingContainerTrackerApi for StorageContainerManager {
    fn id(&self) -> ScmId {
        StorageContainerManager::id(self)
    }
    fn notify_leader_changed(&self, term: Term) {
        StorageContainerManager::notify_leader_changed(self, term);
    }
    fn notify_leader_ready(&self) {
        StorageContainerManager::notify_leader_ready(self);
    }
    fn notify_not_leader(&self) {
        StorageContainerManager::notify_not_leader(self);
    }
    fn exit_safe_mode(&self) {
        StorageContainerManager::exit_safe_mode(self);
    }
    fn is_serving(&self) -> bool {
        self.context().is_serving()
    }
    fn catch_up(&self) -> u64 {
        StorageContainerManager::catch_up(self)
    }
    fn allocate_container(&self) -> Result<ContainerId, ScmError> {
        StorageContainerManager::allocate_container(self)
    }
    fn register_datanode(
        &self,
        details: &DatanodeDetails,
        reports: Vec<StorageReport>,
    ) -> Registration {
        StorageContainerManager::register_datanode(self, details, reports)
    }
    fn process_node_report(
        &self,
        datanode: DatanodeId,
        reports: Vec<StorageReport>,
    ) -> Result<(), ScmError> {
        StorageContainerManager::process_node_report(self, datanode, reports)
    }
    fn process_container_report(
        &self,
        datanode: DatanodeId,
        replicas: &[ContainerReplicaReport],
    ) -> Result<(), ScmError> {
        StorageContainerManager::process_container_report(self, datanode, replicas)
    }
    fn container(&self, id: ContainerId) -> Option<ContainerInfo> {
        StorageContainerManager::container(self, id)
    }
    fn containers(&self) -> Vec<ContainerInfo> {
        StorageContainerManager::containers(self)
    }
    fn replicas(&self, id: ContainerId) -> BTreeSet<DatanodeId> {
        StorageContainerManager::replicas(self, id)
    }
    fn pending(&self, datanode: DatanodeId) -> Result<BTreeSet<ContainerId>, ScmError> {
        StorageContainerManager::pending(self, datanode)
    }
}
