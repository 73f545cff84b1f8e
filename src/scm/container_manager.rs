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
//! # Events
//!
//! For the [story](crate::story) of a failure, each with `node` set to the SCM's id:
//! `started`, `safe mode exited`, `became leader`, `leader ready`, `stepped down`;
//! `buckets rebuilt` (the pending entries dropped, the containers reserved again, the
//! slots recorded), `allocation gate opened` and `allocation gate closed` (behaviors with
//! a gate); `slots reserved` (what each datanode's space check saw: the slots of the
//! reports it read and the pending count), `allocation granted`, `allocation refused`
//! (with a `why`); `log applied`, `snapshot installed`; `datanode re-registered` (whether
//! the bucket was kept or is empty), `storage report processed` (only when the slots
//! changed), `container report processed` (the replicas confirmed and the pending entries
//! they removed); `command queued`, `container state updated` and `container state not
//! updated` (a lifecycle change through the log), `replication manager running` (its
//! pending ops cleared for a new term), `over-replicated replica deleted`; the block
//! deletion's `delete transactions added`, `delete blocks command queued`, `delete
//! transactions removed` and `block deleting round skipped`. They carry values already in hand: logging adds no synchronization, so
//! loom and shuttle explore the same interleavings with and without a recorder.
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
use std::fmt;

use super::command_queue::CommandQueue;
use super::config::{ScmBehavior, ScmConfig, ScmHardening};
use super::container_info::{ContainerInfo, LifeCycleState, Pipeline};
use super::deleted_block_log::DeleteTransactionStatus;
use super::error::ScmError;
use super::ha::{CatchUp, LogEntry, ReplicatedLog, ScmDb, Snapshot};
use super::node::{DatanodeInfo, NodeManager, SpaceCheck};
use super::pipeline_choice::PipelineChooser;
use crate::clock::Clock;
use crate::hdds::container::ContainerReplicaReport;
use crate::hdds::ids::{ContainerId, DatanodeId, ScmId};
use crate::hdds::report::StorageReport;
use crate::hdds::term::Term;
use crate::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use crate::sync::{Arc, Mutex, RwCell, RwLock};

mod block_deletion;
mod close_handlers;
mod container_deletion;
mod heartbeat;
mod leadership;
mod over_replication;
mod quasi_closed_stuck;
mod replication_manager;
mod replication_processors;
mod replication_state;
mod report_decision;
mod reports;
mod under_replication;

use replication_state::ReplicationManagerState;

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

/// The replicated tables as this SCM applied them (`ContainerStateManagerImpl`, the
/// deleted-block log's table), with the replicas learned from container reports.
#[derive(Debug, Default)]
struct ContainerTable {
    applied: Snapshot,
    /// Each reported replica as its datanode last reported it (`ContainerReplica`: state,
    /// block count, used bytes, data checksum).
    replicas: BTreeMap<ContainerId, BTreeMap<DatanodeId, ContainerReplicaReport>>,
}

impl ContainerTable {
    /// The datanodes that reported a replica of `container`.
    fn holders(&self, container: ContainerId) -> BTreeSet<DatanodeId> {
        self.replicas
            .get(&container)
            .map(|r| r.keys().copied().collect())
            .unwrap_or_default()
    }
}

/// What the `ContainerManager` lock guards: the allocation gate (the term whose rebuild is
/// done) and the pipeline choice (Ozone's `random`, used under that lock).
#[derive(Debug)]
struct AllocationGate {
    rebuilt_for_term: Option<Term>,
    chooser: PipelineChooser,
}

/// A list as an event field: `c1,c2`, or `-` when empty.
struct Listed<'a, T>(&'a [T]);

impl<T: fmt::Display> fmt::Display for Listed<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("-");
        }
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

/// The slots of a datanode's storage reports as an event field: `none` when SCM holds no
/// storage report of it.
struct Slots(Option<u64>);

impl Slots {
    fn of(reports: &[StorageReport], container_size: u64) -> Self {
        Self((!reports.is_empty()).then(|| super::pending::slots(reports, container_size)))
    }
}

impl fmt::Display for Slots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(slots) => write!(f, "{slots}"),
            None => f.write_str("none"),
        }
    }
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
    /// What it believes of leadership and safe mode (`SCMContext`, read and written under
    /// its read-write lock): a cell, each access one step.
    context: RwCell<ScmContext>,
    /// The Ratis division's leader-ready flag: the RPC layer's leader check
    /// (`SCMRatisServer`'s division is leader-ready). Ratis sets it just *before*
    /// `SCMStateMachine.notifyLeaderReady` has `SCMServiceManager` notify the services,
    /// which is why the fix needs a gate (HDDS-16891).
    ratis_leader_ready: AtomicBool,
    /// The `ContainerManager` lock and the gate it guards.
    allocation: Mutex<AllocationGate>,
    clock: Arc<dyn Clock>,
    /// Commands waiting for each datanode's heartbeat (`SCMNodeManager`'s queue).
    commands: CommandQueue,
    /// Ids of the commands this SCM creates (with its id in the high bits).
    next_command_id: AtomicU64,
    /// The leader's delete transactions in flight.
    deletion: Mutex<DeleteTransactionStatus>,
    /// The replication manager's status and pending ops.
    replication: Mutex<ReplicationManagerState>,
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
        crate::events::debug!(
            node = %id,
            index = loaded.index,
            containers = loaded.containers.len(),
            "started"
        );
        Ok(Self {
            id,
            behavior,
            hardening,
            nodes: NodeManager::new(
                config.container_size,
                config.roll_interval_ms,
                hardening,
                Arc::clone(&clock),
            ),
            clock,
            commands: CommandQueue::new(config.command_queue_limit),
            next_command_id: AtomicU64::new(1),
            deletion: Mutex::new(DeleteTransactionStatus::new()),
            replication: Mutex::new(ReplicationManagerState::default()),
            allocation: Mutex::new(AllocationGate {
                rebuilt_for_term: None,
                chooser: PipelineChooser::new(config.pipeline_choice_seed, id),
            }),
            config,
            log,
            db,
            table: RwLock::new(ContainerTable {
                applied: loaded,
                replicas: BTreeMap::new(),
            }),
            context: RwCell::new(ScmContext {
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
        self.context.read(|context| *context)
    }

    /// Its registered datanodes and their pending allocations.
    pub fn nodes(&self) -> &NodeManager {
        &self.nodes
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
            crate::events::debug!(node = %self.id, why = "not leader", "allocation refused");
            return Err(ScmError::NotLeader { scm: self.id });
        }
        if context.in_safe_mode {
            crate::events::debug!(node = %self.id, why = "in safe mode", "allocation refused");
            return Err(ScmError::InSafeMode);
        }
        let mut gate = self.allocation.lock();
        if self.behavior.gates_allocation() && gate.rebuilt_for_term != Some(context.term) {
            crate::events::debug!(
                node = %self.id,
                term = context.term,
                why = "rebuild not done",
                "allocation refused"
            );
            return Err(ScmError::NotReady);
        }
        let Some(pipeline) = gate
            .chooser
            .choose(self.config.pipelines.len())
            .and_then(|index| self.config.pipelines.get(index))
        else {
            crate::events::debug!(node = %self.id, why = "no open pipeline", "allocation refused");
            return Err(ScmError::NoPipelineWithSpace);
        };
        let container = self
            .reserve(pipeline)
            .ok_or(ScmError::NoPipelineWithSpace)?;
        let info = ContainerInfo::open(container, pipeline.id);
        let submitted = self
            .log
            .submit(self.id, context.term, LogEntry::AddContainer(info));
        drop(gate);
        match submitted {
            Ok(index) => {
                self.catch_up();
                crate::events::debug!(
                    node = %self.id,
                    container = container.0,
                    pipeline = %pipeline.id,
                    term = context.term,
                    index,
                    "allocation granted"
                );
                Ok(container)
            }
            Err(reason) => {
                // The reservation stays: the entry may still commit.
                crate::events::debug!(
                    node = %self.id,
                    container = container.0,
                    why = "submit not confirmed",
                    reason = %reason,
                    "allocation refused"
                );
                Err(ScmError::SubmitNotConfirmed { container, reason })
            }
        }
    }

    /// `PipelineManagerImpl.checkSpaceAndRecordAllocation`: a fresh container id reserved
    /// on every datanode of `pipeline`, or on none (rolled back on the first refusal).
    fn reserve(&self, pipeline: &Pipeline) -> Option<ContainerId> {
        // Every datanode is resolved first; an unregistered one refuses the pipeline.
        let mut nodes: Vec<Arc<DatanodeInfo>> = Vec::with_capacity(pipeline.nodes.len());
        for &datanode in &pipeline.nodes {
            let Ok(node) = self.nodes.get(datanode) else {
                crate::events::debug!(
                    node = %self.id,
                    pipeline = %pipeline.id,
                    datanode = %datanode,
                    why = "datanode not registered",
                    "allocation refused"
                );
                return None;
            };
            nodes.push(node);
        }
        let tracker = self.nodes.tracker();
        let container = self.log.next_container_id();
        // What each check saw, in the pipeline's order, for the story of the allocation.
        let mut seen_slots = Vec::with_capacity(nodes.len());
        let mut seen_pending = Vec::with_capacity(nodes.len());
        for (reserved, node) in nodes.iter().enumerate() {
            let check = tracker.check_space_and_record(node, container);
            if let SpaceCheck::Checked {
                slots,
                pending,
                recorded: true,
            } = check
            {
                seen_slots.push(slots);
                seen_pending.push(pending);
                continue;
            }
            for node in &nodes[..reserved] {
                tracker.remove_pending_allocation(node, container);
            }
            match check {
                SpaceCheck::Checked { slots, pending, .. } => crate::events::debug!(
                    node = %self.id,
                    container = container.0,
                    pipeline = %pipeline.id,
                    datanode = %node.id(),
                    slots,
                    pending,
                    why = "no slot",
                    "allocation refused"
                ),
                SpaceCheck::NoReport => crate::events::debug!(
                    node = %self.id,
                    container = container.0,
                    pipeline = %pipeline.id,
                    datanode = %node.id(),
                    why = "no storage report",
                    "allocation refused"
                ),
            }
            return None;
        }
        crate::events::debug!(
            node = %self.id,
            container = container.0,
            pipeline = %pipeline.id,
            datanodes = %Listed(&pipeline.nodes),
            slots = %Listed(&seen_slots),
            pending = %Listed(&seen_pending),
            "slots reserved"
        );
        Some(container)
    }

    // --- the replicated table ------------------------------------------------------------

    /// Applies every committed entry it has not applied yet, installing a snapshot first
    /// when the log was compacted past it. Returns the index applied up to.
    pub fn catch_up(&self) -> u64 {
        let mut table = self.table.write();
        let CatchUp { snapshot, entries } = self.log.catch_up(table.applied.index);
        if let Some(snapshot) = snapshot {
            crate::events::debug!(
                node = %self.id,
                index = snapshot.index,
                containers = snapshot.containers.len(),
                "snapshot installed"
            );
            table.applied = snapshot.clone();
            self.db.install(snapshot);
        }
        let mut added = Vec::new();
        for (index, entry) in entries {
            debug_assert!(index > table.applied.index, "entries arrive in order");
            if let LogEntry::AddContainer(info) = &entry {
                added.push(info.id);
            }
            table.applied.apply(index, &entry);
            self.db.apply(index, &entry);
        }
        if !added.is_empty() {
            crate::events::debug!(
                node = %self.id,
                index = table.applied.index,
                containers = %Listed(&added),
                "log applied"
            );
        }
        table.applied.index
    }

    /// A copy of the container.
    pub fn container(&self, id: ContainerId) -> Option<ContainerInfo> {
        self.table.read().applied.containers.get(&id).cloned()
    }

    /// Every container, by id. It states, read under the same lock, each OPEN container
    /// still unwritten on a datanode of its pipeline (no replica reported from it): what
    /// the reservations monitor judges the pending reads against (HDDS-16891).
    pub fn containers(&self) -> Vec<ContainerInfo> {
        let table = self.table.read();
        let containers: Vec<ContainerInfo> = table.applied.containers.values().cloned().collect();
        let unwritten: Vec<String> = containers
            .iter()
            .filter(|info| info.state == LifeCycleState::Open)
            .flat_map(|info| {
                let holders = table.holders(info.id);
                self.pipeline_nodes(info)
                    .into_iter()
                    .filter(move |datanode| !holders.contains(datanode))
                    .map(move |datanode| format!("{}@{datanode}", info.id))
            })
            .collect();
        drop(table);
        crate::events::debug!(node = %self.id, unwritten = %Listed(&unwritten), "containers read");
        containers
    }

    /// The replicas a container should have: as many as its pipeline has datanodes (a
    /// container of an unknown pipeline never has enough).
    fn expected_replicas(&self, info: &ContainerInfo) -> usize {
        self.config
            .pipelines
            .iter()
            .find(|p| p.id == info.pipeline)
            .map_or(usize::MAX, |p| p.nodes.len())
    }

    /// The datanodes of the container's pipeline (none for an unknown pipeline).
    fn pipeline_nodes(&self, info: &ContainerInfo) -> Vec<DatanodeId> {
        self.config
            .pipelines
            .iter()
            .find(|p| p.id == info.pipeline)
            .map(|p| p.nodes.clone())
            .unwrap_or_default()
    }

    /// Datanodes that reported a replica of the container.
    pub fn replicas(&self, id: ContainerId) -> BTreeSet<DatanodeId> {
        self.table.read().holders(id)
    }

    /// Feeds `state` the SCM's protocol state, all that decides what it does next: what it
    /// believes of leadership and safe mode, the Ratis leader-ready flag, its tables as
    /// applied (with the index) and the replicas it holds, the commands queued for each
    /// datanode, the deletions in flight, the replication manager's status, pending ops and
    /// queue, each datanode's registration, reports and pending allocations, and the
    /// allocation gate with the pipeline choice. Command ids and counters are left out.
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        let context = self.context();
        (
            context.is_leader,
            context.term,
            context.leader_ready,
            context.in_safe_mode,
        )
            .hash(state);
        self.ratis_leader_ready.load(Ordering::Acquire).hash(state);
        {
            let table = self.table.read();
            let applied = &table.applied;
            (applied.index, &applied.containers, &applied.deleted_blocks).hash(state);
            table.replicas.hash(state);
        }
        self.commands.digest(state);
        self.deletion.lock().digest(state);
        self.replication.lock().digest(state);
        self.nodes.digest(state);
        let gate = self.allocation.lock();
        (gate.rebuilt_for_term, &gate.chooser).hash(state);
    }

    /// Each reported replica of the container as its datanode last reported it
    /// (`ContainerManager.getContainerReplicas`).
    pub fn replica_reports(&self, id: ContainerId) -> BTreeMap<DatanodeId, ContainerReplicaReport> {
        self.table
            .read()
            .replicas
            .get(&id)
            .cloned()
            .unwrap_or_default()
    }
}
