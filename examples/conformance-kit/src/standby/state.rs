//! The standby's state behind its lock: namespace, block map, corrupt replicas, the queue
//! of postponed reports and the safe-mode counts (HDFS-2742).
//!
//! **The race.** Reports and edits reach this state in either order, one lock section
//! each; the order problem is logical, not a data race.
//!
//! **The fix** lives in how the queue is drained (`reports.rs`); here are the counts that
//! must stay equal to a recount whatever the order: completion credits stored replicas.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use hadoop_ref::namenode::evaluation::{BlockUcState, CorruptReason};
use hadoop_ref::namenode::namesystem::{
    BlockMetrics, FileId, HaState, INodeFile, NamenodeConfig, NamesystemView, SafeModeCounts,
    StoredBlock,
};
use hadoop_ref::namenode::pending_messages::{QueueMetrics, QueuedReport};
use hadoop_ref::namenode::{BlockId, DatanodeId, GenerationStamp, StorageId};

use super::Queue;
use crate::mutants::Mutant;

#[derive(Debug, Clone)]
pub(super) struct State {
    pub(super) config: NamenodeConfig,
    pub(super) queue_kind: Queue,
    pub(super) ha: HaState,
    pub(super) postpone: bool,
    pub(super) catching_up: bool,
    pub(super) gs: GenerationStamp,
    pub(super) impending_gs: GenerationStamp,
    pub(super) files: BTreeMap<FileId, INodeFile>,
    pub(super) blocks: BTreeMap<BlockId, StoredBlock>,
    pub(super) corrupt: BTreeMap<BlockId, BTreeMap<StorageId, (GenerationStamp, CorruptReason)>>,
    /// Per block (trunk's design), or all under one key in arrival order (the batch queue).
    pub(super) queue: BTreeMap<BlockId, VecDeque<QueuedReport>>,
    pub(super) batch_queue: VecDeque<QueuedReport>,
    pub(super) reported_storages: BTreeSet<StorageId>,
    pub(super) safe_mode: SafeModeCounts,
    pub(super) metrics: BlockMetrics,
    /// The one change of a mutation run (`crate::mutants`); `None`: the correct code.
    pub(super) mutant: Option<Mutant>,
}

impl State {
    pub(super) fn new(
        queue: Queue,
        ha: HaState,
        config: NamenodeConfig,
        gs: GenerationStamp,
        mutant: Option<Mutant>,
    ) -> Self {
        let standby = ha == HaState::Standby;
        Self {
            config,
            queue_kind: queue,
            ha,
            postpone: standby,
            catching_up: false,
            gs,
            impending_gs: gs,
            files: BTreeMap::new(),
            blocks: BTreeMap::new(),
            corrupt: BTreeMap::new(),
            queue: BTreeMap::new(),
            batch_queue: VecDeque::new(),
            reported_storages: BTreeSet::new(),
            safe_mode: SafeModeCounts {
                on: standby,
                ..SafeModeCounts::default()
            },
            metrics: BlockMetrics::default(),
            mutant,
        }
    }

    pub(super) fn mutated_by(&self, mutant: Mutant) -> bool {
        self.mutant == Some(mutant)
    }

    /// Edits are replayed (standby, or the failover's catch-up), not applied by the active.
    pub(super) fn replaying(&self) -> bool {
        self.ha == HaState::Standby || self.catching_up
    }

    pub(super) fn live_replicas(&self, id: BlockId) -> usize {
        let flagged = self.corrupt.get(&id);
        self.blocks.get(&id).map_or(0, |b| {
            b.locations
                .iter()
                .filter(|s| flagged.is_none_or(|f| !f.contains_key(s)))
                .count()
        })
    }

    pub(super) fn count_completed_block(&mut self, present: usize) {
        if self.safe_mode.on {
            self.safe_mode.block_total += 1;
            let counted = match self.mutated_by(Mutant::CompletionCountUnclamped) {
                true => present,
                false => present.min(self.config.min_replication),
            };
            if counted == self.config.safe_replication {
                self.safe_mode.block_safe += 1;
            }
        }
    }

    pub(super) fn uncount_complete_block(&mut self, locations: usize) {
        if self.safe_mode.on {
            self.safe_mode.block_total = self.safe_mode.block_total.saturating_sub(1);
            if locations >= self.config.min_replication {
                self.safe_mode.block_safe = self.safe_mode.block_safe.saturating_sub(1);
            }
        }
    }

    fn recount(&self) -> (usize, usize) {
        let complete = self
            .blocks
            .values()
            .filter(|b| b.state == BlockUcState::Complete);
        let safe = complete
            .clone()
            .filter(|b| b.locations.len() >= self.config.safe_replication);
        (complete.count(), safe.count())
    }

    pub(super) fn leave_safe_mode(&mut self) -> bool {
        if self.safe_mode.on
            && self
                .safe_mode
                .threshold_reached(self.config.safemode_threshold_per_mille)
        {
            self.safe_mode.on = false;
        }
        !self.safe_mode.on
    }

    pub(super) fn become_standby(&mut self) {
        self.ha = HaState::Standby;
        self.postpone = true;
    }

    pub(super) fn remove_datanode(&mut self, datanode: DatanodeId) -> usize {
        let held: Vec<(BlockId, StorageId)> = self
            .blocks
            .iter()
            .flat_map(|(id, b)| b.locations.iter().map(move |s| (*id, *s)))
            .filter(|(_, s)| s.datanode == datanode)
            .collect();
        for (id, storage) in held {
            self.remove_stored_location(id, storage);
        }
        self.corrupt
            .values_mut()
            .for_each(|f| f.retain(|s, _| s.datanode != datanode));
        self.corrupt.retain(|_, f| !f.is_empty());
        self.reported_storages.retain(|s| s.datanode != datanode);
        if self.mutated_by(Mutant::DepartedDatanodeReportsKept) {
            return 0;
        }
        let before = self.queued().len();
        self.queue
            .values_mut()
            .for_each(|q| q.retain(|r| r.storage.datanode != datanode));
        self.queue.retain(|_, q| !q.is_empty());
        self.batch_queue.retain(|r| r.storage.datanode != datanode);
        before - self.queued().len()
    }

    /// Every queued report: blocks in id order, each in arrival order (or arrival order).
    pub(super) fn queued(&self) -> Vec<QueuedReport> {
        self.queue
            .values()
            .flatten()
            .chain(&self.batch_queue)
            .copied()
            .collect()
    }

    pub(super) fn view(&self) -> NamesystemView {
        let queued = self.queued();
        NamesystemView {
            ha: self.ha,
            postpone: self.postpone,
            generation_stamp: self.gs,
            impending_generation_stamp: self.impending_gs,
            safe_mode: self.safe_mode,
            recount: self.recount(),
            files: self.files.clone(),
            blocks: self.blocks.clone(),
            corrupt: self
                .corrupt
                .iter()
                .map(|(id, f)| (*id, f.iter().map(|(s, (gs, _))| (*s, *gs)).collect()))
                .collect(),
            queue: QueueMetrics {
                count: queued.len(),
                ..QueueMetrics::default()
            },
            queued,
            metrics: self.metrics,
            rules: self.config.replica_rules(),
        }
    }
}
