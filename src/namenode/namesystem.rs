//! A NameNode's namespace and block manager as the HA standby runs them
//! (`FSNamesystem`, `FSEditLogLoader`, `BlockManager`): edit replay, per-replica processing
//! of datanode reports, the per-block queue and its drains, failover, safe-mode counting,
//! and, once active, corrupt marking, invalidation and excess-replica deletion.
//!
//! **The race (HDFS-2742).** The standby applies edits late, so a datanode's report can
//! reach it before the state it was produced under. Judged after the block's completion, a
//! healthy RBW replica looks corrupt (and the chain of spec 12.1 loses every replica);
//! judged before completion without crediting safe mode, the standby never leaves it.
//!
//! **The fix.** While `postpone` is on, a report that is future or inconsistent is queued
//! per replica, per block, and re-judged right after each edit that changes that block
//! (new block, GS change, completion); completion credits the replicas already present;
//! failover catches up with `postpone` still on, turns it off, then judges what is left.
//!
//! Everything runs under one lock, the namesystem write lock: the ordering problem is
//! logical (message against edit), not a data race (spec 1.5).

use std::collections::{BTreeMap, BTreeSet};

use super::evaluation::{
    BlockUcState, CorruptReason, RbwOnCompleteRule, ReplicaVerdict, StoredBlockView,
    check_replica_corrupt, is_block_under_construction,
};
use super::pending_messages::{
    PendingDataNodeMessages, QueueMetrics, QueuedReport, ReportedState, StaleEntryPurge,
};
use super::{Block, BlockId, DatanodeId, GenerationStamp, ReplicaState, StorageId};
use crate::sync::Mutex;

/// Identifies a file (its inode id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(pub u64);

/// Which standby logic runs (spec 14). Each legacy value restores one unpatched behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NamesystemBehavior {
    /// The shipped logic with the later fixes (HDFS-3605, HDFS-15422, HDFS-17477, HDFS-6289,
    /// HDFS-17905).
    Fixed,
    /// Spec 8.2, the queue before the fix: whole messages are postponed when their highest
    /// GS is in the future and processed, whole and through the active's code, after each
    /// batch of edits; anything else is processed at once and can mark a replica corrupt
    /// on the standby. Safe-mode totals are recounted after each batch instead of being
    /// adjusted by completion, reopen and delete.
    LegacyWholeMessageQueue,
    /// Spec 12.2: queued reports are drained only when replay first adds their block, and
    /// completion does not credit the replicas already present to safe mode.
    LegacyEarlyDrain,
    /// HDFS-3605: "postpone" is "the HA state is standby", and failover switches the HA
    /// state before the catch-up, so the catch-up's drains mark replicas corrupt against
    /// intermediate states.
    LegacyHaStateCheck,
    /// Before HDFS-17453/17477: a queued entry superseded by a newer report of the same
    /// (block, storage) lingers until failover judges it (spec 12.5).
    LegacyNoStaleEntryPurge,
}

impl NamesystemBehavior {
    /// Every behavior, the fixed one first.
    pub const ALL: [NamesystemBehavior; 5] = [
        NamesystemBehavior::Fixed,
        NamesystemBehavior::LegacyWholeMessageQueue,
        NamesystemBehavior::LegacyEarlyDrain,
        NamesystemBehavior::LegacyHaStateCheck,
        NamesystemBehavior::LegacyNoStaleEntryPurge,
    ];

    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            NamesystemBehavior::Fixed => "Fixed",
            NamesystemBehavior::LegacyWholeMessageQueue => "LegacyWholeMessageQueue",
            NamesystemBehavior::LegacyEarlyDrain => "LegacyEarlyDrain",
            NamesystemBehavior::LegacyHaStateCheck => "LegacyHaStateCheck",
            NamesystemBehavior::LegacyNoStaleEntryPurge => "LegacyNoStaleEntryPurge",
        }
    }
}

/// Settings of a [`Namesystem`].
#[derive(Debug, Clone, PartialEq)]
pub struct NamenodeConfig {
    /// The logic.
    pub behavior: NamesystemBehavior,
    /// `dfs.namenode.replication.min` (1).
    pub min_replication: usize,
    /// Safe replication (defaults to the minimum replication).
    pub safe_replication: usize,
    /// `dfs.namenode.safemode.threshold-pct` (0.999), in thousandths.
    pub safemode_threshold_per_mille: u64,
    /// Bound of the pending queue.
    pub pending_queue_limit: usize,
    /// How an equal-GS RBW of a COMPLETE block is judged.
    pub rbw_rule: RbwOnCompleteRule,
}

impl Default for NamenodeConfig {
    fn default() -> Self {
        Self {
            behavior: NamesystemBehavior::Fixed,
            min_replication: 1,
            safe_replication: 1,
            safemode_threshold_per_mille: 999,
            pending_queue_limit: 1_000_000,
            rbw_rule: RbwOnCompleteRule::IgnoreEqualGs,
        }
    }
}

/// An edit the active logged, as the standby replays it (spec 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditOp {
    /// `OP_SET_GENSTAMP`: the generation-stamp counter.
    SetGenstamp(GenerationStamp),
    /// `OP_ADD` of a new file: created under construction, no blocks.
    AddFile {
        /// The file.
        file: FileId,
        /// Its replication factor.
        replication: usize,
    },
    /// `OP_ADD_BLOCK`: the penultimate block's final length, then a new last block.
    AddBlock {
        /// The file.
        file: FileId,
        /// The previous last block as the active has it now (id, GS, final length).
        penultimate: Option<Block>,
        /// The new last block.
        last: Block,
    },
    /// `OP_UPDATE_BLOCKS` (or `OP_ADD` with a block list): the whole block list.
    UpdateBlocks {
        /// The file.
        file: FileId,
        /// The list.
        blocks: Vec<Block>,
    },
    /// `OP_CLOSE`: the final block list; the file is complete.
    Close {
        /// The file.
        file: FileId,
        /// The list.
        blocks: Vec<Block>,
    },
    /// `OP_APPEND`: the file is reopened, its last block back under construction.
    Append {
        /// The file.
        file: FileId,
    },
    /// `OP_SET_REPLICATION`.
    SetReplication {
        /// The file.
        file: FileId,
        /// The new factor.
        replication: usize,
    },
    /// `OP_DELETE`: the file and its blocks go.
    Delete {
        /// The file.
        file: FileId,
    },
}

/// An edit that does not fit the namespace it is replayed on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// The edit names a file that does not exist.
    #[error("edit for unknown file {0:?}")]
    UnknownFile(FileId),
    /// `OP_ADD` of a file that exists.
    #[error("file {0:?} exists already")]
    FileExists(FileId),
    /// A block at a position has another id than the stored one.
    #[error("file {file:?} position {position}: edit has block {edit:?}, namespace {stored:?}")]
    BlockIdMismatch {
        /// The file.
        file: FileId,
        /// The position in the block list.
        position: usize,
        /// The stored id.
        stored: BlockId,
        /// The edit's id.
        edit: BlockId,
    },
    /// A block's GS changed where only the last block's may, or went backwards.
    #[error("block {block:?}: generation stamp {stored} cannot become {edit}")]
    GenerationStamp {
        /// The block.
        block: BlockId,
        /// The stored GS.
        stored: GenerationStamp,
        /// The edit's GS.
        edit: GenerationStamp,
    },
    /// A block id already in use by another file.
    #[error("block {0:?} already exists")]
    BlockExists(BlockId),
    /// An append to a file that is open, or has no block.
    #[error("file {0:?} cannot be reopened")]
    CannotReopen(FileId),
}

/// One stored block (`BlockInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBlock {
    /// Id, the NameNode's GS and length.
    pub block: Block,
    /// Under-construction state.
    pub state: BlockUcState,
    /// The owning file.
    pub file: FileId,
    /// Storages holding an accepted replica.
    pub locations: BTreeSet<StorageId>,
    /// While not complete: the replicas expected to finish it, with their GS and state.
    pub expected: BTreeMap<StorageId, (GenerationStamp, ReplicaState)>,
}

/// A file (`INodeFile`): its blocks in order, whether it is open, its replication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct INodeFile {
    /// Block ids, first to last.
    pub blocks: Vec<BlockId>,
    /// Open for write (its last block may be under construction).
    pub under_construction: bool,
    /// The replication factor.
    pub replication: usize,
}

/// The HA state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HaState {
    /// Tails edits; never acts on datanodes.
    Standby,
    /// Serves clients and sends commands to datanodes.
    Active,
}

/// Safe-mode counters (spec 11).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SafeModeCounts {
    /// In safe mode.
    pub on: bool,
    /// COMPLETE blocks.
    pub block_total: usize,
    /// COMPLETE blocks with at least the safe replication of live stored replicas.
    pub block_safe: usize,
}

impl SafeModeCounts {
    /// `blockThreshold = floor(blockTotal × threshold)`, the threshold in thousandths.
    pub fn block_threshold(&self, threshold_per_mille: u64) -> usize {
        let threshold = u128::from(threshold_per_mille.min(1000));
        // Cannot overflow: a usize times at most 1000, divided by 1000, fits a usize.
        (self.block_total as u128 * threshold / 1000) as usize
    }

    /// Whether enough blocks are safe to leave safe mode.
    pub fn threshold_reached(&self, threshold_per_mille: u64) -> bool {
        self.block_safe >= self.block_threshold(threshold_per_mille)
    }
}

/// What a NameNode did to replicas, for metrics and the scenarios' invariants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockMetrics {
    /// Replicas marked corrupt.
    pub corrupt_marked: u64,
    /// Of those, marked while `postpone` was on: the standby acting on a report it should
    /// have postponed. Stays 0 with the fixes (spec 13, invariants 1 and 3).
    pub corrupt_marked_while_postponing: u64,
    /// Replicas scheduled for deletion as corrupt or excess.
    pub deletions_scheduled: u64,
}

/// A consistent copy of a namesystem's observable state, taken under its lock: what the
/// invariants of [`crate::scenarios::standby`] read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamesystemView {
    /// The HA state.
    pub ha: HaState,
    /// Whether future and inconsistent reports are postponed.
    pub postpone: bool,
    /// The generation-stamp counter.
    pub generation_stamp: GenerationStamp,
    /// The incremental safe-mode counters.
    pub safe_mode: SafeModeCounts,
    /// The same counters recounted from the namespace: (total, safe).
    pub recount: (usize, usize),
    /// The files.
    pub files: BTreeMap<FileId, INodeFile>,
    /// The blocks.
    pub blocks: BTreeMap<BlockId, StoredBlock>,
    /// Replicas flagged corrupt, with the generation stamp they were reported with.
    pub corrupt: BTreeMap<BlockId, BTreeMap<StorageId, GenerationStamp>>,
    /// The pending queue: blocks in id order, each block's entries in arrival order.
    pub queued: Vec<QueuedReport>,
    /// The queue's counters.
    pub queue: QueueMetrics,
    /// Corrupt markings and deletions.
    pub metrics: BlockMetrics,
    /// How this NameNode judges an equal-GS RBW of a COMPLETE block.
    pub rbw_rule: RbwOnCompleteRule,
}

#[derive(Debug)]
struct State {
    config: NamenodeConfig,
    ha: HaState,
    postpone: bool,
    gs_counter: GenerationStamp,
    files: BTreeMap<FileId, INodeFile>,
    blocks: BTreeMap<BlockId, StoredBlock>,
    corrupt: BTreeMap<BlockId, BTreeMap<StorageId, (GenerationStamp, CorruptReason)>>,
    /// Replicas to delete (`invalidateBlocks`), handed to the datanode on its heartbeat.
    pending_deletion: BTreeMap<StorageId, BTreeMap<BlockId, Block>>,
    reported_storages: BTreeSet<StorageId>,
    stale: BTreeSet<DatanodeId>,
    queue: PendingDataNodeMessages,
    safe_mode: SafeModeCounts,
    metrics: BlockMetrics,
    /// [`NamesystemBehavior::LegacyWholeMessageQueue`]: postponed messages with their target GS.
    whole_messages: Vec<(GenerationStamp, Message)>,
    /// [`NamesystemBehavior::LegacyWholeMessageQueue`]: highest GS seen in block lists this batch.
    batch_max_gs: GenerationStamp,
}

/// A whole datanode message, as the legacy queue keeps it.
#[derive(Debug, Clone)]
enum Message {
    Incremental(StorageId, Block, ReportedState),
    FullReport(StorageId, Vec<(Block, ReplicaState)>),
}

/// Where a report comes from: the paths differ in a few steps of spec 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Incremental,
    FirstFullReport,
    LaterFullReport,
    /// Re-evaluated from the queue (a drain, or the failover's drain of everything).
    Queue,
}

/// A NameNode's namesystem behind its write lock.
#[derive(Debug)]
pub struct Namesystem {
    state: Mutex<State>,
}

impl Namesystem {
    /// A standby with an empty namespace, in safe mode, postponing, GS counter at
    /// `initial_gs`.
    pub fn standby(config: NamenodeConfig, initial_gs: GenerationStamp) -> Self {
        Self::new(config, initial_gs, HaState::Standby)
    }

    /// An active NameNode with an empty namespace, out of safe mode, GS counter at
    /// `initial_gs`: it applies the edits it logs with [`Namesystem::apply_edits`] and
    /// judges every report at once.
    pub fn active(config: NamenodeConfig, initial_gs: GenerationStamp) -> Self {
        Self::new(config, initial_gs, HaState::Active)
    }

    fn new(config: NamenodeConfig, initial_gs: GenerationStamp, ha: HaState) -> Self {
        let standby = ha == HaState::Standby;
        let purge = match config.behavior {
            NamesystemBehavior::LegacyNoStaleEntryPurge => StaleEntryPurge::None,
            _ => StaleEntryPurge::OnProcess,
        };
        let queue = PendingDataNodeMessages::new(purge, config.pending_queue_limit);
        Self {
            state: Mutex::new(State {
                config,
                ha,
                postpone: standby,
                gs_counter: initial_gs,
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
            }),
        }
    }

    /// Replays a batch of edits under the lock (one `doTailEdits`). Stops at the first
    /// edit that does not fit and returns how many were applied with the error.
    pub fn apply_edits(&self, ops: &[EditOp]) -> Result<usize, (usize, ReplayError)> {
        let mut state = self.state.lock();
        state.batch_max_gs = GenerationStamp::MIN;
        let mut result = Ok(ops.len());
        for (applied, op) in ops.iter().enumerate() {
            if let Err(error) = state.apply(op) {
                result = Err((applied, error));
                break;
            }
        }
        state.end_of_batch();
        result
    }

    /// An incremental report entry: RECEIVING (RBW), RECEIVED (FINALIZED) or DELETED.
    pub fn incremental_report(&self, storage: StorageId, block: Block, state: ReportedState) {
        let mut ns = self.state.lock();
        if ns.postpones_whole_message(block.gs) {
            ns.whole_messages
                .push((block.gs, Message::Incremental(storage, block, state)));
            return;
        }
        ns.process_reported(storage, block, state, Origin::Incremental);
    }

    /// A full block report of one storage: the first since registration takes the first
    /// path; a later one also removes the replicas the storage no longer lists.
    ///
    /// The report is processed entry by entry from the caller's slice: only the entries
    /// that are postponed are copied, into the queue (the legacy whole-message queue keeps
    /// a postponed report whole, as it did).
    pub fn full_report(&self, storage: StorageId, entries: &[(Block, ReplicaState)]) {
        let mut ns = self.state.lock();
        let target = entries
            .iter()
            .map(|(b, _)| b.gs)
            .max()
            .unwrap_or(GenerationStamp::MIN);
        if ns.postpones_whole_message(target) {
            ns.whole_messages
                .push((target, Message::FullReport(storage, entries.to_vec())));
            return;
        }
        ns.process_full_report(storage, entries);
    }

    /// Becomes active (`startActiveServices`, one critical section): replays `remaining`
    /// edits with postpone still on, turns postpone off, marks every datanode stale,
    /// forgets the standby's deletion set, judges every queued report once, and leaves the
    /// queue empty. The caller has stopped the tailer.
    pub fn transition_to_active(
        &self,
        remaining: &[EditOp],
        datanodes: &[DatanodeId],
    ) -> Result<(), ReplayError> {
        let mut ns = self.state.lock();
        if ns.config.behavior == NamesystemBehavior::LegacyHaStateCheck {
            // `HAState.setStateInternal` switches first, then runs the catch-up.
            ns.ha = HaState::Active;
        }
        ns.batch_max_gs = GenerationStamp::MIN;
        for op in remaining {
            ns.apply(op)?;
        }
        ns.end_of_batch();
        ns.postpone = false;
        ns.ha = HaState::Active;
        ns.stale = datanodes.iter().copied().collect();
        ns.pending_deletion.clear();
        for report in ns.queue.take_all() {
            ns.process_reported(report.storage, report.block, report.state, Origin::Queue);
        }
        for (_, message) in std::mem::take(&mut ns.whole_messages) {
            ns.process_message(message);
        }
        debug_assert_eq!(
            ns.queue.count(),
            0,
            "nothing can be re-queued once postpone is off"
        );
        Ok(())
    }

    /// Becomes standby (`stopActiveServices`, then `startStandbyServices`): postpone on, the
    /// deletion and stale sets cleared; stored locations and the corrupt map are kept. The
    /// caller starts a tailer at the end of the edits this node logged.
    pub fn transition_to_standby(&self) {
        let mut ns = self.state.lock();
        ns.ha = HaState::Standby;
        ns.postpone = true;
        ns.pending_deletion.clear();
        ns.stale.clear();
    }

    /// A datanode leaves (declared dead, or re-registered under a new identity): its
    /// locations, corrupt flags and pending deletions go, and so do its queued reports
    /// (HDFS-6289), so that no later drain judges a report of a datanode that no longer
    /// exists. Returns how many queued reports went.
    pub fn remove_datanode(&self, datanode: DatanodeId) -> usize {
        let mut ns = self.state.lock();
        let held: Vec<(BlockId, StorageId)> = ns
            .blocks
            .iter()
            .flat_map(|(id, b)| b.locations.iter().map(move |s| (*id, *s)))
            .filter(|(_, s)| s.datanode == datanode)
            .collect();
        for (id, storage) in held {
            ns.remove_stored_location(id, storage);
        }
        for flagged in ns.corrupt.values_mut() {
            flagged.retain(|s, _| s.datanode != datanode);
        }
        ns.corrupt.retain(|_, flagged| !flagged.is_empty());
        ns.pending_deletion.retain(|s, _| s.datanode != datanode);
        ns.reported_storages.retain(|s| s.datanode != datanode);
        ns.stale.remove(&datanode);
        ns.queue.remove_all_for_datanode(datanode)
    }

    /// Leaves safe mode if `block_safe ≥ floor(block_total × threshold)` (spec 11); on the
    /// active this runs the replication checks that safe mode held back
    /// (`processMisReplicatedBlocks`). The datanode threshold (0 by default) and the
    /// extension are not modelled: the caller's safe-mode monitor decides when to ask.
    /// Returns whether safe mode is now off.
    pub fn leave_safe_mode_if_threshold_reached(&self) -> bool {
        let mut ns = self.state.lock();
        if !ns.safe_mode.on {
            return true;
        }
        if !ns
            .safe_mode
            .threshold_reached(ns.config.safemode_threshold_per_mille)
        {
            return false;
        }
        ns.safe_mode.on = false;
        if ns.ha == HaState::Active {
            ns.process_over_replicated_blocks();
        }
        true
    }

    /// Deletion commands for a datanode's storages (handed out on its heartbeat). The
    /// standby's commands are ignored by datanodes, so it hands out none.
    pub fn take_deletion_commands(&self, datanode: DatanodeId) -> Vec<(StorageId, Block)> {
        let mut ns = self.state.lock();
        if ns.ha != HaState::Active {
            return Vec::new();
        }
        let storages: Vec<StorageId> = ns
            .pending_deletion
            .keys()
            .filter(|s| s.datanode == datanode)
            .copied()
            .collect();
        storages
            .into_iter()
            .flat_map(|s| {
                ns.pending_deletion
                    .remove(&s)
                    .into_iter()
                    .flat_map(move |blocks| blocks.into_values().map(move |b| (s, b)))
            })
            .collect()
    }

    /// Turns safe mode on or off (tests and scenarios set up a restarted standby).
    pub fn set_safe_mode(&self, on: bool) {
        self.state.lock().safe_mode.on = on;
    }

    /// The safe-mode counters.
    pub fn safe_mode(&self) -> SafeModeCounts {
        self.state.lock().safe_mode
    }

    /// Recounts the safe-mode counters from the namespace: what the incremental counts
    /// must equal (invariant 7).
    pub fn recount_safe_mode(&self) -> (usize, usize) {
        self.state.lock().count_safe_blocks()
    }

    /// The HA state.
    pub fn ha_state(&self) -> HaState {
        self.state.lock().ha
    }

    /// A copy of a stored block.
    pub fn block(&self, id: BlockId) -> Option<StoredBlock> {
        self.state.lock().blocks.get(&id).cloned()
    }

    /// Replicas flagged corrupt, by block.
    pub fn corrupt_replicas(&self) -> BTreeMap<BlockId, BTreeSet<StorageId>> {
        self.state
            .lock()
            .corrupt
            .iter()
            .map(|(b, m)| (*b, m.keys().copied().collect()))
            .collect()
    }

    /// The pending queue's counters.
    pub fn queue_metrics(&self) -> QueueMetrics {
        self.state.lock().queue.metrics()
    }

    /// The generation-stamp counter.
    pub fn generation_stamp(&self) -> GenerationStamp {
        self.state.lock().gs_counter
    }

    /// Corrupt markings and deletions so far.
    pub fn block_metrics(&self) -> BlockMetrics {
        self.state.lock().metrics
    }

    /// A consistent copy of the observable state (one lock acquisition). Costs a copy of
    /// the namespace: for checkers and tests, not for a hot path.
    pub fn view(&self) -> NamesystemView {
        let ns = self.state.lock();
        NamesystemView {
            ha: ns.ha,
            postpone: ns.postpone,
            generation_stamp: ns.gs_counter,
            safe_mode: ns.safe_mode,
            recount: ns.count_safe_blocks(),
            files: ns.files.clone(),
            blocks: ns.blocks.clone(),
            corrupt: ns
                .corrupt
                .iter()
                .map(|(b, m)| (*b, m.iter().map(|(s, (gs, _))| (*s, *gs)).collect()))
                .collect(),
            queued: ns.queue.iter().copied().collect(),
            queue: ns.queue.metrics(),
            metrics: ns.metrics,
            rbw_rule: ns.config.rbw_rule,
        }
    }
}

impl State {
    /// Whether a future or inconsistent *replica* is queued rather than acted upon. The
    /// whole-message legacy queue postpones messages, never replicas.
    fn postponing(&self) -> bool {
        match self.config.behavior {
            NamesystemBehavior::LegacyHaStateCheck => self.ha == HaState::Standby,
            NamesystemBehavior::LegacyWholeMessageQueue => false,
            _ => self.postpone,
        }
    }

    /// [`NamesystemBehavior::LegacyWholeMessageQueue`] postpones a whole message whose highest
    /// generation stamp is in the future (spec 8.2).
    fn postpones_whole_message(&self, target_gs: GenerationStamp) -> bool {
        self.config.behavior == NamesystemBehavior::LegacyWholeMessageQueue
            && self.postpone
            && target_gs > self.gs_counter
    }

    fn process_message(&mut self, message: Message) {
        match message {
            Message::Incremental(storage, block, state) => {
                self.process_reported(storage, block, state, Origin::Incremental);
            }
            Message::FullReport(storage, entries) => self.process_full_report(storage, &entries),
        }
    }

    /// After a batch of edits. The whole-message legacy queue recounts the safe-mode total,
    /// then processes, in target order, the messages whose target GS the batch's block
    /// lists reached (spec 8.2).
    fn end_of_batch(&mut self) {
        if self.config.behavior != NamesystemBehavior::LegacyWholeMessageQueue {
            return;
        }
        if self.safe_mode.on {
            let (total, safe) = self.count_safe_blocks();
            self.safe_mode.block_total = total;
            self.safe_mode.block_safe = safe;
        }
        self.whole_messages.sort_by_key(|(target, _)| *target);
        let ready = self
            .whole_messages
            .partition_point(|(target, _)| *target <= self.batch_max_gs);
        let ready: Vec<(GenerationStamp, Message)> = self.whole_messages.drain(..ready).collect();
        for (_, message) in ready {
            self.process_message(message);
        }
    }

    fn count_safe_blocks(&self) -> (usize, usize) {
        let complete = self
            .blocks
            .values()
            .filter(|b| b.state == BlockUcState::Complete);
        let total = complete.clone().count();
        let safe = complete
            .filter(|b| b.locations.len() >= self.config.safe_replication)
            .count();
        (total, safe)
    }

    fn note_block_list(&mut self, blocks: &[Block]) {
        if let Some(max) = blocks.iter().map(|b| b.gs).max() {
            self.batch_max_gs = self.batch_max_gs.max(max);
        }
    }

    // --- edit replay (spec 3, 9) -----------------------------------------------------

    fn apply(&mut self, op: &EditOp) -> Result<(), ReplayError> {
        match op {
            EditOp::SetGenstamp(gs) => {
                self.gs_counter = self.gs_counter.max(*gs);
                Ok(())
            }
            EditOp::AddFile { file, replication } => {
                if self.files.contains_key(file) {
                    return Err(ReplayError::FileExists(*file));
                }
                self.files.insert(
                    *file,
                    INodeFile {
                        blocks: Vec::new(),
                        under_construction: true,
                        replication: *replication,
                    },
                );
                Ok(())
            }
            EditOp::AddBlock {
                file,
                penultimate,
                last,
            } => {
                self.note_block_list(&[*last]);
                self.add_new_block(*file, *penultimate, *last)
            }
            EditOp::UpdateBlocks { file, blocks } => {
                self.note_block_list(blocks);
                self.update_blocks(*file, blocks, false)
            }
            EditOp::Close { file, blocks } => {
                self.note_block_list(blocks);
                self.update_blocks(*file, blocks, true)
            }
            EditOp::Append { file } => self.reopen_last_block(*file),
            EditOp::SetReplication { file, replication } => {
                let inode = self
                    .files
                    .get_mut(file)
                    .ok_or(ReplayError::UnknownFile(*file))?;
                inode.replication = *replication;
                // The active re-checks the file's blocks: a lowered factor makes excess
                // replicas (spec 12.1 step 9). The standby only records the factor.
                if self.ha == HaState::Active && !self.safe_mode.on {
                    for id in inode.blocks.clone() {
                        self.check_replication(id);
                    }
                }
                Ok(())
            }
            EditOp::Delete { file } => self.delete_file(*file),
        }
    }

    fn add_new_block(
        &mut self,
        file: FileId,
        penultimate: Option<Block>,
        last: Block,
    ) -> Result<(), ReplayError> {
        let inode = self
            .files
            .get(&file)
            .ok_or(ReplayError::UnknownFile(file))?;
        let old_last = inode.blocks.last().copied();
        if self.blocks.contains_key(&last.id) {
            return Err(ReplayError::BlockExists(last.id));
        }
        match (old_last, penultimate) {
            (None, None) => {}
            (Some(stored_id), Some(edit)) => {
                let stored = &self.blocks[&stored_id];
                if stored_id != edit.id {
                    return Err(ReplayError::BlockIdMismatch {
                        file,
                        position: inode.blocks.len() - 1,
                        stored: stored_id,
                        edit: edit.id,
                    });
                }
                if stored.block.gs != edit.gs {
                    return Err(ReplayError::GenerationStamp {
                        block: edit.id,
                        stored: stored.block.gs,
                        edit: edit.gs,
                    });
                }
                if let Some(stored) = self.blocks.get_mut(&stored_id) {
                    stored.block.length = edit.length;
                }
                if self.blocks[&stored_id].state != BlockUcState::Complete {
                    self.force_complete(stored_id, edit);
                    self.drain(stored_id, DrainTrigger::Completed);
                }
            }
            (stored, edit) => {
                return Err(ReplayError::BlockIdMismatch {
                    file,
                    position: inode.blocks.len().saturating_sub(1),
                    stored: stored.unwrap_or(BlockId(-1)),
                    edit: edit.map_or(BlockId(-1), |b| b.id),
                });
            }
        }
        self.append_block(file, last);
        Ok(())
    }

    fn update_blocks(
        &mut self,
        file: FileId,
        edit: &[Block],
        close: bool,
    ) -> Result<(), ReplayError> {
        let inode = self
            .files
            .get(&file)
            .ok_or(ReplayError::UnknownFile(file))?;
        let stored_ids = inode.blocks.clone();
        // Check the whole edit before changing anything.
        for (position, (stored_id, block)) in stored_ids.iter().zip(edit).enumerate() {
            if *stored_id != block.id {
                return Err(ReplayError::BlockIdMismatch {
                    file,
                    position,
                    stored: *stored_id,
                    edit: block.id,
                });
            }
            let stored_gs = self.blocks[stored_id].block.gs;
            let is_last = position + 1 == stored_ids.len() && stored_ids.len() == edit.len();
            if block.gs < stored_gs || (block.gs != stored_gs && !is_last) {
                return Err(ReplayError::GenerationStamp {
                    block: block.id,
                    stored: stored_gs,
                    edit: block.gs,
                });
            }
        }
        for block in edit.iter().skip(stored_ids.len()) {
            if self.blocks.contains_key(&block.id) {
                return Err(ReplayError::BlockExists(block.id));
            }
        }
        let last_position = edit.len().saturating_sub(1);
        for (position, (stored_id, block)) in stored_ids.iter().zip(edit).enumerate() {
            let Some(stored) = self.blocks.get_mut(stored_id) else {
                continue;
            };
            let gs_changed = stored.block.gs != block.gs;
            stored.block.length = block.length;
            stored.block.gs = block.gs;
            let complete = stored.state == BlockUcState::Complete;
            let force = !complete && (position != last_position || close);
            if force {
                self.force_complete(*stored_id, *block);
            }
            if force {
                self.drain(*stored_id, DrainTrigger::Completed);
            } else if gs_changed {
                self.drain(*stored_id, DrainTrigger::GenerationStamp);
            }
        }
        if edit.len() < stored_ids.len() {
            // The abandoned last block (no drain).
            for removed in &stored_ids[edit.len()..] {
                self.remove_block(*removed);
            }
            if let Some(inode) = self.files.get_mut(&file) {
                inode.blocks.truncate(edit.len());
            }
        }
        // Extra blocks are appended under construction, whatever the op.
        for block in edit.iter().skip(stored_ids.len()) {
            self.append_block(file, *block);
        }
        if close {
            if let Some(inode) = self.files.get_mut(&file) {
                inode.under_construction = false;
            }
        }
        Ok(())
    }

    fn append_block(&mut self, file: FileId, block: Block) {
        self.blocks.insert(
            block.id,
            StoredBlock {
                block,
                state: BlockUcState::UnderConstruction,
                file,
                locations: BTreeSet::new(),
                expected: BTreeMap::new(),
            },
        );
        if let Some(inode) = self.files.get_mut(&file) {
            inode.blocks.push(block.id);
        }
        self.drain(block.id, DrainTrigger::NewBlock);
    }

    /// `forceCompleteBlock`: commit with the edit's GS and length, then complete without a
    /// replica count, with the safe-mode accounting of spec 11.
    fn force_complete(&mut self, id: BlockId, edit: Block) {
        let (safe_replication, min_replication) =
            (self.config.safe_replication, self.config.min_replication);
        let credit_present = self.config.behavior != NamesystemBehavior::LegacyEarlyDrain;
        // The whole-message legacy queue recounts after each batch instead.
        let adjust = self.config.behavior != NamesystemBehavior::LegacyWholeMessageQueue;
        let Some(stored) = self.blocks.get_mut(&id) else {
            return;
        };
        stored.block.gs = edit.gs;
        stored.block.length = edit.length;
        // removeStaleReplicas: expected replicas of another GS lose their location.
        let stale: Vec<StorageId> = stored
            .expected
            .iter()
            .filter(|(_, (gs, _))| *gs != edit.gs)
            .map(|(s, _)| *s)
            .collect();
        for storage in stale {
            stored.locations.remove(&storage);
        }
        stored.expected.clear();
        stored.state = BlockUcState::Complete;
        let present = stored.locations.len();
        if self.safe_mode.on && adjust {
            self.safe_mode.block_total += 1;
            if credit_present && present.min(min_replication) == safe_replication {
                self.safe_mode.block_safe += 1;
            }
        }
    }

    fn reopen_last_block(&mut self, file: FileId) -> Result<(), ReplayError> {
        let inode = self
            .files
            .get_mut(&file)
            .ok_or(ReplayError::UnknownFile(file))?;
        let last = inode
            .blocks
            .last()
            .copied()
            .filter(|_| !inode.under_construction)
            .ok_or(ReplayError::CannotReopen(file))?;
        inode.under_construction = true;
        let min_replication = self.config.min_replication;
        if let Some(stored) = self.blocks.get_mut(&last) {
            if stored.state == BlockUcState::Complete {
                stored.state = BlockUcState::UnderConstruction;
                if self.safe_mode.on
                    && self.config.behavior != NamesystemBehavior::LegacyWholeMessageQueue
                {
                    self.safe_mode.block_total = self.safe_mode.block_total.saturating_sub(1);
                    if stored.locations.len() >= min_replication {
                        self.safe_mode.block_safe = self.safe_mode.block_safe.saturating_sub(1);
                    }
                }
            }
        }
        Ok(())
    }

    fn delete_file(&mut self, file: FileId) -> Result<(), ReplayError> {
        let inode = self
            .files
            .remove(&file)
            .ok_or(ReplayError::UnknownFile(file))?;
        for id in inode.blocks {
            self.remove_block(id);
        }
        Ok(())
    }

    /// Removes a block from the namespace with the safe-mode adjustment of spec 11, and
    /// its queue (HDFS-17905).
    fn remove_block(&mut self, id: BlockId) {
        let Some(stored) = self.blocks.remove(&id) else {
            return;
        };
        if self.safe_mode.on
            && stored.state == BlockUcState::Complete
            && self.config.behavior != NamesystemBehavior::LegacyWholeMessageQueue
        {
            self.safe_mode.block_total = self.safe_mode.block_total.saturating_sub(1);
            if stored.locations.len() >= self.config.min_replication {
                self.safe_mode.block_safe = self.safe_mode.block_safe.saturating_sub(1);
            }
        }
        self.corrupt.remove(&id);
        self.queue.remove_block(id);
    }

    /// `processQueuedMessagesForBlock`: re-judges the block's queue in order; what is still
    /// future or inconsistent goes back, in order.
    fn drain(&mut self, id: BlockId, trigger: DrainTrigger) {
        if self.config.behavior == NamesystemBehavior::LegacyEarlyDrain
            && trigger != DrainTrigger::NewBlock
        {
            return;
        }
        let Some(queued) = self.queue.take_block_queue(id) else {
            return;
        };
        for report in queued {
            self.process_reported(report.storage, report.block, report.state, Origin::Queue);
        }
    }

    // --- reports (spec 4, 7) ---------------------------------------------------------

    fn process_full_report(&mut self, storage: StorageId, entries: &[(Block, ReplicaState)]) {
        let first = self.reported_storages.insert(storage);
        let origin = if first {
            Origin::FirstFullReport
        } else {
            Origin::LaterFullReport
        };
        for &(block, state) in entries {
            self.process_reported(storage, block, ReportedState::Replica(state), origin);
        }
        if !first {
            // Replicas the NameNode had on this storage that the report omits.
            let listed: BTreeSet<BlockId> = entries.iter().map(|(b, _)| b.id).collect();
            let omitted: Vec<BlockId> = self
                .blocks
                .iter()
                .filter(|(id, b)| b.locations.contains(&storage) && !listed.contains(id))
                .map(|(id, _)| *id)
                .collect();
            for id in omitted {
                self.remove_stored_location(id, storage);
            }
        }
        // A full report to the active clears the datanode's stale flag.
        if self.ha == HaState::Active {
            self.stale.remove(&storage.datanode);
            self.process_over_replicated_blocks();
        }
    }

    fn process_reported(
        &mut self,
        storage: StorageId,
        reported: Block,
        state: ReportedState,
        origin: Origin,
    ) {
        if origin != Origin::Queue {
            // HDFS-17477: a newer report of the pair supersedes its queued ones.
            self.queue.remove_queued_block(storage, reported.id);
        }
        let postpone = self.postponing();
        // 1. Future GS (checked before the lookup).
        if postpone && reported.gs > self.gs_counter {
            self.enqueue(storage, reported, state);
            return;
        }
        let ReportedState::Replica(replica_state) = state else {
            // DELETED: the location goes, without the other checks.
            self.remove_stored_location(reported.id, storage);
            return;
        };
        // 2. Lookup.
        let Some(stored) = self.blocks.get(&reported.id) else {
            if origin != Origin::FirstFullReport {
                self.pending_deletion
                    .entry(storage)
                    .or_default()
                    .insert(reported.id, reported);
            }
            return;
        };
        // 3. Already scheduled for deletion.
        if origin != Origin::FirstFullReport
            && self
                .pending_deletion
                .get(&storage)
                .is_some_and(|blocks| blocks.contains_key(&reported.id))
        {
            return;
        }
        let view = StoredBlockView {
            gs: stored.block.gs,
            length: stored.block.length,
            state: stored.state,
        };
        // 4. Corrupt?
        match check_replica_corrupt(&reported, replica_state, &view, self.config.rbw_rule) {
            ReplicaVerdict::Corrupt(reason) => {
                if postpone {
                    self.enqueue(storage, reported, state);
                } else {
                    self.mark_corrupt(storage, reported, reason);
                }
                return;
            }
            ReplicaVerdict::Ignored => return,
            ReplicaVerdict::Ok => {}
        }
        let finalized = replica_state == ReplicaState::Finalized;
        let stored_here = stored.locations.contains(&storage);
        // 5. Accepted as a replica under construction.
        if is_block_under_construction(view.state, replica_state) {
            if let Some(stored) = self.blocks.get_mut(&reported.id) {
                stored
                    .expected
                    .insert(storage, (reported.gs, replica_state));
            }
            if finalized && !stored_here {
                self.add_stored_block(reported.id, storage);
            }
            return;
        }
        // 6. Plain add.
        if finalized && !stored_here {
            self.add_stored_block(reported.id, storage);
        }
    }

    fn enqueue(&mut self, storage: StorageId, block: Block, state: ReportedState) {
        // At the bound the report is refused and counted; the datanode's next report of
        // the replica brings it back (see `PendingDataNodeMessages`).
        let _ = self.queue.enqueue(QueuedReport {
            storage,
            block,
            state,
        });
    }

    /// `addStoredBlock`: a new location; safe-mode credit for a COMPLETE block crossing the
    /// safe replication; on the active, the replication checks.
    fn add_stored_block(&mut self, id: BlockId, storage: StorageId) {
        let safe_replication = self.config.safe_replication;
        let Some(stored) = self.blocks.get_mut(&id) else {
            return;
        };
        if !stored.locations.insert(storage) {
            return;
        }
        let complete = stored.state == BlockUcState::Complete;
        let count = stored.locations.len();
        if complete && self.safe_mode.on && count == safe_replication {
            self.safe_mode.block_safe += 1;
        }
        if complete && self.ha == HaState::Active && !self.safe_mode.on {
            self.check_replication(id);
        }
    }

    /// A location leaves (DELETED report, omitted from a full report, invalidated).
    fn remove_stored_location(&mut self, id: BlockId, storage: StorageId) {
        let safe_replication = self.config.safe_replication;
        let Some(stored) = self.blocks.get_mut(&id) else {
            return;
        };
        if !stored.locations.remove(&storage) {
            return;
        }
        if let Some(corrupt) = self.corrupt.get_mut(&id) {
            corrupt.remove(&storage);
            if corrupt.is_empty() {
                self.corrupt.remove(&id);
            }
        }
        if stored.state == BlockUcState::Complete
            && self.safe_mode.on
            && stored.locations.len() + 1 == safe_replication
        {
            self.safe_mode.block_safe = self.safe_mode.block_safe.saturating_sub(1);
        }
    }

    // --- the active's actions (spec 6) ------------------------------------------------

    fn mark_corrupt(&mut self, storage: StorageId, reported: Block, reason: CorruptReason) {
        let Some(stored) = self.blocks.get_mut(&reported.id) else {
            return;
        };
        stored.locations.insert(storage);
        self.metrics.corrupt_marked += 1;
        if self.postpone {
            self.metrics.corrupt_marked_while_postponing += 1;
        }
        self.corrupt
            .entry(reported.id)
            .or_default()
            .insert(storage, (reported.gs, reason));
        self.check_replication(reported.id);
    }

    /// Invalidates corrupt replicas once enough live ones exist, and deletes excess
    /// replicas; both wait while a holder is stale after failover (HDFS-1972).
    fn check_replication(&mut self, id: BlockId) {
        // Safe mode holds back every deletion; leaving it rescans (spec 10 step 8).
        if self.safe_mode.on {
            return;
        }
        let Some(stored) = self.blocks.get(&id) else {
            return;
        };
        let Some(expected) = self.files.get(&stored.file).map(|f| f.replication) else {
            return;
        };
        if stored
            .locations
            .iter()
            .any(|s| self.stale.contains(&s.datanode))
        {
            return;
        }
        let corrupt: BTreeSet<StorageId> = self
            .corrupt
            .get(&id)
            .map(|m| m.keys().copied().collect())
            .unwrap_or_default();
        let live: Vec<StorageId> = stored
            .locations
            .iter()
            .filter(|s| !corrupt.contains(s))
            .copied()
            .collect();
        let mut doomed: Vec<(StorageId, Block)> = Vec::new();
        if live.len() >= expected {
            for storage in &corrupt {
                let gs = self.corrupt[&id][storage].0;
                doomed.push((*storage, Block { gs, ..stored.block }));
            }
        }
        if live.len() > expected && stored.state == BlockUcState::Complete {
            // Excess replicas: the last ones in storage order go.
            for storage in live.iter().skip(expected) {
                doomed.push((*storage, stored.block));
            }
        }
        for (storage, block) in doomed {
            self.metrics.deletions_scheduled += 1;
            self.pending_deletion
                .entry(storage)
                .or_default()
                .insert(id, block);
            self.remove_stored_location(id, storage);
        }
    }

    fn process_over_replicated_blocks(&mut self) {
        let ids: Vec<BlockId> = self.blocks.keys().copied().collect();
        for id in ids {
            self.check_replication(id);
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DrainTrigger {
    NewBlock,
    GenerationStamp,
    Completed,
}
