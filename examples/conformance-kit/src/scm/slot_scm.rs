//! [`SlotScm`]: an SCM's pending allocations, leadership and replicated table under one
//! lock, written against `PendingContainerTrackerApi`.
//!
//! **The race (HDDS-16891).** The pending buckets live in the leader's memory only; a new
//! leader or a restarted SCM starts with them empty and grants unwritten slots again.
//!
//! **The fix**, with `REBUILDS`: becoming the serving leader applies the log and records
//! every OPEN, CLOSING or CLOSED container of the table on each datanode of its pipeline
//! that has not reported it, under the lock allocations take, before the term serves.

use std::collections::{BTreeMap, BTreeSet};

use hadoop_ref::clock::Clock;
use hadoop_ref::hdds::container::{ContainerReplicaReport, ContainerState};
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, ScmId};
use hadoop_ref::hdds::report::StorageReport;
use hadoop_ref::hdds::term::Term;
use hadoop_ref::scm::ha::{LogEntry, ReplicatedLog, ScmDb, Snapshot};
use hadoop_ref::scm::{
    ContainerInfo, DatanodeDetails, LifeCycleState, PendingContainerTrackerApi, Pipeline,
    Registration, RegistrationChange, ScmConfig, ScmError, ScmFactory,
};
use hadoop_ref::sync::{Arc, Mutex};

use super::bucket::Bucket;
use crate::mutants::Mutant;

/// A registered datanode: what it registered with, its last storage reports, its bucket.
#[derive(Debug)]
struct Node {
    details: DatanodeDetails,
    reports: Vec<StorageReport>,
    bucket: Bucket,
}

/// Everything an SCM knows, behind its one lock.
#[derive(Debug)]
struct State {
    /// The term Ratis made it leader at, while it leads.
    leader: Option<Term>,
    ready: bool,
    in_safe_mode: bool,
    /// The term whose rebuild is done.
    rebuilt_for: Option<Term>,
    table: Snapshot,
    replicas: BTreeMap<ContainerId, BTreeSet<DatanodeId>>,
    nodes: BTreeMap<DatanodeId, Node>,
    /// The pipeline choice's random state (xorshift).
    rng: u64,
}

impl State {
    fn serving(&self) -> bool {
        self.leader.is_some() && self.ready && !self.in_safe_mode
    }
}

/// An SCM with every piece of state under one lock; `REBUILDS` says whether it rebuilds
/// its pending allocations on becoming the serving leader.
#[derive(Debug)]
pub struct SlotScm<const REBUILDS: bool> {
    id: ScmId,
    pipelines: Vec<Pipeline>,
    container_size: u64,
    roll_interval_ms: u64,
    log: Arc<dyn ReplicatedLog>,
    db: Arc<ScmDb>,
    clock: Arc<dyn Clock>,
    state: Mutex<State>,
    /// The one change of a mutation run (`crate::mutants`); `None`: the correct code.
    mutant: Option<Mutant>,
}

impl<const REBUILDS: bool> SlotScm<REBUILDS> {
    /// Starts from `db`, in safe mode, not leading, no datanode registered: the signature
    /// of `ScmFactory::create`, so `SlotScm::<true>::start` is a factory.
    pub fn start(
        id: ScmId,
        config: ScmConfig,
        log: Arc<dyn ReplicatedLog>,
        db: Arc<ScmDb>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, ScmError> {
        let state = State {
            leader: None,
            ready: false,
            in_safe_mode: true,
            rebuilt_for: None,
            table: db.load(),
            replicas: BTreeMap::new(),
            nodes: BTreeMap::new(),
            rng: (config.pipeline_choice_seed ^ id.0.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1,
        };
        Ok(Self {
            id,
            pipelines: config.pipelines,
            container_size: config.container_size,
            roll_interval_ms: config.roll_interval_ms,
            log,
            db,
            clock,
            state: Mutex::new(state),
            mutant: None,
        })
    }

    /// A factory of SCMs carrying `mutant`'s one change.
    pub fn mutated(mutant: Mutant) -> impl ScmFactory<Scm = Self> {
        move |id, config, log, db, clock| {
            let scm = Self::start(id, config, log, db, clock)?;
            Ok(Self {
                mutant: Some(mutant),
                ..scm
            })
        }
    }

    fn mutated_by(&self, mutant: Mutant) -> bool {
        self.mutant == Some(mutant)
    }

    /// Applies what the log committed, a snapshot first if it was compacted past us.
    fn apply_log(&self, state: &mut State) -> u64 {
        let catch_up = self.log.catch_up(state.table.index);
        if let Some(snapshot) = catch_up.snapshot {
            state.table = snapshot.clone();
            self.db.install(snapshot);
        }
        for (index, entry) in catch_up.entries {
            state.table.apply(index, &entry);
            self.db.apply(index, &entry);
        }
        state.table.index
    }

    /// On becoming the serving leader: the rebuild, once per term.
    fn status_changed(&self, state: &mut State) {
        if !REBUILDS || !state.serving() || state.rebuilt_for == state.leader {
            return;
        }
        if !self.mutated_by(Mutant::RebuildWithoutApplyingLog) {
            self.apply_log(state);
        }
        let now = self.clock.now_ms();
        for node in state.nodes.values_mut() {
            node.bucket.clear();
        }
        for info in state.table.containers.values() {
            let written_to = matches!(
                info.state,
                LifeCycleState::Open
                    | LifeCycleState::Closing
                    | LifeCycleState::QuasiClosed
                    | LifeCycleState::Closed
            ) && !(self.mutated_by(Mutant::RebuildSkipsClosing)
                && info.state == LifeCycleState::Closing);
            let pipeline = self.pipelines.iter().find(|p| p.id == info.pipeline);
            let (true, Some(pipeline)) = (written_to, pipeline) else {
                continue;
            };
            let reported = state.replicas.get(&info.id);
            for datanode in &pipeline.nodes {
                if reported.is_some_and(|r| r.contains(datanode))
                    && !self.mutated_by(Mutant::RebuildReservesReportedReplicas)
                {
                    continue;
                }
                if let Some(node) = state.nodes.get_mut(datanode) {
                    node.bucket.roll(now, self.roll_interval_ms);
                    node.bucket.add(info.id);
                }
            }
        }
        state.rebuilt_for = state.leader;
    }

    /// The datanode whose bucket a replica report of `datanode` clears: itself, or the
    /// next registered one under [`Mutant::ReplicaReportClearsWrongNode`].
    fn counted_on(&self, datanode: DatanodeId, nodes: &BTreeMap<DatanodeId, Node>) -> DatanodeId {
        if !self.mutated_by(Mutant::ReplicaReportClearsWrongNode) {
            return datanode;
        }
        let mut after = nodes.range(datanode..).map(|(id, _)| *id).skip(1);
        after
            .next()
            .or_else(|| nodes.keys().next().copied())
            .unwrap_or(datanode)
    }

    /// One pipeline at random.
    fn choose(&self, state: &mut State) -> Option<Pipeline> {
        state.rng ^= state.rng << 13;
        state.rng ^= state.rng >> 7;
        state.rng ^= state.rng << 17;
        let count = self.pipelines.len() as u64;
        (count > 0).then(|| self.pipelines[(state.rng % count) as usize].clone())
    }

    /// The slots of `container` on every datanode of `pipeline`, or on none.
    fn reserve(&self, state: &mut State, pipeline: &Pipeline, container: ContainerId) -> bool {
        let now = self.clock.now_ms();
        for (done, datanode) in pipeline.nodes.iter().enumerate() {
            let recorded = state.nodes.get_mut(datanode).is_some_and(|node| {
                if node.reports.is_empty() {
                    return false;
                }
                node.bucket.roll(now, self.roll_interval_ms);
                node.bucket
                    .check_space_and_add(&node.reports, self.container_size, container)
            });
            if !recorded && self.mutated_by(Mutant::PartialReservationKept) {
                return false;
            }
            if !recorded {
                for undo in &pipeline.nodes[..done] {
                    if let Some(node) = state.nodes.get_mut(undo) {
                        node.bucket.roll(now, self.roll_interval_ms);
                        node.bucket.remove(container);
                    }
                }
                return false;
            }
        }
        true
    }
}

impl<const REBUILDS: bool> PendingContainerTrackerApi for SlotScm<REBUILDS> {
    fn id(&self) -> ScmId {
        self.id
    }

    fn notify_leader_changed(&self, term: Term) {
        let mut state = self.state.lock();
        state.leader = Some(term);
        state.ready = false;
    }

    fn notify_leader_ready(&self) {
        let mut state = self.state.lock();
        self.apply_log(&mut state);
        if state.leader.is_some() {
            state.ready = true;
            if self.mutated_by(Mutant::ReadyBeforeRebuildLockSplit) {
                drop(state);
                state = self.state.lock();
            }
            self.status_changed(&mut state);
        }
    }

    fn notify_not_leader(&self) {
        let mut state = self.state.lock();
        state.leader = None;
        state.ready = false;
        if !self.mutated_by(Mutant::RebuiltForKeptOnStepDown) {
            state.rebuilt_for = None;
        }
    }

    fn exit_safe_mode(&self) {
        let mut state = self.state.lock();
        state.in_safe_mode = false;
        self.status_changed(&mut state);
    }

    fn is_serving(&self) -> bool {
        self.state.lock().serving()
    }

    fn catch_up(&self) -> u64 {
        self.apply_log(&mut self.state.lock())
    }

    fn allocate_container(&self) -> Result<ContainerId, ScmError> {
        let mut state = self.state.lock();
        let Some(term) = state.leader.filter(|_| state.ready) else {
            return Err(ScmError::NotLeader { scm: self.id });
        };
        if state.in_safe_mode {
            return Err(ScmError::InSafeMode);
        }
        let pipeline = self
            .choose(&mut state)
            .ok_or(ScmError::NoPipelineWithSpace)?;
        if !pipeline.nodes.iter().all(|d| state.nodes.contains_key(d)) {
            return Err(ScmError::NoPipelineWithSpace);
        }
        let container = self.log.next_container_id();
        if !self.reserve(&mut state, &pipeline, container) {
            return Err(ScmError::NoPipelineWithSpace);
        }
        let info = ContainerInfo::open(container, pipeline.id);
        match self.log.submit(self.id, term, LogEntry::AddContainer(info)) {
            Ok(_) => {
                self.apply_log(&mut state);
                Ok(container)
            }
            // The entry may still commit: the slots stay reserved.
            Err(reason) => Err(ScmError::SubmitNotConfirmed { container, reason }),
        }
    }

    fn register_datanode(
        &self,
        details: &DatanodeDetails,
        reports: Vec<StorageReport>,
    ) -> Registration {
        let now = self.clock.now_ms();
        let mut state = self.state.lock();
        let Some(node) = state.nodes.get_mut(&details.id) else {
            let node = Node {
                details: details.clone(),
                reports,
                bucket: Bucket::new(now, self.mutant),
            };
            state.nodes.insert(details.id, node);
            return Registration::New;
        };
        let Some(change) = node.details.change_to(details) else {
            return Registration::Unchanged;
        };
        // A new registration of the same datanode keeps its bucket; only an address change
        // has its node report processed with it.
        node.details = details.clone();
        node.reports = match change {
            RegistrationChange::Address => reports,
            RegistrationChange::Version | RegistrationChange::Ports => Vec::new(),
        };
        Registration::Updated(change)
    }

    fn process_node_report(
        &self,
        datanode: DatanodeId,
        reports: Vec<StorageReport>,
    ) -> Result<(), ScmError> {
        let mut state = self.state.lock();
        let node = state
            .nodes
            .get_mut(&datanode)
            .ok_or(ScmError::UnknownDatanode { datanode })?;
        node.reports = reports;
        Ok(())
    }

    fn process_container_report(
        &self,
        datanode: DatanodeId,
        replicas: &[ContainerReplicaReport],
    ) -> Result<(), ScmError> {
        let now = self.clock.now_ms();
        let mut guard = self.state.lock();
        let state = &mut *guard;
        if !state.nodes.contains_key(&datanode) {
            return Err(ScmError::UnknownDatanode { datanode });
        }
        let mut unknown = Vec::new();
        for report in replicas {
            if !state.table.containers.contains_key(&report.container) {
                unknown.push(report.container);
                continue;
            }
            let held = state.replicas.entry(report.container).or_default();
            if report.state == ContainerState::Deleted {
                held.remove(&datanode);
            } else if held.insert(datanode)
                && let Some(node) = state
                    .nodes
                    .get_mut(&self.counted_on(datanode, &state.nodes))
            {
                node.bucket.roll(now, self.roll_interval_ms);
                node.bucket.remove(report.container);
            }
        }
        match unknown.is_empty() {
            true => Ok(()),
            false => Err(ScmError::UnknownContainers {
                datanode,
                containers: unknown,
            }),
        }
    }

    fn containers(&self) -> Vec<ContainerInfo> {
        self.state
            .lock()
            .table
            .containers
            .values()
            .cloned()
            .collect()
    }

    fn replicas(&self, id: ContainerId) -> BTreeSet<DatanodeId> {
        let state = self.state.lock();
        state.replicas.get(&id).cloned().unwrap_or_default()
    }

    fn pending(&self, datanode: DatanodeId) -> Result<BTreeSet<ContainerId>, ScmError> {
        let now = self.clock.now_ms();
        let mut state = self.state.lock();
        let node = state
            .nodes
            .get_mut(&datanode)
            .ok_or(ScmError::UnknownDatanode { datanode })?;
        node.bucket.roll(now, self.roll_interval_ms);
        Ok(node.bucket.containers())
    }
}
