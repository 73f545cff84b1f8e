//! [`ScmCluster`]: SCMs over one [`SimulatedRatis`] ring and the [`SlotDatanode`]s they
//! allocate on, for the scenarios of HDDS-16891; any implementation of the
//! pending-allocation boundary ([`PendingContainerTrackerApi`]) runs in it, started by its
//! [`ScmFactory`] (an [`ScmBehavior`] starts the crate's own `StorageContainerManager`).
//!
//! The harness moves leadership the way Ratis tells an SCM about it (`notifyNotLeader` to
//! the old leader, `notifyLeaderChanged` then `notifyLeaderReady` to the new one), crashes
//! and restarts an SCM from its database, compacts the log so that a follower installs a
//! snapshot, delivers a client's `allocateContainer` and a first write's reports, and lets
//! a datanode register again with changed details and send a heartbeat's node report. It
//! checks nothing: the scenarios hold the invariants.
//!
//! Modelling choice: a datanode's node report reaches every SCM before its container
//! report for the same create (both ride one heartbeat), and a node report it sends later
//! (a registration's, a heartbeat's) is never older than a container report it sent before
//! (one endpoint thread per SCM sends them in turn). Processed out of order, a created
//! container is briefly neither pending nor committed; that gap is outside HDDS-16891 and
//! kept out of the harness.

use super::ratis::SimulatedRatis;
use super::slot_datanode::SlotDatanode;
use crate::clock::ManualClock;
use crate::hdds::container::{ContainerReplicaReport, ContainerState};
use crate::hdds::ids::{ContainerId, DatanodeId, ScmId};
use crate::scm::datanode_details::RegistrationChange;
use crate::scm::ha::{LogEntry, ScmDb};
use crate::scm::{
    LifeCycleState, PendingContainerTrackerApi, Pipeline, ScmBehavior, ScmConfig, ScmError,
    ScmFactory,
};
use crate::sync::{Arc, ArcSwap};

/// SCMs over one simulated Ratis ring, and the datanodes they allocate on; the SCMs are
/// what `F` starts.
pub struct ScmCluster<F: ScmFactory = ScmBehavior> {
    factory: F,
    config: ScmConfig,
    clock: ManualClock,
    ring: SimulatedRatis,
    dbs: Vec<Arc<ScmDb>>,
    /// The running instance of each SCM; a restart swaps in a new one.
    scms: Vec<ArcSwap<F::Scm>>,
    datanodes: Vec<SlotDatanode>,
}

impl<F: ScmFactory> std::fmt::Debug for ScmCluster<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScmCluster")
            .field("scm", &std::any::type_name::<F::Scm>())
            .field("config", &self.config)
            .field("ring", &self.ring)
            .field("scms", &self.scms)
            .field("datanodes", &self.datanodes)
            .finish()
    }
}

impl<F: ScmFactory> ScmCluster<F> {
    /// `scm_count` SCMs started by `factory` with `config` on `clock`, datanodes with the
    /// given slots (ids 1..) of `config.container_size` bytes; every SCM started, datanodes
    /// registered and reported, out of safe mode, no leader.
    pub fn new(
        factory: F,
        clock: ManualClock,
        config: ScmConfig,
        scm_count: u64,
        datanode_slots: &[u64],
    ) -> Result<Self, ScmError> {
        let ring = SimulatedRatis::new();
        let datanodes: Vec<SlotDatanode> = (1..)
            .zip(datanode_slots)
            .map(|(id, &slots)| SlotDatanode::new(DatanodeId(id), slots, config.container_size))
            .collect();
        let mut cluster = Self {
            factory,
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
    fn start_scm(&self, id: ScmId, db: Arc<ScmDb>) -> Result<F::Scm, ScmError> {
        let scm = self.factory.create(
            id,
            self.config.clone(),
            self.ring.log(),
            db,
            self.clock.shared(),
        )?;
        scm.catch_up();
        for datanode in &self.datanodes {
            let (storage, created) = datanode.full_report();
            scm.register_datanode(&datanode.details(), vec![storage]);
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
    pub fn datanodes(&self) -> &[SlotDatanode] {
        &self.datanodes
    }

    /// The pipelines every SCM allocates on.
    pub fn pipelines(&self) -> &[Pipeline] {
        &self.config.pipelines
    }

    /// The running instance of SCM number `index`.
    pub fn scm(&self, index: usize) -> Arc<F::Scm> {
        self.scms[index].load_full()
    }

    /// Number of SCMs.
    pub fn scm_count(&self) -> usize {
        self.scms.len()
    }

    /// The SCM the ring names leader, if it is serving.
    pub fn serving_leader(&self) -> Option<Arc<F::Scm>> {
        let (_, leader) = self.ring.leadership();
        let leader = leader?;
        let scm = self
            .scms
            .iter()
            .map(ArcSwap::load_full)
            .find(|s| s.id() == leader)?;
        scm.is_serving().then_some(scm)
    }

    /// Ratis elects SCM number `index` (a transfer, or an election after a crash): the
    /// previous leader steps down, the new one becomes leader, then leader-ready.
    pub fn elect(&self, index: usize) {
        self.begin_election(index);
        self.scm(index).notify_leader_ready();
    }

    /// The first half of [`ScmCluster::elect`]: leadership moves, the new leader is not
    /// ready yet (its [`PendingContainerTrackerApi::notify_leader_ready`] is the second half).
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

    /// Datanode number `index` restarts with `change` to its details and registers again
    /// with every SCM, with its node report (`SCMNodeManager.register`). Only an address
    /// change has the SCMs process that report; see [`ScmCluster::heartbeat`]. No create of
    /// the datanode is reported in between (see [`SlotDatanode::send_storage_report`]).
    pub fn reregister(&self, index: usize, change: RegistrationChange) {
        let Some(datanode) = self.datanodes.get(index) else {
            return;
        };
        let details = datanode.change_details(change);
        datanode.send_storage_report(|report| {
            for scm in self.scms.iter().map(ArcSwap::load_full) {
                scm.register_datanode(&details, vec![report]);
            }
        });
    }

    /// Datanode number `index` heartbeats every SCM with its node report; no create of the
    /// datanode is reported in between.
    pub fn heartbeat(&self, index: usize) {
        let Some(datanode) = self.datanodes.get(index) else {
            return;
        };
        datanode.send_storage_report(|report| {
            for scm in self.scms.iter().map(ArcSwap::load_full) {
                // An SCM that restarted meanwhile knows every datanode again (it registers
                // them when it starts).
                let _ = scm.process_node_report(datanode.id(), vec![report]);
            }
        });
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
            self.create_and_report(datanode, container);
        }
    }

    /// The first write of `container` on `datanode` alone, if it is of the container's
    /// pipeline: it creates the container (or refuses), then reports to every SCM, node
    /// report first.
    pub fn write_first_block_on(&self, container: ContainerId, datanode: DatanodeId) {
        let Some(pipeline) = self.pipeline_of(container) else {
            return;
        };
        let on_pipeline =
            |d: &&SlotDatanode| d.id() == datanode && pipeline.nodes.contains(&d.id());
        if let Some(datanode) = self.datanodes.iter().find(on_pipeline) {
            self.create_and_report(datanode, container);
        }
    }

    /// `datanode` creates `container` (or refuses); created, it reports to every SCM.
    fn create_and_report(&self, datanode: &SlotDatanode, container: ContainerId) {
        if !datanode.create_on_first_write(container) {
            return;
        }
        for scm in self.scms.iter().map(ArcSwap::load_full) {
            // Followers apply the log continuously; one that lags by a little has
            // applied the add-container by the time the report is processed.
            scm.catch_up();
            // An SCM that restarted meanwhile may not know the datanode or container
            // yet; the datanode reports again on its next heartbeat.
            let _ = scm.process_node_report(datanode.id(), vec![datanode.storage_report()]);
            let report =
                ContainerReplicaReport::new(container, ContainerState::Open, datanode.id());
            let _ = scm.process_container_report(datanode.id(), &[report]);
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

    /// The serving leader closes `container` (`ContainerManager.updateContainerState` to
    /// CLOSING, through the log) and applies it; nothing without a serving leader.
    pub fn close_container(&self, container: ContainerId) {
        let Some(leader) = self.serving_leader() else {
            return;
        };
        let (term, _) = self.ring.leadership();
        let entry = LogEntry::UpdateContainerState(container, LifeCycleState::Closing);
        if self.ring.log().submit(leader.id(), term, entry).is_ok() {
            leader.catch_up();
        }
    }

    /// Every SCM applies what the log committed.
    pub fn catch_up_all(&self) {
        for scm in self.scms.iter().map(ArcSwap::load_full) {
            scm.catch_up();
        }
    }
}
