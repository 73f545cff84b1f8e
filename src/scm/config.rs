//! What an SCM runs: the allocation-tracking logic ([`ScmBehavior`]), the switches of this
//! crate's additions beyond the seed ([`ScmHardening`]) and its settings ([`ScmConfig`]).

use std::collections::BTreeSet;

use super::container_info::Pipeline;
use super::deleted_block_log::BlockDeletionConfig;
use super::error::ScmError;

/// Which allocation-tracking logic an SCM runs (HDDS-16891).
///
/// Every variant runs Ozone's allocation path (`ContainerManagerImpl.allocateContainer`:
/// one random OPEN pipeline, its slots reserved by
/// `PipelineManagerImpl.checkSpaceAndRecordAllocation` before the replicated
/// `addContainer`); they differ in what happens when an SCM becomes the serving leader and
/// in the additions of [`ScmHardening`], which only [`ScmBehavior::Hardened`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScmBehavior {
    /// This crate's reference: [`ScmBehavior::SeedPatch`] plus the additions of
    /// [`ScmConfig::hardening`], each switchable and on by default.
    Hardened,
    /// The seed's proposal as the seed describes it (HDDS-16891 attaches no patch): on
    /// becoming the serving leader (leader ready and out of safe mode) the SCM drops every
    /// pending entry, records a slot for each OPEN container on each datanode of its
    /// pipeline that has no replica of it, and serves no allocation before that is done (an
    /// allocation gate keyed by the leader's term). Everything else is Ozone's code at the
    /// seed's commit: the space check reads a datanode's storage reports before it takes the
    /// bucket's monitor (`PendingContainerTracker.checkSpaceAndRecordAllocation`), a
    /// datanode that registers again with a changed address, version or port set gets a
    /// fresh `DatanodeInfo` and bucket (`SCMNodeManager.register`,
    /// `NodeStateManager.updateNode`), and the rebuild reads the container table as applied
    /// when the SCM became leader-ready.
    SeedPatch,
    /// Ozone before the seed (the seed's defect): nothing records the slots of containers
    /// granted by a previous leader or incarnation.
    LegacyNoRebuild,
    /// The rebuild runs, but without a gate: the RPC layer's leader check opens when Ratis
    /// marks the division leader-ready, before `SCMStateMachine.notifyLeaderReady` has
    /// `SCMServiceManager` notify the services, so a first allocation can race the rebuild.
    /// Otherwise as [`ScmBehavior::SeedPatch`].
    LegacyRebuildWithoutGate,
}

impl ScmBehavior {
    /// Every behavior, the hardened one first.
    pub const ALL: [ScmBehavior; 4] = [
        ScmBehavior::Hardened,
        ScmBehavior::SeedPatch,
        ScmBehavior::LegacyNoRebuild,
        ScmBehavior::LegacyRebuildWithoutGate,
    ];

    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            ScmBehavior::Hardened => "Hardened",
            ScmBehavior::SeedPatch => "SeedPatch",
            ScmBehavior::LegacyNoRebuild => "LegacyNoRebuild",
            ScmBehavior::LegacyRebuildWithoutGate => "LegacyRebuildWithoutGate",
        }
    }

    /// Whether allocation waits for the rebuild of the leader's term (the seed's "finish
    /// the rebuild before the first allocation is served").
    pub fn gates_allocation(self) -> bool {
        matches!(self, ScmBehavior::Hardened | ScmBehavior::SeedPatch)
    }

    /// The additions this behavior runs: `configured` for [`ScmBehavior::Hardened`], none
    /// for the others.
    pub fn hardening(self, configured: ScmHardening) -> ScmHardening {
        match self {
            ScmBehavior::Hardened => configured,
            _ => ScmHardening::NONE,
        }
    }
}

/// This crate's additions beyond the seed's proposal, run by [`ScmBehavior::Hardened`]
/// only; each closes a race the crate's checkers or reviews found (HDDS-16891).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScmHardening {
    /// The space check reads the datanode's storage reports while it holds the datanode's
    /// bucket lock. Closes the report-order race (found by the shuttle cluster): Ozone reads
    /// the reports before it takes the bucket's monitor, so a check can pair a storage
    /// report from before a container was created (not counting it as committed) with a
    /// bucket from after its container report removed the entry (not counting it as
    /// pending) and grant the slot twice. Under the lock the check sees the container at
    /// least once, given that a datanode's node report is processed before the container
    /// report of the same create.
    pub read_reports_under_bucket_lock: bool,
    /// The rebuild applies every committed log entry after it takes the allocation gate.
    /// Closes the re-election race (found by a review): an allocation that passed the
    /// leader check of the old term submits after the same SCM was re-elected, Ratis (which
    /// carries no term per request) commits it, the submit answers a timeout, and the new
    /// term's rebuild, which waited for the gate, reads a table without the container: it
    /// drops the container's reservation and does not seed it again.
    pub apply_log_before_rebuild: bool,
    /// A datanode that registers again with a changed address, version or port set keeps
    /// its space record: the new `DatanodeInfo` takes over the old one's pending bucket and
    /// storage-report slot (the same objects; the reports are cleared, as in Ozone's fresh
    /// `DatanodeInfo`, until the next node report). Closes the re-registration gap (found by
    /// this crate's re-registration scenario): Ozone's `NodeStateManager.updateNode` builds
    /// a fresh `DatanodeInfo` with an empty bucket, so the slots of granted, unwritten
    /// containers on that datanode are granted again. Sharing the objects, rather than
    /// copying or re-seeding the bucket, also covers an allocation or a rebuild that
    /// resolved the old `DatanodeInfo` just before the replacement
    /// (`PipelineManagerImpl.checkSpaceAndRecordAllocation` resolves every node first): it
    /// records into the bucket the next check reads, and it reads the reports the next
    /// node report writes. Sharing the bucket alone is not enough: the shuttle cluster
    /// found such an allocation pairing the old `DatanodeInfo`'s frozen reports (without a
    /// container created since) with the shared bucket (from which that container's report
    /// had removed it).
    pub keep_space_on_reregistration: bool,
    /// The rebuild reserves a slot on each datanode of a container's pipeline that has
    /// reported no replica of it, whatever the container's state, not only for OPEN
    /// containers. Closes the closed-before-reported race (found by the random
    /// `MiniOzoneCluster` run): a container the old leader granted and closed (CLOSING or
    /// CLOSED in the table) while its replicas, written, are still OPEN on datanodes whose
    /// node reports have not reached the new leader, has no footprint the new leader sees;
    /// the seed's rebuild skips it and its slot is granted again. Cost: a datanode that
    /// never gets a replica of a closed container keeps a slot reserved until the entry
    /// ages out (one to three roll intervals).
    pub rebuild_reserves_unreported_replicas: bool,
    /// The rebuild reserves a slot for each CLOSED or QUASI_CLOSED container with fewer
    /// replicas than its factor on each registered datanode that holds none of it. Closes
    /// the lost-replication-target race (found by this crate's cluster): a replicate's
    /// pending allocation on its target (HDDS-14924) lives in the leader's memory only, so
    /// the new leader neither knows the target nor sees the copy the target is making,
    /// and grants the target's room again while the copy lands. The new leader cannot
    /// tell which datanode the old one picked, so every candidate keeps a slot. Cost: the
    /// datanodes not picked keep a slot reserved until the entry ages out (one to three
    /// roll intervals).
    pub rebuild_reserves_replication_targets: bool,
}

impl ScmHardening {
    /// Every addition on (the default).
    pub const ALL: ScmHardening = ScmHardening {
        read_reports_under_bucket_lock: true,
        apply_log_before_rebuild: true,
        keep_space_on_reregistration: true,
        rebuild_reserves_unreported_replicas: true,
        rebuild_reserves_replication_targets: true,
    };

    /// No addition: what every behavior but [`ScmBehavior::Hardened`] runs.
    pub const NONE: ScmHardening = ScmHardening {
        read_reports_under_bucket_lock: false,
        apply_log_before_rebuild: false,
        keep_space_on_reregistration: false,
        rebuild_reserves_unreported_replicas: false,
        rebuild_reserves_replication_targets: false,
    };
}

impl Default for ScmHardening {
    fn default() -> Self {
        Self::ALL
    }
}

/// Settings of an SCM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScmConfig {
    /// Slot size in bytes (`ozone.scm.container.size`, default 5 GB).
    pub container_size: u64,
    /// Bucket roll interval (`ozone.scm.pending.container.roll.interval`, default 5 min).
    pub roll_interval_ms: u64,
    /// The OPEN pipelines allocation chooses from.
    pub pipelines: Vec<Pipeline>,
    /// Seed of the pipeline choice: allocation picks one of [`ScmConfig::pipelines`] at
    /// random, as `ContainerManagerImpl.allocateContainer` does with its `java.util.Random`;
    /// here the draws come from this seed (mixed with the SCM's id), so a run is a function
    /// of its seed.
    pub pipeline_choice_seed: u64,
    /// The additions [`ScmBehavior::Hardened`] runs (ignored by the other behaviors).
    pub hardening: ScmHardening,
    /// The block deleting service's settings.
    pub block_deletion: BlockDeletionConfig,
    /// Commands each datanode's queue holds at most.
    pub command_queue_limit: usize,
    /// The replication manager's settings.
    pub replication: ReplicationManagerConfig,
    /// How the over-replication handler orders the excess replicas (HDDS-4589).
    pub excess_replica_order: ExcessReplicaOrder,
    /// What the report handler does with a replica of a DELETING or DELETED container
    /// (HDDS-14416, HDDS-14684).
    pub deleting_replica_rule: DeletingReplicaRule,
    /// Whether a replicate's target keeps a pending allocation (HDDS-14924).
    pub replication_space_accounting: ReplicationSpaceAccounting,
    /// What the replication manager does with its pending ops when it starts a new
    /// serving term (HDDS-8473).
    pub pending_ops_on_new_term: PendingOpsOnNewTerm,
}

/// What the replication manager does with `ContainerReplicaPendingOps` when it goes to
/// RUNNING for a new serving term (`ReplicationManager.notifyStatusChanged`).
///
/// **The race (HDDS-8473).** Pending ops live in the SCM's memory and survive a lost and
/// regained leadership: the ops of the earlier term still count as in flight, though the
/// datanodes drop those commands as stale once they heard a newer term (HDDS-3988). The
/// manager then counts a copy that will never come and sends none until the op's
/// deadline passes (twelve minutes by default). **The fix** clears the pending ops when
/// the manager goes to RUNNING.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PendingOpsOnNewTerm {
    /// Ozone since HDDS-8473: `ContainerReplicaPendingOps.clear`.
    #[default]
    Clear,
    /// Ozone before HDDS-8473: the ops of an earlier term stay until their deadline.
    LegacyKeep,
}

/// Whether the replication manager accounts for the space a copy will take on its target
/// (`ContainerReplicaPendingOps` notifying `SCMNodeManager.opAdded`).
///
/// **The race (HDDS-14924).** A replicate command sends a container to a target whose
/// node reports show the copy only once it has landed; until then allocation counts that
/// space as free and grants it to new containers, so the target ends up holding more
/// than it has room for. **The fix** records a pending allocation on the target when the
/// replicate's pending add is scheduled, as a grant does, until the target reports the
/// replica (`opCompleted`) or the entry ages out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ReplicationSpaceAccounting {
    /// Ozone since HDDS-14924: the target's bucket holds the container while it is copied.
    #[default]
    PendingAllocationOnTarget,
    /// Ozone before HDDS-14924: a replicate records nothing on its target.
    LegacyUnaccounted,
}

/// The order in which the over-replication handler (`RatisOverReplicationHandler`) picks
/// the excess replicas of a container to delete.
///
/// **The race (HDDS-4589, HDDS-16449).** The replication manager's pending deletes live in
/// the leader's memory only. After a failover the new leader finds the container still
/// over-replicated and picks its own excess; if two SCMs order the replicas differently,
/// the old leader's deletes and the new leader's fall on different replicas, and both
/// sets together leave fewer replicas than the replication factor. **The fix** orders the
/// replicas the same way on every SCM, so the new leader picks what the old one picked and
/// its deletes only repeat the old leader's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ExcessReplicaOrder {
    /// Ozone since HDDS-4589: by `ContainerReplica.hashCode()` (the container and the
    /// datanode, the same on every SCM); here by datanode id, as fixed across SCMs.
    #[default]
    Sorted,
    /// Ozone before HDDS-4589: the order of the SCM's own set of replicas, which nothing
    /// keeps equal across SCMs. Here each SCM ranks the replicas by a hash of its own id
    /// and the datanode's, so two SCMs may rank them differently, as two JVMs' hash sets
    /// may.
    LegacyPerScm,
}

/// What the report handler (`AbstractContainerReportHandler.updateContainerState`) does
/// with a replica reported for a DELETING or DELETED container, along upstream's history.
///
/// **The race (HDDS-14416, HDDS-16811).** A replica that reports blocks after its
/// container went DELETING (a block a repair copied back, or a replica that missed the
/// deletes) brings the container back (HDDS-11136, HDDS-12421); its empty flag is sticky,
/// so the container is never deleted again and the replica keeps deleted blocks for ever.
/// **The fix** force-deletes such a replica: a CLOSED one since HDDS-14416, a QUASI_CLOSED
/// one too since HDDS-14684. Upstream guards both with `bcsid <= container sequence id`,
/// which is always true there: `updateContainerStats` raised the container's sequence id
/// to the replica's just before, so the guard protects nothing, here as upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DeletingReplicaRule {
    /// Ozone master (HDDS-14684 on HDDS-14416): a CLOSED or QUASI_CLOSED replica is
    /// force-deleted; another non-empty replica (OPEN, CLOSING, UNHEALTHY) brings the
    /// container back to QUASI_CLOSED (`transitionDeletingOrDeletedToTargetState`).
    #[default]
    ForceDeleteClosedOrQuasiClosed,
    /// HDDS-14416 before HDDS-14684: a CLOSED replica is force-deleted; another non-empty
    /// replica, a QUASI_CLOSED one included, brings the container back to CLOSED.
    LegacyForceDeleteClosedOnly,
    /// Before HDDS-14416 (HDDS-11136, HDDS-12421): any non-empty replica brings the
    /// container back to CLOSED (`transitionDeletingOrDeletedToClosedState`); nothing is
    /// deleted.
    LegacyComeBackToClosed,
}

/// Settings of the replication manager (`ReplicationManagerConfiguration`,
/// `HddsConfigKeys`), all on the SCM's [`Clock`](crate::clock::Clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicationManagerConfig {
    /// Time between two passes over every container (`hdds.scm.replication.thread.interval`,
    /// 300 s).
    pub interval_ms: u64,
    /// How long after the SCM becomes the serving leader (leader ready, out of safe mode)
    /// the replication manager waits before its first pass
    /// (`hdds.scm.wait.time.after.safemode.exit`, 5 min).
    pub wait_after_safe_mode_exit_ms: u64,
    /// The SCM deadline of a command it sends, from now (`hdds.scm.replication.event.timeout`,
    /// 12 min); a pending operation expires then.
    pub event_timeout_ms: u64,
    /// The datanode deadline is this much before the SCM deadline
    /// (`hdds.scm.replication.event.timeout.datanode.offset`, 6 min).
    pub event_timeout_datanode_offset_ms: u64,
    /// Time between two runs of the under-replicated processor over the queue
    /// (`hdds.scm.replication.under.replicated.interval`, 30 s).
    pub under_replicated_interval_ms: u64,
    /// Time between two runs of the over-replicated processor over the queue
    /// (`hdds.scm.replication.over.replicated.interval`, 30 s).
    pub over_replicated_interval_ms: u64,
    /// Copies a stuck QUASI_CLOSED container keeps of its best origins
    /// (`hdds.scm.replication.quasi.closed.stuck.best.origin.copies`, 3).
    pub quasi_closed_stuck_best_origin_copies: usize,
    /// Copies a stuck QUASI_CLOSED container keeps of each other origin
    /// (`hdds.scm.replication.quasi.closed.stuck.other.origin.copies`, 2).
    pub quasi_closed_stuck_other_origin_copies: usize,
}

impl Default for ReplicationManagerConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl ReplicationManagerConfig {
    /// Ozone's defaults.
    pub const DEFAULT: Self = Self {
        interval_ms: 300_000,
        wait_after_safe_mode_exit_ms: 300_000,
        event_timeout_ms: 720_000,
        event_timeout_datanode_offset_ms: 360_000,
        under_replicated_interval_ms: 30_000,
        over_replicated_interval_ms: 30_000,
        quasi_closed_stuck_best_origin_copies: 3,
        quasi_closed_stuck_other_origin_copies: 2,
    };

    /// No interval, no start delay, Ozone's command deadlines: a replication manager (and
    /// its processors) that runs whenever it is asked, as a stepped cluster drives it.
    pub fn immediate() -> Self {
        Self {
            interval_ms: 0,
            wait_after_safe_mode_exit_ms: 0,
            under_replicated_interval_ms: 0,
            over_replicated_interval_ms: 0,
            ..Self::default()
        }
    }
}

impl ScmConfig {
    /// Ozone's defaults with the given pipelines, pipeline choice seed 0, every hardening
    /// switch on.
    pub fn with_pipelines(pipelines: Vec<Pipeline>) -> Self {
        Self {
            container_size: 5 * 1024 * 1024 * 1024,
            roll_interval_ms: 5 * 60 * 1000,
            pipelines,
            pipeline_choice_seed: 0,
            hardening: ScmHardening::ALL,
            block_deletion: BlockDeletionConfig::default(),
            command_queue_limit: 1024,
            replication: ReplicationManagerConfig::default(),
            excess_replica_order: ExcessReplicaOrder::Sorted,
            deleting_replica_rule: DeletingReplicaRule::ForceDeleteClosedOrQuasiClosed,
            replication_space_accounting: ReplicationSpaceAccounting::PendingAllocationOnTarget,
            pending_ops_on_new_term: PendingOpsOnNewTerm::Clear,
        }
    }

    /// Checks the values: a zero container size or roll interval, a pipeline without
    /// datanodes, or two pipelines with one id is an error.
    pub fn validate(&self) -> Result<(), ScmError> {
        if self.container_size == 0 {
            return Err(ScmError::InvalidConfig {
                reason: "container_size must be at least 1 byte".into(),
            });
        }
        if self.command_queue_limit == 0 {
            return Err(ScmError::InvalidConfig {
                reason: "command_queue_limit must be at least 1".into(),
            });
        }
        if self.roll_interval_ms == 0 {
            return Err(ScmError::InvalidConfig {
                reason: "roll_interval_ms must be at least 1".into(),
            });
        }
        if let Some(empty) = self.pipelines.iter().find(|p| p.nodes.is_empty()) {
            return Err(ScmError::InvalidConfig {
                reason: format!("pipeline {} has no datanode", empty.id),
            });
        }
        let replication = &self.replication;
        if replication.event_timeout_datanode_offset_ms >= replication.event_timeout_ms {
            return Err(ScmError::InvalidConfig {
                reason: "the datanode offset of the replication event timeout must be below \
                         the timeout"
                    .into(),
            });
        }
        let ids: BTreeSet<_> = self.pipelines.iter().map(|p| p.id).collect();
        if ids.len() != self.pipelines.len() {
            return Err(ScmError::InvalidConfig {
                reason: "pipeline ids must be unique".into(),
            });
        }
        Ok(())
    }
}
