//! Scenarios and invariants of SCM pending container allocations (HDDS-16891), shared by
//! the loom and shuttle tests, the soak tool and the tests.
//!
//! **The race.** After a leader change or an SCM restart, the serving leader's pending
//! buckets are empty; containers granted by the previous leader and not yet written hold
//! no slot anywhere, so the same slots are granted again and a datanode refuses a create.
//!
//! **What is checked.** Real [`StorageContainerManager`]s over a [`SimulatedRatis`] ring
//! and datanodes that create a container on its first write and refuse it without space.
//! [`no_datanode_over_granted`] is the seed's harm; [`leader_reserves_unwritten_containers`]
//! is I-B1 on the serving leader.
//!
//! Modelling choice: a datanode's node report reaches every SCM before its container
//! report for the same create (both ride one heartbeat). Processed the other way round, a
//! created container is briefly neither pending nor committed; that gap is outside
//! HDDS-16891 and kept out of these scenarios.

use std::collections::BTreeSet;

use super::rng::SeededRng;
use super::{Violation, join_all};
use crate::clock::ManualClock;
use crate::hdds::container::{ContainerReplicaReport, ContainerState};
use crate::hdds::ids::{ContainerId, DatanodeId, PipelineId, ScmId};
use crate::hdds::report::StorageReport;
use crate::scm::ha::ScmDb;
use crate::scm::{
    LifeCycleState, Pipeline, ScmBehavior, ScmConfig, ScmError, StorageContainerManager,
};
use crate::sim::ratis::{SimulatedRatis, SubmitFault};
use crate::sync::atomic::{AtomicBool, Ordering};
use crate::sync::{Arc, ArcSwap, Mutex, thread};

/// The seed every violation of this module names.
pub const SEED_KEY: &str = "HDDS-16891";

/// Where the scenarios' clocks start.
pub const SCENARIO_START_MS: u64 = 1_700_000_000_000;

/// Slot size in the scenarios (300 GiB, as in the seed's reproduction).
pub const CONTAINER_SIZE: u64 = 300 << 30;

fn violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: SEED_KEY,
        property,
        detail,
    }
}

fn setup(error: ScmError) -> Violation {
    violation("scenario setup", error.to_string())
}

// ---------------------------------------------------------------------------------------
// Datanodes
// ---------------------------------------------------------------------------------------

/// A datanode as SCM allocation sees it: a number of container slots, containers created
/// on their first write, a create refused when no slot is left.
#[derive(Debug)]
pub struct SimDatanode {
    id: DatanodeId,
    slots: u64,
    created: Mutex<BTreeSet<ContainerId>>,
    refused: Mutex<Vec<ContainerId>>,
}

impl SimDatanode {
    /// A datanode with room for `slots` containers (and half a container more).
    pub fn new(id: DatanodeId, slots: u64) -> Self {
        Self {
            id,
            slots,
            created: Mutex::new(BTreeSet::new()),
            refused: Mutex::new(Vec::new()),
        }
    }

    /// Its id.
    pub fn id(&self) -> DatanodeId {
        self.id
    }

    /// Its single volume: committed space grows by a container per created container.
    pub fn storage_report(&self) -> StorageReport {
        self.full_report().0
    }

    /// The volume and the containers it holds, read together: what the datanode reports
    /// when it (re)registers.
    pub fn full_report(&self) -> (StorageReport, Vec<ContainerReplicaReport>) {
        let created = self.created.lock();
        let capacity = self
            .slots
            .saturating_mul(CONTAINER_SIZE)
            .saturating_add(CONTAINER_SIZE / 2);
        let committed = (created.len() as u64).saturating_mul(CONTAINER_SIZE);
        (
            StorageReport::new(capacity, committed, 0),
            created
                .iter()
                .map(|&id| ContainerReplicaReport::new(id, ContainerState::Open))
                .collect(),
        )
    }

    /// The first write of `container`: creates it if a slot is left, else refuses it.
    /// Returns whether the container exists afterwards.
    pub fn create_on_first_write(&self, container: ContainerId) -> bool {
        let mut created = self.created.lock();
        if created.contains(&container) {
            return true;
        }
        if (created.len() as u64) < self.slots {
            created.insert(container);
            true
        } else {
            self.refused.lock().push(container);
            false
        }
    }

    /// Containers it holds.
    pub fn created(&self) -> BTreeSet<ContainerId> {
        self.created.lock().clone()
    }

    /// Creates it refused for lack of space.
    pub fn refused(&self) -> Vec<ContainerId> {
        self.refused.lock().clone()
    }
}

// ---------------------------------------------------------------------------------------
// Invariants
// ---------------------------------------------------------------------------------------

/// The seed's harm: no datanode is ever granted more containers than it has slots, seen as
/// no create refused for lack of space.
pub fn no_datanode_over_granted(datanodes: &[SimDatanode]) -> Result<(), Violation> {
    match datanodes.iter().find(|d| !d.refused().is_empty()) {
        Some(datanode) => Err(violation(
            "no datanode granted more containers than it has slots",
            format!(
                "{} refused {:?} for lack of space (slots {}, holds {:?})",
                datanode.id,
                datanode.refused(),
                datanode.slots,
                datanode.created()
            ),
        )),
        None => Ok(()),
    }
}

/// I-B1 on the serving leader: every OPEN container is pending on each datanode of its
/// pipeline that has not reported a replica of it. Checked at quiescence, within one roll
/// interval of the grants (entries age out after that by design).
pub fn leader_reserves_unwritten_containers(
    leader: &StorageContainerManager,
) -> Result<(), Violation> {
    for info in leader.containers() {
        if info.state != LifeCycleState::Open {
            continue;
        }
        let Some(pipeline) = leader
            .config()
            .pipelines
            .iter()
            .find(|p| p.id == info.pipeline)
        else {
            continue;
        };
        let replicas = leader.replicas(info.id);
        for &datanode in pipeline.nodes.iter().filter(|d| !replicas.contains(d)) {
            let pending = leader.pending(datanode).map_err(setup)?;
            if !pending.contains(&info.id) {
                return Err(violation(
                    "serving leader reserves every granted unwritten container",
                    format!(
                        "{} leads but holds no slot for unwritten {} on {datanode} (pending {pending:?})",
                        leader.id(),
                        info.id
                    ),
                ));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The cluster
// ---------------------------------------------------------------------------------------

/// SCMs over one simulated Ratis ring, and the datanodes they allocate on.
#[derive(Debug)]
pub struct ScmCluster {
    behavior: ScmBehavior,
    config: ScmConfig,
    clock: ManualClock,
    ring: SimulatedRatis,
    dbs: Vec<Arc<ScmDb>>,
    /// The running instance of each SCM; a restart swaps in a new one.
    scms: Vec<ArcSwap<StorageContainerManager>>,
    datanodes: Vec<SimDatanode>,
}

impl ScmCluster {
    /// `scm_count` SCMs, datanodes with the given slots (ids 1..), the given pipelines;
    /// every SCM started, datanodes registered and reported, out of safe mode, no leader.
    pub fn new(
        behavior: ScmBehavior,
        scm_count: u64,
        datanode_slots: &[u64],
        pipelines: Vec<Pipeline>,
    ) -> Result<Self, ScmError> {
        let clock = ManualClock::new(SCENARIO_START_MS);
        let config = ScmConfig {
            container_size: CONTAINER_SIZE,
            ..ScmConfig::with_pipelines(pipelines)
        };
        let ring = SimulatedRatis::new();
        let datanodes: Vec<SimDatanode> = (1..)
            .zip(datanode_slots)
            .map(|(id, &slots)| SimDatanode::new(DatanodeId(id), slots))
            .collect();
        let mut cluster = Self {
            behavior,
            config,
            clock,
            ring,
            dbs: Vec::new(),
            scms: Vec::new(),
            datanodes,
        };
        for id in 1..=scm_count {
            let db = Arc::new(ScmDb::new());
            let scm = cluster.start_scm(ScmId(id), Arc::clone(&db))?;
            cluster.dbs.push(db);
            cluster.scms.push(ArcSwap::new(Arc::new(scm)));
        }
        Ok(cluster)
    }

    /// Starts one SCM from its database: datanodes register and report, safe mode ends.
    fn start_scm(&self, id: ScmId, db: Arc<ScmDb>) -> Result<StorageContainerManager, ScmError> {
        let scm = StorageContainerManager::new(
            id,
            self.behavior,
            self.config.clone(),
            self.ring.log(),
            db,
            self.clock.shared(),
        )?;
        scm.catch_up();
        for datanode in &self.datanodes {
            scm.register_datanode(datanode.id());
            let (storage, created) = datanode.full_report();
            scm.process_node_report(datanode.id(), vec![storage])?;
            // A container this SCM has not applied yet is reported again later.
            match scm.process_container_report(datanode.id(), &created) {
                Ok(()) | Err(ScmError::UnknownContainers { .. }) => {}
                Err(other) => return Err(other),
            }
        }
        scm.exit_safe_mode();
        Ok(scm)
    }

    /// The clock.
    pub fn clock(&self) -> &ManualClock {
        &self.clock
    }

    /// The ring.
    pub fn ring(&self) -> &SimulatedRatis {
        &self.ring
    }

    /// The datanodes.
    pub fn datanodes(&self) -> &[SimDatanode] {
        &self.datanodes
    }

    /// The running instance of SCM number `index`.
    pub fn scm(&self, index: usize) -> Arc<StorageContainerManager> {
        self.scms[index].load_full()
    }

    /// Number of SCMs.
    pub fn scm_count(&self) -> usize {
        self.scms.len()
    }

    /// The SCM the ring names leader, if it is serving.
    pub fn serving_leader(&self) -> Option<Arc<StorageContainerManager>> {
        let (_, leader) = self.ring.leadership();
        let leader = leader?;
        let scm = self
            .scms
            .iter()
            .map(ArcSwap::load_full)
            .find(|s| s.id() == leader)?;
        scm.context().is_serving().then_some(scm)
    }

    /// Ratis elects SCM number `index` (a transfer, or an election after a crash): the
    /// previous leader steps down, the new one becomes leader, then leader-ready.
    pub fn elect(&self, index: usize) {
        self.begin_election(index);
        self.scm(index).notify_leader_ready();
    }

    /// The first half of [`ScmCluster::elect`]: leadership moves, the new leader is not
    /// ready yet (its [`StorageContainerManager::notify_leader_ready`] is the second half).
    pub fn begin_election(&self, index: usize) {
        let (_, previous) = self.ring.leadership();
        let term = self.ring.elect(self.scm(index).id());
        if let Some(previous) = previous {
            if let Some(old) = self
                .scms
                .iter()
                .map(ArcSwap::load_full)
                .find(|s| s.id() == previous)
            {
                if old.id() != self.scm(index).id() {
                    old.notify_not_leader();
                }
            }
        }
        self.scm(index).notify_leader_changed(term);
    }

    /// SCM number `index` crashes and restarts from its database; a leader loses its
    /// leadership (the ring has none until the next election).
    pub fn restart_scm(&self, index: usize) -> Result<(), ScmError> {
        let old = self.scm(index);
        if self.ring.leadership().1 == Some(old.id()) {
            self.ring.lose_leader();
        }
        old.notify_not_leader();
        let restarted = self.start_scm(old.id(), Arc::clone(&self.dbs[index]))?;
        self.scms[index].store(Arc::new(restarted));
        Ok(())
    }

    /// The log is compacted; SCM number `index`, lagging, installs the snapshot.
    pub fn install_snapshot(&self, index: usize) {
        self.ring.compact();
        self.scm(index).catch_up();
    }

    /// A client's `allocateContainer`: tries the SCMs in order until one is not a
    /// not-leader refusal.
    pub fn allocate(&self) -> Result<ContainerId, ScmError> {
        let mut last = ScmError::NoPipelineWithSpace;
        for scm in self.scms.iter().map(ArcSwap::load_full) {
            match scm.allocate_container() {
                Err(error @ ScmError::NotLeader { .. }) => last = error,
                other => return other,
            }
        }
        Err(last)
    }

    /// The first write of `container`: each datanode of its pipeline creates it (or
    /// refuses), then reports to every SCM, node report first.
    pub fn write_first_block(&self, container: ContainerId) {
        let Some(pipeline) = self.pipeline_of(container) else {
            return;
        };
        for datanode in self
            .datanodes
            .iter()
            .filter(|d| pipeline.nodes.contains(&d.id()))
        {
            if !datanode.create_on_first_write(container) {
                continue;
            }
            for scm in self.scms.iter().map(ArcSwap::load_full) {
                // Followers apply the log continuously; one that lags by a little has
                // applied the add-container by the time the report is processed.
                scm.catch_up();
                // An SCM that restarted meanwhile may not know the datanode or container
                // yet; the datanode reports again on its next heartbeat.
                let _ = scm.process_node_report(datanode.id(), vec![datanode.storage_report()]);
                let report = ContainerReplicaReport::new(container, ContainerState::Open);
                let _ = scm.process_container_report(datanode.id(), &[report]);
            }
        }
    }

    fn pipeline_of(&self, container: ContainerId) -> Option<Pipeline> {
        let info = self
            .scms
            .iter()
            .map(ArcSwap::load_full)
            .find_map(|s| s.container(container))?;
        self.config
            .pipelines
            .iter()
            .find(|p| p.id == info.pipeline)
            .cloned()
    }

    /// Every SCM applies what the log committed.
    pub fn catch_up_all(&self) {
        for scm in self.scms.iter().map(ArcSwap::load_full) {
            scm.catch_up();
        }
    }
}

fn pipeline(id: u64, nodes: &[u64]) -> Pipeline {
    Pipeline {
        id: PipelineId(id),
        nodes: nodes.iter().map(|&n| DatanodeId(n)).collect(),
    }
}

// ---------------------------------------------------------------------------------------
// MC8: the seed's reproduction
// ---------------------------------------------------------------------------------------

/// How leadership is lost in [`mc8_pending_allocation_failover`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Failover {
    /// Leadership is transferred to another SCM (the seed's run).
    Transfer,
    /// The leader (the only SCM) restarts and is elected again (not run by the seed).
    RestartSingleScm,
    /// Every SCM restarts; the first is elected again.
    RestartAllScms,
}

/// The seed's MC8: datanodes of one slot each; the leader grants C1; leadership moves (or
/// the SCM restarts); the new serving leader must hold C1's slots and refuse C2. Both
/// containers are then written: a granted C2 is refused by the datanodes.
pub fn mc8_pending_allocation_failover(
    behavior: ScmBehavior,
    failover: Failover,
) -> Result<(), Violation> {
    let scm_count = if failover == Failover::RestartSingleScm {
        1
    } else {
        3
    };
    let cluster = ScmCluster::new(
        behavior,
        scm_count,
        &[1, 1, 1],
        vec![pipeline(1, &[1, 2, 3])],
    )
    .map_err(setup)?;
    cluster.elect(0);
    let c1 = cluster.allocate().map_err(setup)?;
    if cluster.allocate() != Err(ScmError::NoPipelineWithSpace) {
        return Err(violation("scenario setup", "a second container fit".into()));
    }
    match failover {
        Failover::Transfer => cluster.elect(1),
        Failover::RestartSingleScm => {
            cluster.restart_scm(0).map_err(setup)?;
            cluster.elect(0);
        }
        Failover::RestartAllScms => {
            for index in 0..cluster.scm_count() {
                cluster.restart_scm(index).map_err(setup)?;
            }
            cluster.elect(0);
        }
    }
    let leader = cluster
        .serving_leader()
        .ok_or_else(|| violation("scenario setup", "no serving leader".into()))?;
    // The seed's two assertions: C1's slots are held, and C2 is refused. The harm (a
    // refused create) is reported first when both fail.
    let reserved = leader_reserves_unwritten_containers(&leader);
    let granted = cluster.allocate();
    cluster.write_first_block(c1);
    if let Ok(c2) = granted {
        cluster.write_first_block(c2);
    }
    no_datanode_over_granted(cluster.datanodes())?;
    reserved
}

// ---------------------------------------------------------------------------------------
// The gate race (loom)
// ---------------------------------------------------------------------------------------

/// The gate race: SCM 2 becomes leader-ready (and rebuilds) while a client's allocation
/// reaches it, on one datanode with one slot held by C1 granted by SCM 1. Two spawned
/// threads. The RPC layer opens before the rebuild runs (spec B.4), so without a gate the
/// allocation can see an empty bucket.
pub fn rebuild_gate_race(behavior: ScmBehavior) -> Result<(), Violation> {
    let cluster = ScmCluster::new(behavior, 2, &[1], vec![pipeline(1, &[1])]).map_err(setup)?;
    cluster.elect(0);
    let c1 = cluster.allocate().map_err(setup)?;
    cluster.catch_up_all();
    cluster.begin_election(1);
    let new_leader = cluster.scm(1);

    let ready = {
        let scm = Arc::clone(&new_leader);
        thread::spawn(move || {
            scm.notify_leader_ready();
            Ok(Vec::new())
        })
    };
    let client = {
        let scm = Arc::clone(&new_leader);
        thread::spawn(move || Ok(scm.allocate_container().ok().into_iter().collect()))
    };
    let granted: Vec<ContainerId> = join_all(vec![ready, client])?;
    cluster.write_first_block(c1);
    for container in granted {
        cluster.write_first_block(container);
    }
    no_datanode_over_granted(cluster.datanodes())
}

/// A race the shuttle cluster found beyond the seed: on the serving leader, a client's
/// allocation runs while the first write of C1 (holding the one slot of the datanode)
/// reports, node report then container report. A space check that reads the storage
/// report before taking the bucket lock can see neither the committed space nor the
/// pending entry. Two spawned threads.
pub fn report_order_race(behavior: ScmBehavior) -> Result<(), Violation> {
    let cluster =
        Arc::new(ScmCluster::new(behavior, 1, &[1], vec![pipeline(1, &[1])]).map_err(setup)?);
    cluster.elect(0);
    let c1 = cluster.allocate().map_err(setup)?;
    let writer = {
        let cluster = Arc::clone(&cluster);
        thread::spawn(move || {
            cluster.write_first_block(c1);
            Ok(Vec::new())
        })
    };
    let client = {
        let cluster = Arc::clone(&cluster);
        thread::spawn(move || Ok(cluster.allocate().ok().into_iter().collect()))
    };
    for container in join_all(vec![writer, client])? {
        cluster.write_first_block(container);
    }
    no_datanode_over_granted(cluster.datanodes())
}

/// A log like real Ratis in one respect: it does not fence a submit by the submitter's
/// term, only by whether the submitter leads now.
#[derive(Debug, Clone)]
pub struct UnfencedLog {
    ring: SimulatedRatis,
}

impl crate::scm::ha::ReplicatedLog for UnfencedLog {
    fn submit(
        &self,
        from: ScmId,
        _term: crate::hdds::term::Term,
        entry: crate::scm::ha::LogEntry,
    ) -> Result<u64, crate::scm::ha::SubmitError> {
        let (term, _) = self.ring.leadership();
        self.ring.submit(from, term, entry)
    }

    fn catch_up(&self, applied_index: u64) -> crate::scm::ha::CatchUp {
        self.ring.catch_up(applied_index)
    }

    fn next_container_id(&self) -> ContainerId {
        self.ring.next_container_id()
    }
}

/// A race a review found: the leader is re-elected at a new term while an allocation of
/// the old term holds the gate, and that allocation's submit commits although it answers
/// a timeout. The new term's rebuild must see the committed container (it applies the log
/// under the gate), or the container's reserved slot is dropped and never seeded. One SCM,
/// one datanode with two slots, C1 granted; two spawned threads. Checks
/// [`leader_reserves_unwritten_containers`].
pub fn reelection_during_unconfirmed_allocation(behavior: ScmBehavior) -> Result<(), Violation> {
    let ring = SimulatedRatis::new();
    let log = crate::sync::arc_from_box(
        Box::new(UnfencedLog { ring: ring.clone() }) as Box<dyn crate::scm::ha::ReplicatedLog>
    );
    let config = ScmConfig {
        container_size: CONTAINER_SIZE,
        ..ScmConfig::with_pipelines(vec![pipeline(1, &[1])])
    };
    let datanode = SimDatanode::new(DatanodeId(1), 2);
    let scm = Arc::new(
        StorageContainerManager::new(
            ScmId(1),
            behavior,
            config,
            log,
            Arc::new(ScmDb::new()),
            ManualClock::new(SCENARIO_START_MS).shared(),
        )
        .map_err(setup)?,
    );
    scm.register_datanode(datanode.id());
    scm.process_node_report(datanode.id(), vec![datanode.storage_report()])
        .map_err(setup)?;
    scm.exit_safe_mode();
    scm.notify_leader_changed(ring.elect(scm.id()));
    scm.notify_leader_ready();
    scm.allocate_container().map_err(setup)?;
    ring.inject(SubmitFault::TimeoutAfterCommit);

    let client = {
        let scm = Arc::clone(&scm);
        thread::spawn(move || {
            // The timeout is the injected fault; the entry commits.
            let _ = scm.allocate_container();
            Ok(Vec::<()>::new())
        })
    };
    let reelection = {
        let scm = Arc::clone(&scm);
        let ring = ring.clone();
        thread::spawn(move || {
            scm.notify_leader_changed(ring.elect(scm.id()));
            scm.notify_leader_ready();
            Ok(Vec::new())
        })
    };
    join_all(vec![client, reelection])?;
    scm.catch_up();
    leader_reserves_unwritten_containers(&scm)
}

// ---------------------------------------------------------------------------------------
// Shuttle: leader transfers, restarts, clients and writers
// ---------------------------------------------------------------------------------------

/// Size of an [`allocation_cluster`] run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocationShape {
    /// Allocation attempts per client thread.
    pub allocations_per_client: usize,
    /// Client threads.
    pub clients: usize,
    /// Controller steps.
    pub controller_steps: usize,
}

impl Default for AllocationShape {
    fn default() -> Self {
        Self {
            allocations_per_client: 4,
            clients: 2,
            controller_steps: 6,
        }
    }
}

/// Clock ticks stay within one roll interval over a whole run, so no reservation ages
/// out (aging out is by design, and would over-grant with any behavior).
const MAX_TICK_MS: u64 = 30_000;

/// Three SCMs, four datanodes near their last slots (1, 1, 2, 2) on three pipelines;
/// client threads allocate, a writer writes granted containers (the datanodes create them
/// and report), and a controller transfers leadership, restarts SCMs (the leader
/// included), installs a snapshot on a follower, injects a submit that times out or
/// answers not-leader after committing, and ticks the clock, all from `seed`. Checks
/// [`no_datanode_over_granted`] and, at quiescence, [`leader_reserves_unwritten_containers`].
pub fn allocation_cluster(
    behavior: ScmBehavior,
    seed: u64,
    shape: AllocationShape,
) -> Result<(), Violation> {
    let cluster = Arc::new(
        ScmCluster::new(
            behavior,
            3,
            &[1, 1, 2, 2],
            vec![
                pipeline(1, &[1, 2, 3]),
                pipeline(2, &[2, 3, 4]),
                pipeline(3, &[4]),
            ],
        )
        .map_err(setup)?,
    );
    cluster.elect(0);
    let granted: Arc<Mutex<Vec<ContainerId>>> = Arc::new(Mutex::new(Vec::new()));
    let done = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    for _ in 0..shape.clients {
        let cluster = Arc::clone(&cluster);
        let granted = Arc::clone(&granted);
        handles.push(thread::spawn(move || {
            for _ in 0..shape.allocations_per_client {
                if let Ok(container) = cluster.allocate() {
                    granted.lock().push(container);
                }
                thread::yield_now();
            }
            Ok(Vec::new())
        }));
    }
    {
        let cluster = Arc::clone(&cluster);
        let granted = Arc::clone(&granted);
        let done = Arc::clone(&done);
        handles.push(thread::spawn(move || {
            let mut written = 0;
            // Bounded: every round writes one container or yields; the tail drains.
            for _ in 0..shape.clients * shape.allocations_per_client * 4 + 16 {
                let next = granted.lock().get(written).copied();
                match next {
                    Some(container) => {
                        cluster.write_first_block(container);
                        written += 1;
                    }
                    None if done.load(Ordering::Acquire) => break,
                    None => thread::yield_now(),
                }
            }
            Ok(Vec::new())
        }));
    }
    {
        let cluster = Arc::clone(&cluster);
        let done = Arc::clone(&done);
        handles.push(thread::spawn(move || {
            let mut rng = SeededRng::new(seed);
            let mut ticked_ms = 0;
            let mut result = Ok(Vec::new());
            for _ in 0..shape.controller_steps {
                if let Err(error) = controller_step(&cluster, &mut rng, &mut ticked_ms) {
                    result = Err(error);
                    break;
                }
                thread::yield_now();
            }
            done.store(true, Ordering::Release);
            result
        }));
    }
    join_all::<()>(handles)?;
    cluster.catch_up_all();
    no_datanode_over_granted(cluster.datanodes())?;
    match cluster.serving_leader() {
        Some(leader) => leader_reserves_unwritten_containers(&leader),
        None => Ok(()),
    }
}

fn controller_step(
    cluster: &ScmCluster,
    rng: &mut SeededRng,
    ticked_ms: &mut u64,
) -> Result<(), Violation> {
    let scm_count = cluster.scm_count() as u64;
    match rng.below(100) {
        0..=39 => cluster.elect(rng.below(scm_count) as usize),
        40..=59 => {
            let index = rng.below(scm_count) as usize;
            let was_leader = cluster.ring().leadership().1 == Some(cluster.scm(index).id());
            cluster.restart_scm(index).map_err(setup)?;
            if was_leader {
                cluster.elect(rng.below(scm_count) as usize);
            }
        }
        60..=69 => cluster.install_snapshot(rng.below(scm_count) as usize),
        70..=84 => cluster.ring().inject(if rng.chance(50) {
            SubmitFault::TimeoutAfterCommit
        } else {
            SubmitFault::NotLeaderAfterCommit
        }),
        _ => {
            let tick = (1 + rng.below(MAX_TICK_MS)).min(MAX_TICK_MS.saturating_sub(*ticked_ms));
            *ticked_ms += tick;
            cluster.clock().advance_ms(tick);
        }
    }
    Ok(())
}
