//! The state behind the namesystem lock, and the few small types its jobs share.
//!
//! **The race (HDFS-2742).** A report and the edit it depends on reach the standby in
//! either order; both are applied to this one state, so the order problem is logical, not
//! a data race. **The fix** keeps everything here under one lock, the namesystem write
//! lock (`FSNamesystem.writeLock`): each public call of the namesystem is one critical
//! section, and the jobs (replay, reports, replication, safe mode) are `impl State` blocks
//! in their own files, which import this file and never each other.

use std::collections::{BTreeMap, BTreeSet};

use super::config::{NamenodeConfig, NamesystemBehavior};
use super::edits::FileId;
use super::view::{
    BlockMetrics, HaState, INodeFile, NamesystemView, SafeModeCheck, SafeModeCounts, StoredBlock,
};
use crate::namenode::evaluation::CorruptReason;
use crate::namenode::pending_messages::{PendingDataNodeMessages, ReportedState, StaleEntryPurge};
use crate::namenode::{
    Block, BlockId, DatanodeId, GenerationStamp, NameNodeId, ReplicaState, StorageId, TxId,
};

/// The namespace, the block manager's maps and the pending queue (`FSNamesystem` with
/// its `BlockManager`).
#[derive(Debug)]
pub(super) struct State {
    pub(super) config: NamenodeConfig,
    pub(super) ha: HaState,
    pub(super) postpone: bool,
    /// The counter of the future test (`BlockIdManager.isGenStampInFuture`).
    pub(super) gs_counter: GenerationStamp,
    /// HDFS-14941: the highest GS replayed from `OP_SET_GENSTAMP` (`impendingGenerationStamp`),
    /// applied to the counter when replay attaches a block with it, and at failover.
    pub(super) impending_gs: GenerationStamp,
    /// Failover's catch-up is replaying the rest of the log (`catchupDuringFailover`).
    pub(super) catching_up: bool,
    /// Edits applied so far, logged or replayed (`FSImage.lastAppliedTxId`): the next
    /// edit's transaction id is one more.
    pub(super) last_applied_txid: TxId,
    pub(super) files: BTreeMap<FileId, INodeFile>,
    pub(super) blocks: BTreeMap<BlockId, StoredBlock>,
    pub(super) corrupt: BTreeMap<BlockId, BTreeMap<StorageId, (GenerationStamp, CorruptReason)>>,
    /// Replicas to delete (`invalidateBlocks`), handed to the datanode on its heartbeat.
    pub(super) pending_deletion: BTreeMap<StorageId, BTreeMap<BlockId, Block>>,
    pub(super) reported_storages: BTreeSet<StorageId>,
    pub(super) stale: BTreeSet<DatanodeId>,
    pub(super) queue: PendingDataNodeMessages,
    pub(super) safe_mode: SafeModeCounts,
    pub(super) metrics: BlockMetrics,
    /// [`NamesystemBehavior::LegacyWholeMessageQueue`]: postponed messages with their target GS.
    pub(super) whole_messages: Vec<(GenerationStamp, Message)>,
    /// [`NamesystemBehavior::LegacyWholeMessageQueue`]: highest GS seen in block lists this batch.
    pub(super) batch_max_gs: GenerationStamp,
}

/// A whole datanode message, as the legacy queue keeps it.
#[derive(Debug, Clone)]
pub(super) enum Message {
    Incremental(StorageId, Block, ReportedState),
    FullReport(StorageId, Vec<(Block, ReplicaState)>),
}

/// Where a report comes from: the first full report of a storage
/// (`BlockManager.processFirstBlockReport`), a later one (`reportDiff`) and an incremental
/// one (`processIncrementalBlockReport`) differ in a few steps of
/// `BlockManager.processReportedBlock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    Incremental,
    FirstFullReport,
    LaterFullReport,
    /// Re-evaluated from the queue (a drain, or the failover's drain of everything).
    Queue,
}

impl Origin {
    /// How a failure's story names it (the `report` field of a report's events).
    pub(super) fn name(self) -> &'static str {
        match self {
            Origin::Incremental => "incremental",
            Origin::FirstFullReport | Origin::LaterFullReport => "full",
            Origin::Queue => "queued",
        }
    }
}

/// The edit that changed a block and drains its queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DrainTrigger {
    NewBlock,
    GenerationStamp,
    Completed,
}

impl DrainTrigger {
    /// How a failure's story names it (the `after` field of a drain's events).
    pub(super) fn name(self) -> &'static str {
        match self {
            DrainTrigger::NewBlock => "block added",
            DrainTrigger::GenerationStamp => "genstamp changed",
            DrainTrigger::Completed => "block completed",
        }
    }
}

impl State {
    /// An empty namespace; a standby starts in safe mode and postponing.
    pub(super) fn new(config: NamenodeConfig, initial_gs: GenerationStamp, ha: HaState) -> Self {
        let standby = ha == HaState::Standby;
        let purge = if config.behavior.purges_superseded_entries() {
            StaleEntryPurge::OnProcess
        } else {
            StaleEntryPurge::None
        };
        let queue = PendingDataNodeMessages::new(purge, config.pending_queue_limit);
        State {
            config,
            ha,
            postpone: standby,
            gs_counter: initial_gs,
            impending_gs: initial_gs,
            catching_up: false,
            last_applied_txid: 0,
            files: BTreeMap::new(),
            blocks: BTreeMap::new(),
            corrupt: BTreeMap::new(),
            pending_deletion: BTreeMap::new(),
            reported_storages: BTreeSet::new(),
            stale: BTreeSet::new(),
            queue,
            safe_mode: SafeModeCounts {
                on: standby,
                ..SafeModeCounts::default()
            },
            metrics: BlockMetrics::default(),
            whole_messages: Vec::new(),
            batch_max_gs: GenerationStamp::MIN,
        }
    }

    /// The node this namesystem's protocol events name (`nn1`), when it has an id.
    pub(super) fn node(&self) -> Option<NameNodeId> {
        self.config.namenode_id
    }

    /// Whether a future or inconsistent *replica* is queued rather than acted upon
    /// (`BlockManager.shouldPostponeBlocksFromFuture`). The whole-message legacy queue
    /// postpones messages, never replicas.
    pub(super) fn postponing(&self) -> bool {
        match self.config.behavior {
            NamesystemBehavior::LegacyHaStateCheck => self.ha == HaState::Standby,
            NamesystemBehavior::LegacyWholeMessageQueue => false,
            _ => self.postpone,
        }
    }

    /// `isGenStampInFuture`: the reported GS is past the counter.
    pub(super) fn is_future(&self, gs: GenerationStamp) -> bool {
        gs > self.gs_counter
    }

    /// Whether edits are replayed (`FSEditLogLoader`: the standby's tailer, or failover's
    /// catch-up) rather than applied by the active that logs them.
    pub(super) fn replaying(&self) -> bool {
        self.ha == HaState::Standby || self.catching_up
    }

    /// A copy of everything the checkers read. Costs a copy of the namespace. In safe
    /// mode it states the counts beside their recount, for the safe-mode monitor: a
    /// stronger form of upstream's `doConsistencyCheck` (`BlockManagerSafeMode`, run only
    /// with Java assertions on), which holds the total against the active block count.
    /// With reports queued, it states how many and of which blocks (upstream's
    /// `PendingDataNodeMessageCount` metric), for the liveness monitor of the queue.
    pub(super) fn view(&self) -> NamesystemView {
        let recount = self.trace_read();
        NamesystemView {
            ha: self.ha,
            postpone: self.postpone,
            generation_stamp: self.gs_counter,
            impending_generation_stamp: self.impending_gs,
            safe_mode: self.safe_mode,
            recount,
            files: self.files.clone(),
            blocks: self.blocks.clone(),
            corrupt: self
                .corrupt
                .iter()
                .map(|(b, m)| (*b, m.iter().map(|(s, (gs, _))| (*s, *gs)).collect()))
                .collect(),
            queued: self.queue.iter().copied().collect(),
            queue: self.queue.metrics(),
            metrics: self.metrics,
            rules: self.config.replica_rules(),
        }
    }

    /// What the safe-mode recount reads, without the copy of the namespace a
    /// [`view`](Self::view) makes; it states the same events a view does.
    pub(super) fn safe_mode_check(&self) -> SafeModeCheck {
        SafeModeCheck {
            safe_mode: self.safe_mode,
            recount: self.trace_read(),
            any_corrupt: !self.corrupt.is_empty(),
        }
    }

    /// A read of the state: the recount of the safe-mode counters, and the events a read
    /// states (the counts beside their recount in safe mode, the queued reports).
    fn trace_read(&self) -> (usize, usize) {
        let recount = self.count_safe_blocks();
        if self.safe_mode.on {
            crate::events::debug!(
                node = self.node(),
                block_total = self.safe_mode.block_total,
                block_safe = self.safe_mode.block_safe,
                recount_total = recount.0,
                recount_safe = recount.1,
                corrupt = self.corrupt.len(),
                "safe mode consistency check"
            );
        }
        let queued = self.queue.count();
        if queued > 0 {
            let mut blocks: Vec<String> =
                self.queue.iter().map(|q| q.block.id.to_string()).collect();
            blocks.dedup();
            crate::events::debug!(
                node = self.node(),
                queued,
                blocks = %blocks.join(", "),
                "pending messages read"
            );
        }
        recount
    }
}
