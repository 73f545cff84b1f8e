//! One Storage Container Manager: container allocation on the leader, the replicated
//! add-container, container reports, leadership and safe mode (`ContainerManagerImpl`,
//! `ContainerStateManagerImpl`, `SCMContext`, the service hooks), and the fix of
//! HDDS-16891.
//!
//! **The race (HDDS-16891).** Only the leader records a slot when it grants a container;
//! followers apply the add-container without one, a restart loads the table without one.
//! After a leader change or restart the new serving leader's buckets are empty, and the
//! slots of granted but unwritten containers are granted again.
//!
//! **The fix.** On becoming the serving leader (leader ready and out of safe mode) the SCM
//! drops every pending entry, then records a slot for each OPEN container on each datanode
//! of its pipeline that has no replica of it; an allocation gate, held by the rebuild and
//! checked by allocation, keeps every allocation out until the rebuild of this term is done.
//! [`ScmBehavior::Hardened`] also applies the log under the gate before it rebuilds.
//!
//! # Example
//!
//! ```
//! # hadoop_ref::sync::run_example(|| {
//! use hadoop_ref::clock::ManualClock;
//! use hadoop_ref::hdds::ids::{DatanodeId, PipelineId, ScmId};
//! use hadoop_ref::hdds::report::StorageReport;
//! use hadoop_ref::scm::datanode_details::DatanodeDetails;
//! use hadoop_ref::scm::ha::ScmDb;
//! use hadoop_ref::scm::{Pipeline, ScmBehavior, ScmConfig, ScmError, StorageContainerManager};
//! use hadoop_ref::sim::ratis::SimulatedRatis;
//! use hadoop_ref::sync::Arc;
//!
//! let ring = SimulatedRatis::new();
//! let config = ScmConfig::with_pipelines(vec![Pipeline {
//!     id: PipelineId(1),
//!     nodes: vec![DatanodeId(1)],
//! }]);
//! let scm = StorageContainerManager::new(
//!     ScmId(1), ScmBehavior::Hardened, config.clone(), ring.log(),
//!     Arc::new(ScmDb::new()), ManualClock::new(0).shared(),
//! )?;
//! // One slot: 1.5 containers of space.
//! let space = StorageReport::new(config.container_size * 3 / 2, 0, 0);
//! scm.register_datanode(&DatanodeDetails::new(DatanodeId(1)), vec![space]);
//! scm.exit_safe_mode();
//! scm.notify_leader_changed(ring.elect(ScmId(1)));
//! scm.notify_leader_ready();
//! let c1 = scm.allocate_container()?;
//! assert_eq!(scm.allocate_container(), Err(ScmError::NoPipelineWithSpace));
//! # Ok::<(), ScmError>(())
//! # });
//! ```

use std::collections::{BTreeMap, BTreeSet};

use super::config::{ScmBehavior, ScmConfig, ScmHardening};
use super::container_info::{ContainerInfo, LifeCycleState, Pipeline};
use super::datanode_details::{DatanodeDetails, Registration};
use super::error::ScmError;
use super::ha::{CatchUp, LogEntry, ReplicatedLog, ScmDb};
use super::node::{DatanodeInfo, NodeManager};
use super::pipeline_choice::PipelineChooser;
use crate::clock::Clock;
use crate::hdds::container::ContainerReplicaReport;
use crate::hdds::ids::{ContainerId, DatanodeId, ScmId};
use crate::hdds::report::StorageReport;
use crate::hdds::term::Term;
use crate::sync::atomic::{AtomicBool, Ordering};
use crate::sync::{Arc, Mutex, RwLock};

/// `SCMContext`: what this SCM believes about its leadership and safe mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScmContext {
    /// Ratis told it that it leads.
    pub is_leader: bool,
    /// Its leader term (0 when not leading).
    pub term: Term,
    /// Ratis told it that it is leader-ready and the services were notified.
    pub leader_ready: bool,
    /// In safe mode.
    pub in_safe_mode: bool,
}

impl ScmContext {
    /// Leader ready and out of safe mode: the point at which services run (`isLeaderReady
    /// && !inSafeMode`).
    pub fn is_serving(&self) -> bool {
        self.is_leader && self.leader_ready && !self.in_safe_mode
    }
}

/// The container table of this SCM (`ContainerStateManagerImpl`), with the replicas
/// learned from container reports.
#[derive(Debug, Default)]
struct ContainerTable {
    applied_index: u64,
    containers: BTreeMap<ContainerId, ContainerInfo>,
    replicas: BTreeMap<ContainerId, BTreeSet<DatanodeId>>,
}

/// What the `ContainerManager` lock guards: the allocation gate (the term whose rebuild is
/// done) and the pipeline choice (Ozone's `random`, used under that lock).
#[derive(Debug)]
struct AllocationGate {
    rebuilt_for_term: Option<Term>,
    chooser: PipelineChooser,
}

/// One SCM of the HA ring.
#[derive(Debug)]
pub struct StorageContainerManager {
    id: ScmId,
    behavior: ScmBehavior,
    /// The additions the behavior runs (none unless [`ScmBehavior::Hardened`]).
    hardening: ScmHardening,
    config: ScmConfig,
    log: Arc<dyn ReplicatedLog>,
    db: Arc<ScmDb>,
    nodes: NodeManager,
    table: RwLock<ContainerTable>,
    context: RwLock<ScmContext>,
    /// The Ratis division's leader-ready flag: the RPC layer's leader check
    /// (`SCMRatisServer`'s division is leader-ready). Ratis sets it just *before*
    /// `SCMStateMachine.notifyLeaderReady` has `SCMServiceManager` notify the services,
    /// which is why the fix needs a gate (HDDS-16891).
    ratis_leader_ready: AtomicBool,
    /// The `ContainerManager` lock and the gate it guards.
    allocation: Mutex<AllocationGate>,
}

impl StorageContainerManager {
    /// Starts an SCM: loads the container table from `db`, in safe mode, not leading, no
    /// datanode registered (they register again after every start).
    pub fn new(
        id: ScmId,
        behavior: ScmBehavior,
        config: ScmConfig,
        log: Arc<dyn ReplicatedLog>,
        db: Arc<ScmDb>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, ScmError> {
        config.validate()?;
        let loaded = db.load();
        let hardening = behavior.hardening(config.hardening);
        Ok(Self {
            id,
            behavior,
            hardening,
            nodes: NodeManager::new(
                config.container_size,
                config.roll_interval_ms,
                hardening,
                clock,
            ),
            allocation: Mutex::new(AllocationGate {
                rebuilt_for_term: None,
                chooser: PipelineChooser::new(config.pipeline_choice_seed, id),
            }),
            config,
            log,
            db,
            table: RwLock::new(ContainerTable {
                applied_index: loaded.index,
                containers: loaded.containers,
                replicas: BTreeMap::new(),
            }),
            context: RwLock::new(ScmContext {
                is_leader: false,
                term: 0,
                leader_ready: false,
                in_safe_mode: true,
            }),
            ratis_leader_ready: AtomicBool::new(false),
        })
    }

    /// This SCM's id.
    pub fn id(&self) -> ScmId {
        self.id
    }

    /// The allocation logic in use.
    pub fn behavior(&self) -> ScmBehavior {
        self.behavior
    }

    /// The additions beyond the seed it runs: [`ScmConfig::hardening`] for
    /// [`ScmBehavior::Hardened`], none for the others.
    pub fn hardening(&self) -> ScmHardening {
        self.hardening
    }

    /// Its settings.
    pub fn config(&self) -> &ScmConfig {
        &self.config
    }

    /// What it believes about leadership and safe mode.
    pub fn context(&self) -> ScmContext {
        *self.context.read()
    }

    /// Its registered datanodes and their pending allocations.
    pub fn nodes(&self) -> &NodeManager {
        &self.nodes
    }

    // --- leadership and safe mode (`SCMStateMachine`, `SCMContext`, `SCMSafeModeManager`) --

    /// Ratis made this SCM leader at `term` (`notifyLeaderChanged`): leading, not ready yet.
    pub fn notify_leader_changed(&self, term: Term) {
        let mut context = self.context.write();
        context.is_leader = true;
        context.term = term;
        context.leader_ready = false;
        self.ratis_leader_ready.store(false, Ordering::Release);
    }

    /// Ratis made this SCM leader-ready (`notifyLeaderReady`): it has applied the log, the
    /// RPC layer's leader check opens, then the services are notified.
    pub fn notify_leader_ready(&self) {
        self.catch_up();
        if !self.context.read().is_leader {
            return;
        }
        self.ratis_leader_ready.store(true, Ordering::Release);
        self.context.write().leader_ready = true;
        self.notify_status_changed();
    }

    /// Ratis told this SCM it lost leadership (`notifyNotLeader`).
    pub fn notify_not_leader(&self) {
        self.ratis_leader_ready.store(false, Ordering::Release);
        {
            let mut context = self.context.write();
            context.is_leader = false;
            context.leader_ready = false;
            context.term = 0;
        }
        self.allocation.lock().rebuilt_for_term = None;
        self.notify_status_changed();
    }

    /// Safe-mode rules are met (`SCMSafeModeManager.emitSafeModeStatus`).
    pub fn exit_safe_mode(&self) {
        self.context.write().in_safe_mode = false;
        self.notify_status_changed();
    }

    /// `SCMServiceManager.notifyStatusChanged`, as seen by the pending-allocation service:
    /// on becoming the serving leader, rebuild (unless the legacy logic runs no rebuild).
    pub fn notify_status_changed(&self) {
        if !self.context().is_serving() {
            return;
        }
        match self.behavior {
            ScmBehavior::LegacyNoRebuild => {}
            ScmBehavior::Hardened | ScmBehavior::SeedPatch => {
                // The gate is held for the whole rebuild: an allocation waits for it, and is
                // refused (`NotReady`) until the rebuild of its term is done.
                let mut gate = self.allocation.lock();
                // Read again under the gate: a notification that raced a step-down and a
                // re-election must not rebuild for, or open the gate to, a stale term.
                let context = self.context();
                if !context.is_serving() || gate.rebuilt_for_term == Some(context.term) {
                    return;
                }
                if self.hardening.apply_log_before_rebuild {
                    // Apply what committed before the gate was taken, so a container whose
                    // submit ended before the rebuild (even unconfirmed) is in the table and
                    // keeps its slot. No submit can be in flight: allocation holds the gate.
                    self.catch_up();
                }
                self.rebuild_pending_allocations();
                gate.rebuilt_for_term = Some(context.term);
            }
            ScmBehavior::LegacyRebuildWithoutGate => {
                let term = self.context().term;
                if self.allocation.lock().rebuilt_for_term != Some(term) {
                    self.rebuild_pending_allocations();
                    self.allocation.lock().rebuilt_for_term = Some(term);
                }
            }
        }
    }

    /// The rebuild: drop every pending entry, then record a slot for each OPEN container
    /// on each known datanode of its pipeline that has no replica of it. No space check:
    /// these containers are granted already. Returns the slots recorded.
    pub fn rebuild_pending_allocations(&self) -> usize {
        let nodes: BTreeMap<DatanodeId, Arc<DatanodeInfo>> =
            self.nodes.all().into_iter().map(|n| (n.id(), n)).collect();
        let tracker = self.nodes.tracker();
        for node in nodes.values() {
            tracker.clear(node);
        }
        let pipelines: BTreeMap<_, _> = self.config.pipelines.iter().map(|p| (p.id, p)).collect();
        let table = self.table.read();
        let mut recorded = 0;
        for info in table.containers.values() {
            if info.state != LifeCycleState::Open {
                continue;
            }
            // A container of an unknown pipeline has no datanodes to reserve on.
            let Some(pipeline) = pipelines.get(&info.pipeline) else {
                continue;
            };
            let replicas = table.replicas.get(&info.id);
            for datanode in &pipeline.nodes {
                if replicas.is_some_and(|r| r.contains(datanode)) {
                    continue;
                }
                if let Some(node) = nodes.get(datanode) {
                    tracker.record_allocation(node, info.id);
                    recorded += 1;
                }
            }
        }
        recorded
    }

    // --- allocation (`ContainerManagerImpl.allocateContainer`) ----------------------------

    /// `allocateContainer` as the client RPC reaches it: leader check (the Ratis flag), safe
    /// mode, the gate (behaviors that rebuild behind it), then one OPEN pipeline chosen at
    /// random (`ContainerManagerImpl.allocateContainer`); its datanodes' slots are reserved
    /// all-or-nothing, or the allocation fails without trying another pipeline. Then the
    /// add-container is submitted to the log. A submit that is not confirmed keeps the
    /// reservation: Ratis may commit an entry it answered with an error, and a slot dropped
    /// then would be granted twice.
    pub fn allocate_container(&self) -> Result<ContainerId, ScmError> {
        let context = self.context();
        if !context.is_leader || !self.ratis_leader_ready.load(Ordering::Acquire) {
            return Err(ScmError::NotLeader { scm: self.id });
        }
        if context.in_safe_mode {
            return Err(ScmError::InSafeMode);
        }
        let mut gate = self.allocation.lock();
        if self.behavior.gates_allocation() && gate.rebuilt_for_term != Some(context.term) {
            return Err(ScmError::NotReady);
        }
        let pipeline = gate
            .chooser
            .choose(self.config.pipelines.len())
            .and_then(|index| self.config.pipelines.get(index))
            .ok_or(ScmError::NoPipelineWithSpace)?;
        let container = self
            .reserve(pipeline)
            .ok_or(ScmError::NoPipelineWithSpace)?;
        let info = ContainerInfo {
            id: container,
            state: LifeCycleState::Open,
            pipeline: pipeline.id,
        };
        let submitted = self
            .log
            .submit(self.id, context.term, LogEntry::AddContainer(info));
        drop(gate);
        match submitted {
            Ok(_) => {
                self.catch_up();
                Ok(container)
            }
            Err(reason) => Err(ScmError::SubmitNotConfirmed { container, reason }),
        }
    }

    /// `PipelineManagerImpl.checkSpaceAndRecordAllocation`: a fresh container id reserved
    /// on every datanode of `pipeline`, or on none (rolled back on the first refusal).
    fn reserve(&self, pipeline: &Pipeline) -> Option<ContainerId> {
        let nodes: Vec<Arc<DatanodeInfo>> = pipeline
            .nodes
            .iter()
            .map(|&d| self.nodes.get(d).ok())
            .collect::<Option<_>>()?;
        let tracker = self.nodes.tracker();
        let container = self.log.next_container_id();
        for (reserved, node) in nodes.iter().enumerate() {
            if !tracker.check_space_and_record_allocation(node, container) {
                for node in &nodes[..reserved] {
                    tracker.remove_pending_allocation(node, container);
                }
                return None;
            }
        }
        Some(container)
    }

    // --- the replicated table ------------------------------------------------------------

    /// Applies every committed entry it has not applied yet, installing a snapshot first
    /// when the log was compacted past it. Returns the index applied up to.
    pub fn catch_up(&self) -> u64 {
        let mut table = self.table.write();
        let CatchUp { snapshot, entries } = self.log.catch_up(table.applied_index);
        if let Some(snapshot) = snapshot {
            table.containers = snapshot.containers.clone();
            table.applied_index = snapshot.index;
            self.db.install(snapshot);
        }
        for (index, entry) in entries {
            debug_assert!(index > table.applied_index, "entries arrive in order");
            super::ha::apply_to(&mut table.containers, &entry);
            table.applied_index = index;
            self.db.apply(index, &entry);
        }
        table.applied_index
    }

    /// A copy of the container.
    pub fn container(&self, id: ContainerId) -> Option<ContainerInfo> {
        self.table.read().containers.get(&id).cloned()
    }

    /// Every container, by id.
    pub fn containers(&self) -> Vec<ContainerInfo> {
        self.table.read().containers.values().cloned().collect()
    }

    /// Datanodes that reported a replica of the container.
    pub fn replicas(&self, id: ContainerId) -> BTreeSet<DatanodeId> {
        self.table
            .read()
            .replicas
            .get(&id)
            .cloned()
            .unwrap_or_default()
    }

    // --- datanodes -----------------------------------------------------------------------

    /// A datanode registers with its details and a node report (`SCMNodeManager.register`;
    /// see [`NodeManager::register`] for when its `DatanodeInfo` and bucket are replaced).
    pub fn register_datanode(
        &self,
        details: &DatanodeDetails,
        node_report: Vec<StorageReport>,
    ) -> Registration {
        self.nodes.register(details, node_report)
    }

    /// A node report: the datanode's volumes.
    pub fn process_node_report(
        &self,
        datanode: DatanodeId,
        reports: Vec<StorageReport>,
    ) -> Result<(), ScmError> {
        self.nodes.process_node_report(datanode, reports)
    }

    /// A container report (run on every SCM, leader or not): each container reported for
    /// the first time by this datanode gains the replica, and its pending entry on the
    /// datanode is removed. Unknown containers are reported back after the known ones were
    /// applied (a lagging follower may not have applied their add-container yet).
    pub fn process_container_report(
        &self,
        datanode: DatanodeId,
        replicas: &[ContainerReplicaReport],
    ) -> Result<(), ScmError> {
        let node = self.nodes.get(datanode)?;
        let mut unknown = Vec::new();
        let mut confirmed = Vec::new();
        {
            let mut table = self.table.write();
            for container in replicas.iter().map(|r| r.container) {
                if !table.containers.contains_key(&container) {
                    unknown.push(container);
                } else if table
                    .replicas
                    .entry(container)
                    .or_default()
                    .insert(datanode)
                {
                    confirmed.push(container);
                }
            }
        }
        for container in confirmed {
            self.nodes
                .tracker()
                .remove_pending_allocation(&node, container);
        }
        if unknown.is_empty() {
            Ok(())
        } else {
            Err(ScmError::UnknownContainers {
                datanode,
                containers: unknown,
            })
        }
    }

    /// The pending containers of a datanode (after a roll).
    pub fn pending(&self, datanode: DatanodeId) -> Result<BTreeSet<ContainerId>, ScmError> {
        let node = self.nodes.get(datanode)?;
        Ok(self.nodes.tracker().pending(&node))
    }
}
