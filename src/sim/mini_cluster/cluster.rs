//! The cluster's handle: its operations and its step.

use super::services::{ScmServices, Started};
use crate::clock::{ManualClock, Pace};
use crate::datanode::DatanodeError;
use crate::datanode::container::{ContainerController, ContainerError};
use crate::datanode::daemon::Datanode;
use crate::datanode::dispatcher::CommandReport;
use crate::hdds::ids::{ContainerId, DatanodeId, LocalId, PipelineId, ScmId};
use crate::scm::ha::ScmDb;
use crate::scm::{ScmBehavior, ScmConfig, ScmError, StorageContainerManager};
use crate::sim::peers::PeerNetwork;
use crate::sync::atomic::AtomicU64;
use crate::sync::{Arc, Mutex, RwLock};

/// Why a cluster operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// An SCM refused.
    #[error("SCM: {0}")]
    Scm(#[from] ScmError),
    /// A datanode refused.
    #[error("datanode: {0}")]
    Datanode(#[from] DatanodeError),
    /// No SCM leads (none elected since a crash, or the leader is down).
    #[error("no SCM leads")]
    NoLeader,
    /// An index past the cluster's SCMs or datanodes.
    #[error("no {what} at index {index}")]
    NoSuchNode {
        /// `"SCM"` or `"datanode"`.
        what: &'static str,
        /// The index asked for.
        index: usize,
    },
    /// The cluster runs on its threads ([`MiniOzoneCluster::start`]): it is not stepped.
    #[error("the cluster is started: stop it before stepping it")]
    Started,
    /// The cluster did not settle within the ticks (or, started, the polls) allowed.
    #[error("not quiescent after {ticks} ticks")]
    NotQuiescent {
        /// Ticks run (polls made, for a started cluster).
        ticks: usize,
    },
}

/// A key as the cluster granted it: its container, the datanodes of the container's
/// pipeline, and its blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// The container holding its blocks.
    pub container: ContainerId,
    /// The datanodes of its container's pipeline, each to hold a replica.
    pub datanodes: Vec<DatanodeId>,
    /// Its blocks.
    pub blocks: Vec<LocalId>,
}

/// N SCMs and M datanodes in one process (see the module docs).
#[derive(Debug)]
pub struct MiniOzoneCluster {
    pub(super) behavior: ScmBehavior,
    pub(super) config: ScmConfig,
    /// The clock every node reads, and what moves it wakes (the started cluster's threads).
    pub(super) pace: Pace,
    pub(super) tick_ms: u64,
    pub(super) dbs: Vec<Arc<ScmDb>>,
    pub(super) scms: ScmServices,
    pub(super) datanodes: Vec<Datanode>,
    /// One per datanode: a client's write holds it shared, a restart holds it alone, so a
    /// write lands before the restart (and is found in the volume) or after it, as with a
    /// real process, never while the replicas are being reloaded.
    pub(super) processes: Vec<RwLock<()>>,
    pub(super) peers: PeerNetwork,
    /// The threads of the started cluster.
    pub(super) service: Mutex<Option<Started>>,
    pub(super) next_block: AtomicU64,
}

impl Drop for MiniOzoneCluster {
    /// Stops the threads of a started cluster, then takes the datanodes out of the peer
    /// network: each one's replicas hold the network
    /// (their peer directory) and the network holds them.
    fn drop(&mut self) {
        self.stop();
        for dn in &self.datanodes {
            self.peers.unregister(dn.id());
        }
    }
}

impl MiniOzoneCluster {
    /// The running SCM at `index`.
    pub fn scm(&self, index: usize) -> Result<Arc<StorageContainerManager>, ClusterError> {
        let id = self.scm_id(index)?;
        self.scms
            .board
            .scm(id)
            .ok_or(ClusterError::NoSuchNode { what: "SCM", index })
    }

    /// The SCM the ring says leads, if it runs.
    pub fn leader(&self) -> Result<Arc<StorageContainerManager>, ClusterError> {
        self.scms.leader().ok_or(ClusterError::NoLeader)
    }

    /// The index of the SCM the ring says leads, if it runs.
    pub fn leader_index(&self) -> Result<usize, ClusterError> {
        let id = self.leader()?.id();
        self.scms
            .board
            .ids()
            .iter()
            .position(|&scm| scm == id)
            .ok_or(ClusterError::NoLeader)
    }

    /// The datanode at `index`.
    pub fn datanode(&self, index: usize) -> Result<&Datanode, ClusterError> {
        self.datanodes.get(index).ok_or(ClusterError::NoSuchNode {
            what: "datanode",
            index,
        })
    }

    /// The clock every node reads.
    pub fn clock(&self) -> &ManualClock {
        self.pace.clock()
    }

    /// Ratis moves leadership to the SCM at `index`: the old leader steps down, the new
    /// one leads at a new term and becomes leader-ready.
    pub fn transfer_leadership(&self, index: usize) -> Result<(), ClusterError> {
        self.step_down_for(index)?;
        self.elect(index)
    }

    /// [`transfer_leadership`](Self::transfer_leadership) up to the new leader's
    /// division marked leader-ready, its RPC layer's leader check open: the state
    /// machine's `notifyLeaderReady`, which notifies its services (the rebuild of the
    /// pending allocations, HDDS-16891), is [`notify_leader_ready`](Self::notify_leader_ready)'s.
    /// The two halves of one transfer, as an explorer steps them.
    ///
    /// ```
    /// # hadoop_ref::sync::run_driver_example(|| {
    /// use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;
    ///
    /// let cluster = MiniOzoneCluster::builder().scms(2).build()?;
    /// cluster.transfer_leadership_to_division_ready(1)?;
    /// assert!(!cluster.scm(1)?.context().leader_ready, "services not notified yet");
    /// cluster.notify_leader_ready(1)?;
    /// assert!(cluster.scm(1)?.context().leader_ready);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # });
    /// ```
    pub fn transfer_leadership_to_division_ready(&self, index: usize) -> Result<(), ClusterError> {
        self.step_down_for(index)?;
        let next = self.scm(index)?;
        let term = self.scms.ring.elect(next.id());
        next.notify_leader_changed(term);
        next.mark_division_leader_ready();
        Ok(())
    }

    /// The SCM at `index` runs the state machine's `notifyLeaderReady`: the services hear
    /// it leads (nothing changes for an SCM that does not lead).
    pub fn notify_leader_ready(&self, index: usize) -> Result<(), ClusterError> {
        self.scm(index)?.notify_leader_ready();
        Ok(())
    }

    /// The leader steps down (`notifyNotLeader`) unless it is the SCM at `index`.
    fn step_down_for(&self, index: usize) -> Result<(), ClusterError> {
        if let Ok(old) = self.leader()
            && old.id() != self.scm_id(index)?
        {
            old.notify_not_leader();
        }
        Ok(())
    }

    /// Ratis moves leadership to the SCM at `index` while the old leader has not heard
    /// (cut off from the ring, its `notifyNotLeader` late): the new one leads at a new term
    /// and becomes leader-ready; the old one still believes it leads at its old term, so
    /// its services keep creating commands stamped with it (the ring refuses what it
    /// submits), and its heartbeat responses still carry that term, until
    /// [`notify_deposed`](Self::notify_deposed). HDDS-17268's deposed leader.
    ///
    /// ```
    /// # hadoop_ref::sync::run_driver_example(|| {
    /// use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;
    ///
    /// let cluster = MiniOzoneCluster::builder().scms(2).build()?;
    /// cluster.transfer_leadership_unheard(1)?;
    /// assert_eq!(cluster.leader_index()?, 1);
    /// assert!(cluster.scm(0)?.context().is_leader, "SCM 1 has not heard");
    /// cluster.notify_deposed(0)?;
    /// assert!(!cluster.scm(0)?.context().is_leader);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # });
    /// ```
    pub fn transfer_leadership_unheard(&self, index: usize) -> Result<(), ClusterError> {
        self.elect(index)
    }

    /// The SCM at `index` hears that it no longer leads (`notifyNotLeader`); nothing
    /// changes for an SCM that did not believe it led.
    pub fn notify_deposed(&self, index: usize) -> Result<(), ClusterError> {
        self.scm(index)?.notify_not_leader();
        Ok(())
    }

    /// The ring elects the SCM at `index`, which leads at the new term and becomes
    /// leader-ready.
    fn elect(&self, index: usize) -> Result<(), ClusterError> {
        let next = self.scm(index)?;
        let term = self.scms.ring.elect(next.id());
        next.notify_leader_changed(term);
        next.notify_leader_ready();
        Ok(())
    }

    /// Ratis takes a snapshot of the SCMs' state machine and purges the log up to it
    /// (`takeSnapshot`): an SCM behind it can only catch up by installing the snapshot.
    pub fn compact_log(&self) {
        self.scms.ring.compact();
    }

    /// The SCM at `index` applies every committed entry it lags behind, installing the
    /// snapshot first when the log was compacted past it
    /// ([`compact_log`](Self::compact_log); Ratis's `installSnapshot`). Followers here
    /// apply the log only when asked (and on becoming leader or restarting). Returns the
    /// index the SCM applied up to.
    ///
    /// ```
    /// # hadoop_ref::sync::run_driver_example(|| {
    /// use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;
    ///
    /// let cluster = MiniOzoneCluster::builder().scms(3).build()?;
    /// let key = cluster.write_key(1)?;
    /// assert!(cluster.scm(2)?.container(key.container).is_none(), "SCM 3 lags");
    /// cluster.compact_log();
    /// cluster.catch_up_scm(2)?; // installs the snapshot
    /// assert!(cluster.scm(2)?.container(key.container).is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # });
    /// ```
    pub fn catch_up_scm(&self, index: usize) -> Result<u64, ClusterError> {
        Ok(self.scm(index)?.catch_up())
    }

    /// What the datanode at `index` did with every command it took from its queue, oldest
    /// first: the command with its term, the datanode's term at dispatch and the highest
    /// heartbeat term it had heard, and how it ended (run, skipped for a stale term or an
    /// expired deadline, refused). The last
    /// [`COMMAND_HISTORY_LIMIT`](crate::datanode::daemon::COMMAND_HISTORY_LIMIT) commands
    /// since the cluster was built, restarts included.
    ///
    /// ```
    /// # hadoop_ref::sync::run_driver_example(|| {
    /// use hadoop_ref::datanode::dispatcher::CommandOutcome;
    /// use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;
    ///
    /// let cluster = MiniOzoneCluster::builder().build()?;
    /// cluster.write_key(1)?; // the leader closes the container
    /// cluster.run_until_quiescent(10)?;
    /// let close = &cluster.commands_run(0)?[0];
    /// assert_eq!(close.dispatched.term_at_dispatch, close.dispatched.command.term);
    /// assert_eq!(close.outcome, CommandOutcome::Executed);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # });
    /// ```
    pub fn commands_run(&self, index: usize) -> Result<Vec<CommandReport>, ClusterError> {
        Ok(self.datanode(index)?.stats().history())
    }

    /// The SCM at `index` crashes: its slot empties, and the ring loses it as leader.
    pub fn crash_scm(&self, index: usize) -> Result<(), ClusterError> {
        let id = self.scm_id(index)?;
        if self.scms.ring.leadership().1 == Some(id) {
            self.scms.ring.lose_leader();
        }
        if let Some(old) = self.scms.board.scm(id) {
            old.notify_not_leader();
        }
        self.scms.board.set(id, None);
        Ok(())
    }

    /// The SCM at `index` starts again from its database, not leading and in safe mode;
    /// datanodes register again when it tells them to, and it leaves safe mode once all
    /// of them have (see [`tick_scms`](Self::tick_scms)).
    pub fn restart_scm(&self, index: usize) -> Result<(), ClusterError> {
        self.crash_scm(index)?;
        let id = self.scm_id(index)?;
        let scm = self.start_scm(id, Arc::clone(&self.dbs[index]))?;
        self.scms.board.set(id, Some(Arc::new(scm)));
        Ok(())
    }

    /// The datanode at `index` restarts from its volume; in a started cluster its threads
    /// start again.
    pub fn restart_datanode(&self, index: usize) -> Result<(), ClusterError> {
        let datanode = self.datanode(index)?;
        let _process = self.processes[index].write();
        if self.is_started() {
            datanode.restart()?;
        } else {
            datanode.restart_stopped()?;
        }
        Ok(())
    }

    /// Cuts (`up` false) or heals the link between the datanode at `datanode` and the SCM
    /// at `scm`.
    pub fn set_link(&self, datanode: usize, scm: usize, up: bool) -> Result<(), ClusterError> {
        let dn = self.datanode(datanode)?.id();
        self.scms.board.set_link(dn, self.scm_id(scm)?, up);
        Ok(())
    }

    /// Whether the link between the datanode at `datanode` and the SCM at `scm` is up.
    pub fn link_is_up(&self, datanode: usize, scm: usize) -> Result<bool, ClusterError> {
        let dn = self.datanode(datanode)?.id();
        Ok(!self.scms.board.is_cut(dn, self.scm_id(scm)?))
    }

    /// The datanode at `datanode` leaves the Ratis group of `pipeline` (the pipeline
    /// failed on it, or was closed): a close command naming the pipeline then quasi-closes
    /// its replica unless forced (`CloseContainerCommandHandler`), the way a replica
    /// reaches QUASI_CLOSED.
    pub fn leave_pipeline(
        &self,
        datanode: usize,
        pipeline: PipelineId,
    ) -> Result<(), ClusterError> {
        self.datanode(datanode)?.replicas().leave_pipeline(pipeline);
        Ok(())
    }

    /// One step of the whole cluster: the SCMs' services ([`tick_scms`](Self::tick_scms)),
    /// then every datanode's work, then the clock moves by the tick.
    pub fn tick(&self) -> Result<(), ClusterError> {
        if self.is_started() {
            return Err(ClusterError::Started);
        }
        self.tick_scms()?;
        for dn in &self.datanodes {
            dn.tick()?;
        }
        self.pace.advance_ms(self.tick_ms);
        Ok(())
    }

    /// The datanode at `index`'s part of a tick ([`Datanode::tick`]): a heartbeat to each
    /// SCM it reaches, its commands, its block deleting service. For a driver that ticks
    /// each datanode on a thread of its own.
    pub fn tick_datanode(&self, index: usize) -> Result<(), ClusterError> {
        if self.is_started() {
            return Err(ClusterError::Started);
        }
        self.datanode(index)?.tick()?;
        Ok(())
    }

    /// [`tick_datanode`](Self::tick_datanode) without the block deleting service
    /// ([`Datanode::tick_commands`]): for a driver that runs each datanode's service on a
    /// thread of its own ([`run_block_deleting_service`](Self::run_block_deleting_service)).
    ///
    /// ```
    /// # hadoop_ref::sync::run_driver_example(|| {
    /// use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;
    ///
    /// let cluster = MiniOzoneCluster::builder().build()?;
    /// cluster.tick_datanode_commands(0)?;
    /// cluster.run_block_deleting_service(0)?;
    /// assert!(cluster.tick_datanode_commands(7).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # });
    /// ```
    pub fn tick_datanode_commands(&self, index: usize) -> Result<(), ClusterError> {
        if self.is_started() {
            return Err(ClusterError::Started);
        }
        self.datanode(index)?.tick_commands()?;
        Ok(())
    }

    /// One run of the block deleting service of the datanode at `index`, on the calling
    /// thread. A failed container task is retried at the next run, as the service does.
    pub fn run_block_deleting_service(&self, index: usize) -> Result<(), ClusterError> {
        if self.is_started() {
            return Err(ClusterError::Started);
        }
        let _ = self
            .datanode(index)?
            .replicas()
            .run_block_deleting_service();
        Ok(())
    }

    /// The SCMs' part of a tick: each SCM in safe mode leaves it if every datanode has
    /// registered with it, then every running SCM runs its replication manager and block
    /// deleting service by what it believes (only a serving leader, or a deposed one that
    /// has not heard, does anything). For a driver that ticks the datanodes on threads of
    /// their own.
    pub fn tick_scms(&self) -> Result<(), ClusterError> {
        Ok(self.scms.tick()?)
    }

    /// One run of the SCM at `index`'s replication manager as its thread runs it: the
    /// SCM leaves safe mode if every datanode has reported to it, then a pass (a refused
    /// pass is tried again at its next run). Nothing for a crashed SCM.
    pub fn run_replication_manager(&self, index: usize) {
        if let Ok(scm) = self.scm(index) {
            self.scms.leave_safe_mode_when_ready(&scm);
            let _ = scm.run_replication_manager();
        }
    }

    /// Heals every cut link: between datanodes and SCMs, and between datanodes.
    pub fn heal_all(&self) {
        self.scms.board.heal_all();
        for dn in &self.datanodes {
            self.peers.heal(dn.id());
        }
    }

    /// SCMs in the cluster (running or not).
    pub fn scm_count(&self) -> usize {
        self.scms.board.ids().len()
    }

    /// Datanodes in the cluster.
    pub fn datanode_count(&self) -> usize {
        self.datanodes.len()
    }

    /// Blocks with metadata in the replica of `container` on the datanode at `index`
    /// (0 when it holds no replica).
    pub fn live_blocks(&self, index: usize, container: ContainerId) -> Result<u64, ClusterError> {
        let report = self.datanode(index)?.replicas().container_report();
        Ok(report
            .iter()
            .find(|r| r.container == container)
            .map_or(0, |r| r.block_count))
    }

    /// Blocks of `key` with metadata in its container's replica on the datanode at `index`
    /// (0 when it holds no replica).
    pub fn live_blocks_of(&self, index: usize, key: &Key) -> Result<u64, ClusterError> {
        let Ok(replica) = self.datanode(index)?.replicas().container(key.container) else {
            return Ok(0);
        };
        let blocks = replica
            .store()
            .blocks()
            .map_err(|e| DatanodeError::from(ContainerError::store(key.container)(e)))?;
        Ok(blocks
            .iter()
            .filter(|b| key.blocks.contains(&b.local_id))
            .count() as u64)
    }

    fn scm_id(&self, index: usize) -> Result<ScmId, ClusterError> {
        self.scms
            .board
            .ids()
            .get(index)
            .copied()
            .ok_or(ClusterError::NoSuchNode { what: "SCM", index })
    }

    pub(super) fn datanode_index(&self, id: DatanodeId) -> Result<usize, ClusterError> {
        self.datanodes
            .iter()
            .position(|dn| dn.id() == id)
            .ok_or(ClusterError::NoSuchNode {
                what: "datanode",
                index: id.0 as usize,
            })
    }

    /// An SCM started from `db`, in safe mode, not leading.
    pub(super) fn start_scm(
        &self,
        id: ScmId,
        db: Arc<ScmDb>,
    ) -> Result<StorageContainerManager, ScmError> {
        let scm = StorageContainerManager::new(
            id,
            self.behavior,
            self.config.clone(),
            self.scms.ring.log(),
            db,
            self.pace.clock().shared(),
        )?;
        scm.catch_up();
        Ok(scm)
    }
}
