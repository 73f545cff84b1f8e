//! What a namesystem holds and counts, as its callers and the checkers see it: stored
//! blocks and files, the HA state, the safe-mode and block counters, and a whole view.
//!
//! **The race (HDFS-2742).** A report judged against the wrong block state shows up here:
//! a replica in the corrupt map that its datanode reported healthy, or safe-mode counters
//! that differ from a recount. **The fix** lives in the queue and its drains; these types
//! let the invariants of [`crate::scenarios::standby`] see its effect under one lock.

use std::collections::{BTreeMap, BTreeSet};

use super::edits::FileId;
use crate::namenode::evaluation::{BlockUcState, ReplicaRules};
use crate::namenode::pending_messages::{QueueMetrics, QueuedReport};
use crate::namenode::{Block, BlockId, GenerationStamp, ReplicaState, StorageId};

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

/// Safe-mode counters (`BlockManagerSafeMode`'s `blockTotal` and `blockSafe`).
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
    /// have postponed. Stays 0 with the fixes (the scenarios' "standby is passive" and
    /// "no false corruption" invariants check it).
    pub corrupt_marked_while_postponing: u64,
    /// Replicas scheduled for deletion as corrupt or excess.
    pub deletions_scheduled: u64,
    /// Replicas of unknown blocks not recorded for deletion because their storage had
    /// `unknown_replica_deletions_per_storage_limit` waiting already.
    pub unknown_replica_deletions_dropped: u64,
}

/// The safe-mode counters beside their recount from the namespace, taken under the
/// namesystem's lock: what the safe-mode recount invariant
/// ([`crate::scenarios::standby::safe_mode_matches_recount`]) reads, without a copy of
/// the namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SafeModeCheck {
    /// The incremental safe-mode counters.
    pub safe_mode: SafeModeCounts,
    /// The same counters recounted from the namespace: (total, safe).
    pub recount: (usize, usize),
    /// Whether a replica is flagged corrupt (the counters may then drift from the
    /// recount, as HDFS's own do).
    pub any_corrupt: bool,
}

/// A consistent copy of a namesystem's observable state, taken under its lock: what the
/// invariants of [`crate::scenarios::standby`] read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamesystemView {
    /// The HA state.
    pub ha: HaState,
    /// Whether future and inconsistent reports are postponed.
    pub postpone: bool,
    /// The generation-stamp counter of the future test.
    pub generation_stamp: GenerationStamp,
    /// The highest GS replayed from `OP_SET_GENSTAMP` and not yet applied (HDFS-14941).
    pub impending_generation_stamp: GenerationStamp,
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
    /// The decision tables this NameNode applies.
    pub rules: ReplicaRules,
}

impl NamesystemView {
    /// What the safe-mode recount invariant reads of this copy.
    pub fn safe_mode_check(&self) -> SafeModeCheck {
        SafeModeCheck {
            safe_mode: self.safe_mode,
            recount: self.recount,
            any_corrupt: !self.corrupt.is_empty(),
        }
    }
}
