//! Which standby logic a namesystem runs, and its settings.
//!
//! **The race (HDFS-2742).** Each unpatched behaviour lets the standby judge a datanode's
//! report against a block state it was not produced under, drop it, keep it for ever, or
//! credit safe mode wrongly. **The fix** is a set of upstream patches; [`NamesystemBehavior::Trunk`] is
//! trunk's code with all of them, and each legacy value takes exactly one away (the
//! whole-message queue is the 2012 code before HDFS-2742), so a checker proves what each
//! one buys.

use crate::namenode::NameNodeId;
use crate::namenode::evaluation::{RbwOnCompleteRule, ReplicaRules};

/// Which standby logic runs: trunk's, or one unpatched behaviour restored per legacy value
/// (the checkers must catch each of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NamesystemBehavior {
    /// Trunk's `BlockManager`, `FSEditLogLoader` and `FSNamesystem.startActiveServices`:
    /// the per-replica, per-block queue of HDFS-2742 drained after each edit that changes
    /// its block (`processQueuedMessagesForBlock`, with the skip-after-future rule and
    /// queued DELETED entries applied without the future test), completion crediting safe
    /// mode, the postpone flag (HDFS-3605), the reported block queued (HDFS-15422), the
    /// entries of a removed datanode (HDFS-6289) or block (HDFS-17905) dropped, a
    /// processed report purging its pair's queued entries after the future test
    /// (HDFS-17477), the impending generation stamp (HDFS-14941) and trunk's
    /// `checkReplicaCorrupt` (HDFS-2791, HDFS-5723).
    Trunk,
    /// The HA branch's queue before the HDFS-2742 fix (the commit's parent, 2012): whole
    /// messages are postponed when their highest GS is in the future and processed, whole
    /// and through the active's code, after each batch of edits; anything else is
    /// processed at once and can mark a replica corrupt on the standby. Only the
    /// safe-mode block total is recomputed after each batch (`setBlockTotal`); completion,
    /// reopen and delete adjust nothing. The 2012 replica tables, no impending GS.
    LegacyWholeMessageQueue,
    /// Trunk, except that queued reports are drained only when replay first adds their
    /// block (`FSEditLogLoader.addNewBlock`), and completion (`forceCompleteBlock`) does not
    /// credit the replicas already present to safe mode: the seed's rejected first patch,
    /// under which a restarted standby never reaches its safe-mode threshold.
    LegacyEarlyDrain,
    /// Trunk before HDFS-3605: "postpone" is "the HA state is standby", and failover
    /// switches the HA state before the catch-up, so the catch-up's drains mark replicas
    /// corrupt against intermediate states.
    LegacyHaStateCheck,
    /// Trunk before HDFS-17453/17477: a queued entry superseded by a newer report of the
    /// same (block, storage) lingers until failover judges it against the completed block
    /// and flags the datanode's current replica corrupt.
    LegacyNoStaleEntryPurge,
    /// Trunk before HDFS-14941: replaying `OP_SET_GENSTAMP` moves the counter of the
    /// future test at once, so a report of a new block that arrives between the GS edit
    /// and the block edit (different tailer batches) is neither future nor known, and is
    /// dropped: the standby misses the replica until the datanode's next full report.
    LegacyNoImpendingGenstamp,
    /// Trunk before HDFS-17905: removing a block from the namespace
    /// (`BlockManager.removeBlock`, for a delete or an abandoned last block) leaves its
    /// queued reports. No edit will change that block again, so nothing drains them: on a
    /// standby they wait for a failover, on an observer for ever (a leak).
    LegacyKeepRemovedBlockMessages,
    /// Trunk before HDFS-6289: a datanode the NameNode removes (dead, or decommissioned
    /// and gone; `DatanodeManager.removeDatanode`) leaves its reports in the standby's
    /// queue. Upstream, failover then processes a report of a datanode it no longer knows
    /// and the transition to active fails; here the drain records the departed datanode
    /// as a location no report will ever take back.
    LegacyKeepDepartedDatanodeMessages,
    /// Trunk before HDFS-15422: a report that looks corrupt while the standby postpones is
    /// queued with the stored block's stamp and length in place of the reported ones
    /// (`queueReportedBlock(storageInfo, storedBlock, …)`, the code's own TODO pointing at
    /// HDFS-6289). Judged later, the entry is not what the datanode said: a stale replica
    /// can pass for a current one.
    LegacyQueueStoredBlock,
}

impl NamesystemBehavior {
    /// Every behavior, trunk's first.
    pub const ALL: [NamesystemBehavior; 9] = [
        NamesystemBehavior::Trunk,
        NamesystemBehavior::LegacyWholeMessageQueue,
        NamesystemBehavior::LegacyEarlyDrain,
        NamesystemBehavior::LegacyHaStateCheck,
        NamesystemBehavior::LegacyNoStaleEntryPurge,
        NamesystemBehavior::LegacyNoImpendingGenstamp,
        NamesystemBehavior::LegacyKeepRemovedBlockMessages,
        NamesystemBehavior::LegacyKeepDepartedDatanodeMessages,
        NamesystemBehavior::LegacyQueueStoredBlock,
    ];

    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            NamesystemBehavior::Trunk => "Trunk",
            NamesystemBehavior::LegacyWholeMessageQueue => "LegacyWholeMessageQueue",
            NamesystemBehavior::LegacyEarlyDrain => "LegacyEarlyDrain",
            NamesystemBehavior::LegacyHaStateCheck => "LegacyHaStateCheck",
            NamesystemBehavior::LegacyNoStaleEntryPurge => "LegacyNoStaleEntryPurge",
            NamesystemBehavior::LegacyNoImpendingGenstamp => "LegacyNoImpendingGenstamp",
            NamesystemBehavior::LegacyKeepRemovedBlockMessages => "LegacyKeepRemovedBlockMessages",
            NamesystemBehavior::LegacyKeepDepartedDatanodeMessages => {
                "LegacyKeepDepartedDatanodeMessages"
            }
            NamesystemBehavior::LegacyQueueStoredBlock => "LegacyQueueStoredBlock",
        }
    }

    /// The 2012 code: whole messages queued, nothing queued per replica.
    pub fn whole_message_queue(self) -> bool {
        self == NamesystemBehavior::LegacyWholeMessageQueue
    }

    /// Whether replaying `OP_SET_GENSTAMP` only records an impending GS (HDFS-14941).
    pub fn impending_genstamp(self) -> bool {
        !matches!(
            self,
            NamesystemBehavior::LegacyNoImpendingGenstamp
                | NamesystemBehavior::LegacyWholeMessageQueue
        )
    }

    /// Whether a processed report drops its pair's queued entries (HDFS-17477).
    pub fn purges_superseded_entries(self) -> bool {
        !matches!(
            self,
            NamesystemBehavior::LegacyNoStaleEntryPurge
                | NamesystemBehavior::LegacyWholeMessageQueue
        )
    }

    /// Whether removing a block drops its queued reports (HDFS-17905).
    pub fn purges_removed_block_messages(self) -> bool {
        self != NamesystemBehavior::LegacyKeepRemovedBlockMessages
    }

    /// Whether removing a datanode drops its queued reports (HDFS-6289).
    pub fn purges_departed_datanode_messages(self) -> bool {
        self != NamesystemBehavior::LegacyKeepDepartedDatanodeMessages
    }

    /// Whether a report queued as corrupt-looking keeps the reported stamp and length
    /// (HDFS-15422), not the stored block's.
    pub fn queues_reported_block(self) -> bool {
        self != NamesystemBehavior::LegacyQueueStoredBlock
    }

    /// The decision tables of this code, with `rbw_rule` for an equal-GS RBW of a
    /// COMPLETE block.
    pub fn replica_rules(self, rbw_rule: RbwOnCompleteRule) -> ReplicaRules {
        let rules = if self.whole_message_queue() {
            ReplicaRules::HDFS_2012
        } else {
            ReplicaRules::TRUNK
        };
        rules.with_rbw_rule(rbw_rule)
    }

    /// Whether a report of a replica flagged corrupt reaches `addStoredBlock`, where a
    /// replica flagged for a GS mismatch and reported again healthy is unflagged (trunk's
    /// `processReportedBlock` and `addStoredBlockUnderConstruction`; not in 2012).
    pub fn readds_corrupt_replicas(self) -> bool {
        !self.whole_message_queue()
    }
}

/// Settings of a [`Namesystem`](super::Namesystem).
#[derive(Debug, Clone, PartialEq)]
pub struct NamenodeConfig {
    /// The logic.
    pub behavior: NamesystemBehavior,
    /// `dfs.namenode.replication.min` (1): the FINALIZED replicas a COMMITTED block needs
    /// on the active to become COMPLETE.
    pub min_replication: usize,
    /// Safe replication (`dfs.namenode.safemode.replication.min`, defaults to the minimum
    /// replication).
    pub safe_replication: usize,
    /// `dfs.namenode.safemode.threshold-pct` (0.999), in thousandths.
    pub safemode_threshold_per_mille: u64,
    /// Bound of the pending queue.
    pub pending_queue_limit: usize,
    /// Bound of the replicas of unknown blocks one storage may have waiting for deletion
    /// (HDFS's `InvalidateBlocks` is unbounded). A standby hands out no deletions, so
    /// without a bound every report of a block it does not know would be kept until
    /// failover; past it such a report is dropped and counted
    /// (`BlockMetrics::unknown_replica_deletions_dropped`), and the storage's next report
    /// offers the replica again.
    pub unknown_replica_deletions_per_storage_limit: usize,
    /// How an equal-GS RBW of a COMPLETE block is judged.
    pub rbw_rule: RbwOnCompleteRule,
    /// Seed of the excess-replica choice. HDFS picks the replica to delete by rack and
    /// free space (`BlockPlacementPolicyDefault.chooseReplicaToDelete`); the model has
    /// neither, so it picks by a hash of this seed, the block and the storage: the
    /// `RandomDeleterPolicy` of `TestDNFencing`, with which two NameNodes given different
    /// seeds make different choices, as they may in a cluster.
    pub excess_choice_seed: u64,
    /// `dfs.ha.namenode.id`: which NameNode of the pair this is, the node its protocol
    /// events name (a [`NameNode`](crate::namenode::ha::NameNode) sets its own); `None`
    /// for a namesystem on its own.
    pub namenode_id: Option<NameNodeId>,
}

impl Default for NamenodeConfig {
    fn default() -> Self {
        Self {
            behavior: NamesystemBehavior::Trunk,
            min_replication: 1,
            safe_replication: 1,
            safemode_threshold_per_mille: 999,
            pending_queue_limit: 1_000_000,
            unknown_replica_deletions_per_storage_limit: 100_000,
            rbw_rule: RbwOnCompleteRule::IgnoreEqualGs,
            excess_choice_seed: 0,
            namenode_id: None,
        }
    }
}

impl NamenodeConfig {
    /// The decision tables this NameNode applies.
    pub fn replica_rules(&self) -> ReplicaRules {
        self.behavior.replica_rules(self.rbw_rule)
    }
}
