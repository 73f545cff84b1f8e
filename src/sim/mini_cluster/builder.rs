//! The builder of a [`MiniOzoneCluster`].

use std::path::PathBuf;

use super::cluster::{ClusterError, MiniOzoneCluster};
use super::link::{Link, Switchboard};
use super::services::ScmServices;
use crate::clock::Pace;
use crate::datanode::DatanodeError;
use crate::datanode::container::ContainerError;
use crate::datanode::container::volume::{DiskVolume, MemoryVolume};
use crate::datanode::daemon::{Datanode, DatanodeConfig};
use crate::datanode::reports::VolumeUsage;
use crate::hdds::heartbeat::ScmEndpoint;
use crate::hdds::ids::{DatanodeId, PipelineId, ScmId};
use crate::scm::ha::ScmDb;
use crate::scm::{
    DeletingReplicaRule, ExcessReplicaOrder, PendingOpsOnNewTerm, Pipeline,
    ReplicationManagerConfig, ReplicationSpaceAccounting, ScmBehavior, ScmConfig, ScmHardening,
};
use crate::sim::peers::PeerNetwork;
use crate::sim::ratis::SimulatedRatis;
use crate::sync::atomic::AtomicU64;
use crate::sync::{Arc, Mutex, RwLock};

/// A container's size in the cluster by default (nothing that large is written; only the
/// slot arithmetic of allocation reads it). [`MiniOzoneClusterBuilder::container_size_bytes`]
/// sets a size a key can fill.
pub const CONTAINER_SIZE: u64 = 1 << 20;

/// Settings of a [`MiniOzoneCluster`], with Ozone-like defaults.
#[derive(Debug, Clone)]
pub struct MiniOzoneClusterBuilder {
    scms: usize,
    datanodes: usize,
    replication: usize,
    scm_behavior: ScmBehavior,
    scm_hardening: ScmHardening,
    replication_manager: ReplicationManagerConfig,
    excess_replica_order: ExcessReplicaOrder,
    deleting_replica_rule: DeletingReplicaRule,
    replication_space_accounting: ReplicationSpaceAccounting,
    pending_ops_on_new_term: PendingOpsOnNewTerm,
    container_size_bytes: u64,
    datanode: DatanodeConfig,
    slots_per_datanode: u64,
    tick_ms: u64,
    seed: u64,
    disk_root: Option<PathBuf>,
}

impl Default for MiniOzoneClusterBuilder {
    fn default() -> Self {
        Self {
            scms: 3,
            datanodes: 3,
            replication: 3,
            scm_behavior: ScmBehavior::Hardened,
            scm_hardening: ScmHardening::ALL,
            replication_manager: ReplicationManagerConfig::immediate(),
            excess_replica_order: ExcessReplicaOrder::Sorted,
            deleting_replica_rule: DeletingReplicaRule::ForceDeleteClosedOrQuasiClosed,
            replication_space_accounting: ReplicationSpaceAccounting::PendingAllocationOnTarget,
            pending_ops_on_new_term: PendingOpsOnNewTerm::Clear,
            container_size_bytes: CONTAINER_SIZE,
            datanode: DatanodeConfig::default(),
            slots_per_datanode: 100,
            tick_ms: 1_000,
            seed: 0,
            disk_root: None,
        }
    }
}

impl MiniOzoneCluster {
    /// A builder with the defaults: 3 SCMs, 3 datanodes, replication 3.
    pub fn builder() -> MiniOzoneClusterBuilder {
        MiniOzoneClusterBuilder::default()
    }
}

impl MiniOzoneClusterBuilder {
    /// SCMs in the HA ring (at least 1).
    pub fn scms(mut self, count: usize) -> Self {
        self.scms = count;
        self
    }

    /// Datanodes (at least the replication factor).
    pub fn datanodes(mut self, count: usize) -> Self {
        self.datanodes = count;
        self
    }

    /// Replicas per container: each pipeline has this many datanodes (at least 1).
    pub fn replication(mut self, factor: usize) -> Self {
        self.replication = factor;
        self
    }

    /// The SCMs' allocation logic.
    pub fn scm_behavior(mut self, behavior: ScmBehavior) -> Self {
        self.scm_behavior = behavior;
        self
    }

    /// The additions [`ScmBehavior::Hardened`] runs (every one by default).
    pub fn scm_hardening(mut self, hardening: ScmHardening) -> Self {
        self.scm_hardening = hardening;
        self
    }

    /// The SCMs' replication manager: by default
    /// [`ReplicationManagerConfig::immediate`] (a pass at every tick, no start delay,
    /// Ozone's command deadlines), so a stepped cluster settles within a few ticks; give
    /// Ozone's interval and start delay to see what they hold back.
    pub fn replication_manager(mut self, config: ReplicationManagerConfig) -> Self {
        self.replication_manager = config;
        self
    }

    /// How the SCMs' over-replication handler orders the excess replicas (by default
    /// upstream's, HDDS-4589).
    pub fn excess_replica_order(mut self, order: ExcessReplicaOrder) -> Self {
        self.excess_replica_order = order;
        self
    }

    /// What the SCMs' report handler does with a replica of a DELETING container (by
    /// default upstream's, HDDS-14416 with HDDS-14684).
    pub fn deleting_replica_rule(mut self, rule: DeletingReplicaRule) -> Self {
        self.deleting_replica_rule = rule;
        self
    }

    /// Whether the SCMs' replicates keep a pending allocation on their target (by default
    /// upstream's, HDDS-14924).
    pub fn replication_space_accounting(mut self, accounting: ReplicationSpaceAccounting) -> Self {
        self.replication_space_accounting = accounting;
        self
    }

    /// What the SCMs' replication managers do with their pending ops on a new term (by
    /// default upstream's, HDDS-8473).
    pub fn pending_ops_on_new_term(mut self, on_new_term: PendingOpsOnNewTerm) -> Self {
        self.pending_ops_on_new_term = on_new_term;
        self
    }

    /// A container's size (`ozone.scm.container.size`; by default [`CONTAINER_SIZE`]): a
    /// slot on a volume, and what a key of that many bytes fills (a block written by the
    /// cluster holds one chunk of [`CHUNK_LEN_BYTES`] bytes).
    ///
    /// [`CHUNK_LEN_BYTES`]: crate::sim::replica_node::CHUNK_LEN_BYTES
    pub fn container_size_bytes(mut self, bytes: u64) -> Self {
        self.container_size_bytes = bytes;
        self
    }

    /// Every datanode's settings (term fencing, the replicas' code).
    pub fn datanode_config(mut self, config: DatanodeConfig) -> Self {
        self.datanode = config;
        self
    }

    /// Containers each datanode's volume has room for (its capacity is that many
    /// containers and a half).
    pub fn slots_per_datanode(mut self, slots: u64) -> Self {
        self.slots_per_datanode = slots;
        self
    }

    /// How far the clock moves each tick.
    pub fn tick_ms(mut self, tick_ms: u64) -> Self {
        self.tick_ms = tick_ms;
        self
    }

    /// Keeps each datanode's replicas on disk, in `root/dn<id>` (a [`DiskVolume`], what a
    /// restart reloads from), rather than in memory (the default). The directories are
    /// created if missing; replicas already there are loaded.
    pub fn on_disk(mut self, root: impl Into<PathBuf>) -> Self {
        self.disk_root = Some(root.into());
        self
    }

    /// The seed of the SCMs' pipeline choice.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Starts the cluster: every SCM from an empty database, SCM 1 leading, every
    /// datanode registered with every SCM and its node report in (one tick), every SCM
    /// out of safe mode.
    pub fn build(self) -> Result<MiniOzoneCluster, ClusterError> {
        self.validate()?;
        let config = ScmConfig {
            container_size: self.container_size_bytes,
            pipeline_choice_seed: self.seed,
            hardening: self.scm_hardening,
            replication: self.replication_manager,
            excess_replica_order: self.excess_replica_order,
            deleting_replica_rule: self.deleting_replica_rule,
            replication_space_accounting: self.replication_space_accounting,
            pending_ops_on_new_term: self.pending_ops_on_new_term,
            ..ScmConfig::with_pipelines(self.pipelines())
        };
        let mut cluster = MiniOzoneCluster {
            behavior: self.scm_behavior,
            config,
            pace: Pace::new(0),
            tick_ms: self.tick_ms,
            dbs: (0..self.scms).map(|_| Arc::new(ScmDb::new())).collect(),
            scms: ScmServices {
                board: Arc::new(Switchboard::new(Vec::new())),
                ring: SimulatedRatis::new(),
                datanodes: (1..=self.datanodes as u64).map(DatanodeId).collect(),
            },
            datanodes: Vec::new(),
            processes: (0..self.datanodes).map(|_| RwLock::new(())).collect(),
            peers: PeerNetwork::new(),
            service: Mutex::new(None),
            next_block: AtomicU64::new(1),
        };
        let scms = (0..self.scms)
            .map(|i| cluster.start_scm(ScmId(i as u64 + 1), Arc::clone(&cluster.dbs[i])))
            .collect::<Result<Vec<_>, _>>()?;
        cluster.scms.board = Arc::new(Switchboard::new(scms.into_iter().map(Arc::new).collect()));
        for index in 0..self.datanodes {
            cluster
                .datanodes
                .push(self.datanode(&cluster, DatanodeId(index as u64 + 1))?);
        }
        cluster.transfer_leadership(0)?;
        cluster.tick()?;
        for scm in cluster.scms.board.running() {
            cluster.scms.leave_safe_mode_when_ready(&scm);
        }
        Ok(cluster)
    }

    fn validate(&self) -> Result<(), ClusterError> {
        let invalid = |reason: &str| {
            Err(ClusterError::Scm(crate::scm::ScmError::InvalidConfig {
                reason: reason.into(),
            }))
        };
        if self.scms == 0 {
            return invalid("a cluster needs at least one SCM");
        }
        if self.replication == 0 || self.datanodes < self.replication {
            return invalid("datanodes must be at least the replication factor, at least 1");
        }
        Ok(())
    }

    /// One pipeline per datanode: it and the next `replication - 1` datanodes, around.
    fn pipelines(&self) -> Vec<Pipeline> {
        (0..self.datanodes)
            .map(|first| Pipeline {
                id: PipelineId(first as u64 + 1),
                nodes: (0..self.replication)
                    .map(|k| DatanodeId(((first + k) % self.datanodes) as u64 + 1))
                    .collect(),
            })
            .collect()
    }

    /// Datanode `id` over its volume (empty in memory, or its directory on disk), linked to
    /// every SCM and to its peers, reporting its volume's space.
    fn datanode(
        &self,
        cluster: &MiniOzoneCluster,
        id: DatanodeId,
    ) -> Result<Datanode, ClusterError> {
        let endpoints: Vec<Arc<dyn ScmEndpoint>> = cluster
            .scms
            .board
            .ids()
            .into_iter()
            .map(|scm| {
                Arc::new(Link {
                    datanode: id,
                    scm,
                    board: Arc::clone(&cluster.scms.board),
                }) as Arc<dyn ScmEndpoint>
            })
            .collect();
        let volume = match &self.disk_root {
            Some(root) => DiskVolume::open(root.join(format!("dn{}", id.0)))
                .map_err(|e| DatanodeError::from(ContainerError::from(e)))?
                .shared(),
            None => MemoryVolume::new().shared(),
        };
        let datanode = Datanode::new(
            id,
            self.datanode.clone(),
            endpoints,
            volume,
            Some(cluster.peers.directory_for(id)),
            cluster.pace.clock().shared(),
        )?;
        cluster.peers.register(datanode.replicas());
        let size = self.container_size_bytes;
        datanode.reports().set_volume(VolumeUsage {
            // Half a container more than the slots: a slot is a whole container.
            capacity_bytes: self.slots_per_datanode * size + size / 2,
            max_container_size_bytes: size,
        });
        Ok(datanode)
    }
}
