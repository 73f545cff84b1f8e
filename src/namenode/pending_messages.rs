//! `PendingDataNodeMessages`: the standby's per-block FIFO of datanode reports it cannot
//! apply yet (queued by `BlockManager.queueReportedBlock`, drained by
//! `processQueuedMessagesForBlock`).
//!
//! **The race (HDFS-2742).** The standby learns of block state changes only when it
//! replays edits, so a report can arrive before the state it was produced under. Queued
//! whole and drained after all edits, an RBW report was judged against a completed block
//! and the replica marked corrupt; that chain lost every replica.
//!
//! **The fix** queues per replica, per block, in arrival order, and drains a block's queue
//! right after the edit that changes that block. Later fixes drop an entry that a newer
//! report of the same (block, storage) supersedes (HDFS-17453, then HDFS-17477), and the
//! entries of a removed datanode (HDFS-6289). [`StaleEntryPurge`] selects the purge.
//!
//! The queue is not synchronized itself: the standby touches it only under the
//! namesystem write lock (`FSNamesystem.writeLock`).
//!
//! ```
//! # hadoop_ref::sync::run_example(|| {
//! use hadoop_ref::namenode::DatanodeId;
//! use hadoop_ref::namenode::pending_messages::{
//!     PendingDataNodeMessages, QueuedReport, ReportedState, StaleEntryPurge,
//! };
//! use hadoop_ref::namenode::{BlockId, ReplicaState, Block, StorageId};
//!
//! let mut queue = PendingDataNodeMessages::new(StaleEntryPurge::OnProcess, 1_000_000);
//! let storage = StorageId { datanode: DatanodeId(1), index: 0 };
//! let block = Block { id: BlockId(7), gs: 1002, length: 0 };
//! queue.enqueue(QueuedReport { storage, block, state: ReportedState::Replica(ReplicaState::Rbw) })?;
//! assert_eq!(queue.count(), 1);
//! let taken = queue.take_block_queue(BlockId(7)).expect("queued");
//! assert_eq!(taken.len(), 1);
//! assert_eq!(queue.count(), 0);
//! # Ok::<(), hadoop_ref::namenode::pending_messages::QueueFull>(())
//! # });
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use super::{Block, BlockId, DatanodeId, ReplicaState, StorageId};
use crate::events::EventText;

/// What a queued report says about the replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReportedState {
    /// The datanode holds a replica in this state.
    Replica(ReplicaState),
    /// The datanode deleted its replica (an incremental DELETED_BLOCK, HDFS-8245).
    Deleted,
}

impl fmt::Display for ReportedState {
    /// The replica state (`RBW`, `FINALIZED`, …) or `DELETED`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

impl EventText for ReportedState {
    fn text(&self) -> &'static str {
        match self {
            ReportedState::Replica(state) => state.text(),
            ReportedState::Deleted => "DELETED",
        }
    }
}

/// One postponed report: the storage, the block *as reported* (its own generation stamp
/// and length, never the stored ones) and the reported state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QueuedReport {
    /// The reporting storage.
    pub storage: StorageId,
    /// The block as reported.
    pub block: Block,
    /// The reported state.
    pub state: ReportedState,
}

/// Which superseded entries the queue drops (HDFS-17453, HDFS-17477).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StaleEntryPurge {
    /// Legacy: nothing is dropped; an entry a newer report superseded lingers until the
    /// failover drain judges it against the completed block and flags the datanode's
    /// current replica corrupt.
    None,
    /// HDFS-17453: enqueueing drops older entries of the same storage whose generation
    /// stamp is at most the new one's.
    OnEnqueue,
    /// HDFS-17477 (trunk): enqueue is a plain append; a report of a (block, storage) pair
    /// that is processed rather than queued as future drops that pair's queued entries
    /// ([`PendingDataNodeMessages::remove_queued_block`], called by `processReportedBlock`
    /// after the future test), so future reports pile up one per report, as
    /// `TestDNFencing.testQueueingWithAppend` counts.
    OnProcess,
}

/// The queue is at its bound; the report was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("pending datanode message queue full at {limit} entries")]
pub struct QueueFull {
    /// The bound.
    pub limit: usize,
}

/// Counters of the queue (`PendingDataNodeMessageCount` and what it does not show).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueMetrics {
    /// Entries queued now.
    pub count: usize,
    /// Most entries ever queued at once.
    pub high_water: usize,
    /// Reports refused at the bound.
    pub refused_full: u64,
    /// Entries dropped as superseded by a newer report of the same (block, storage).
    pub purged_superseded: u64,
    /// Entries dropped because their datanode or block was removed.
    pub purged_removed: u64,
}

/// The standby's postponed datanode reports, one FIFO per block id.
///
/// Bounded: at `limit` entries a new report is refused with [`QueueFull`] and counted.
/// HDFS has no bound; the standby then cannot apply that report until the datanode
/// reports the replica again (its next incremental or full block report), so a failover
/// meanwhile may start without that location. The bound only guards memory against a
/// standby that stopped tailing edits; size it well above a full report's future entries.
#[derive(Debug, Clone)]
pub struct PendingDataNodeMessages {
    queues: BTreeMap<BlockId, VecDeque<QueuedReport>>,
    purge: StaleEntryPurge,
    limit: usize,
    metrics: QueueMetrics,
}

impl PendingDataNodeMessages {
    /// An empty queue with the given purge rule, holding at most `limit` entries.
    pub fn new(purge: StaleEntryPurge, limit: usize) -> Self {
        Self {
            queues: BTreeMap::new(),
            purge,
            limit,
            metrics: QueueMetrics::default(),
        }
    }

    /// The purge rule.
    pub fn purge(&self) -> StaleEntryPurge {
        self.purge
    }

    /// Entries queued now (`PendingDataNodeMessageCount`).
    pub fn count(&self) -> usize {
        self.metrics.count
    }

    /// All counters.
    pub fn metrics(&self) -> QueueMetrics {
        self.metrics
    }

    /// Appends `report` to its block's queue. With [`StaleEntryPurge::OnEnqueue`], older
    /// entries of the same storage with a generation stamp at most the new one's go
    /// first. Refused when the queue is still at its bound after that purge.
    pub fn enqueue(&mut self, report: QueuedReport) -> Result<(), QueueFull> {
        if self.purge == StaleEntryPurge::OnEnqueue {
            let dropped = self.retain_in(report.block.id, |queued| {
                queued.storage != report.storage || queued.block.gs > report.block.gs
            });
            self.metrics.purged_superseded += dropped as u64;
        }
        if self.metrics.count >= self.limit {
            self.metrics.refused_full += 1;
            return Err(QueueFull { limit: self.limit });
        }
        self.queues
            .entry(report.block.id)
            .or_default()
            .push_back(report);
        self.metrics.count += 1;
        self.metrics.high_water = self.metrics.high_water.max(self.metrics.count);
        Ok(())
    }

    /// Removes and returns the whole queue of `block`, in arrival order
    /// (`takeBlockQueue`); `None` if nothing is queued for it.
    pub fn take_block_queue(&mut self, block: BlockId) -> Option<VecDeque<QueuedReport>> {
        let queue = self.queues.remove(&block)?;
        self.metrics.count -= queue.len();
        Some(queue)
    }

    /// Removes and returns every entry (`takeAll`, the failover drain): blocks in id order,
    /// each block's entries in arrival order.
    pub fn take_all(&mut self) -> Vec<QueuedReport> {
        let all: Vec<QueuedReport> = std::mem::take(&mut self.queues)
            .into_values()
            .flatten()
            .collect();
        self.metrics.count = 0;
        all
    }

    /// HDFS-17477: a report of `block` from `storage` is being processed (it is not
    /// future), so that pair's queued entries are superseded; drops exactly those, keeps
    /// the rest in order. A no-op unless the purge rule is [`StaleEntryPurge::OnProcess`].
    /// Returns how many went.
    pub fn remove_queued_block(&mut self, storage: StorageId, block: BlockId) -> usize {
        if self.purge != StaleEntryPurge::OnProcess {
            return 0;
        }
        let dropped = self.retain_in(block, |queued| queued.storage != storage);
        self.metrics.purged_superseded += dropped as u64;
        dropped
    }

    /// HDFS-6289: drops every entry of a datanode that is being removed. Returns how many.
    pub fn remove_all_for_datanode(&mut self, datanode: DatanodeId) -> usize {
        let blocks: Vec<BlockId> = self.queues.keys().copied().collect();
        let dropped: usize = blocks
            .into_iter()
            .map(|block| self.retain_in(block, |queued| queued.storage.datanode != datanode))
            .sum();
        self.metrics.purged_removed += dropped as u64;
        dropped
    }

    /// HDFS-17905: the block was removed from the namespace; its queue goes too. Returns
    /// how many entries.
    pub fn remove_block(&mut self, block: BlockId) -> usize {
        let dropped = self.take_block_queue(block).map_or(0, |q| q.len());
        self.metrics.purged_removed += dropped as u64;
        dropped
    }

    /// The queued entries of `block`, in arrival order, without taking them.
    pub fn queued(&self, block: BlockId) -> impl Iterator<Item = &QueuedReport> {
        self.queues.get(&block).into_iter().flatten()
    }

    /// Every queued entry, blocks in id order, each block's entries in arrival order.
    pub fn iter(&self) -> impl Iterator<Item = &QueuedReport> {
        self.queues.values().flatten()
    }

    /// Keeps the entries of `block` that satisfy `keep`, in order; returns how many went.
    fn retain_in(&mut self, block: BlockId, keep: impl Fn(&QueuedReport) -> bool) -> usize {
        let Some(queue) = self.queues.get_mut(&block) else {
            return 0;
        };
        let before = queue.len();
        queue.retain(|queued| keep(queued));
        let dropped = before - queue.len();
        if queue.is_empty() {
            self.queues.remove(&block);
        }
        self.metrics.count -= dropped;
        dropped
    }
}
