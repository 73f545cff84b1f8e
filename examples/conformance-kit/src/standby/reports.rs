//! Datanode reports on the standby (`BlockManager.processReportedBlock`): each replica is
//! postponed, judged, or recorded as a location; postponed ones are judged again later.
//!
//! **The race (HDFS-2742).** A replica judged against a block state it was not produced
//! under is flagged corrupt; on a standby that flag is the first step of the data-loss chain.
//!
//! **The fix**: while postponing, a replica whose stamp is in the future or that looks
//! corrupt is queued, never flagged; failover catches up first, then judges the queue once.

use std::collections::{BTreeSet, VecDeque};

use hadoop_ref::namenode::evaluation::{
    BlockUcState, CorruptReason, ReplicaVerdict, StoredBlockView, check_replica_corrupt,
    is_block_under_construction,
};
use hadoop_ref::namenode::namesystem::{EditOp, HaState, ReplayError};
use hadoop_ref::namenode::pending_messages::{QueuedReport, ReportedState};
use hadoop_ref::namenode::{Block, BlockId, DatanodeId, ReplicaState, StorageId};

use super::Queue;
use super::state::State;
use crate::mutants::Mutant;

impl State {
    /// A storage's full report: each replica, then (after the first) the omitted ones go.
    pub(super) fn full_report(&mut self, storage: StorageId, entries: &[(Block, ReplicaState)]) {
        let first = self.reported_storages.insert(storage);
        for &(block, state) in entries {
            self.report(storage, block, ReportedState::Replica(state));
        }
        if !first {
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
    }

    /// One replica report; false when it was queued as future.
    pub(super) fn report(
        &mut self,
        storage: StorageId,
        reported: Block,
        state: ReportedState,
    ) -> bool {
        if self.postpone && reported.gs > self.gs {
            self.enqueue(QueuedReport {
                storage,
                block: reported,
                state,
            });
            return false;
        }
        let ReportedState::Replica(replica) = state else {
            self.remove_stored_location(reported.id, storage);
            return true;
        };
        if self.queue_kind == Queue::PerBlock
            && !self.mutated_by(Mutant::ProcessedReportKeepsQueuedOnes)
        {
            // A processed report supersedes the pair's queued ones (HDFS-17477).
            if let Some(queue) = self.queue.get_mut(&reported.id) {
                queue.retain(|r| r.storage != storage);
                if queue.is_empty() {
                    self.queue.remove(&reported.id);
                }
            }
        }
        let Some(stored) = self.blocks.get(&reported.id) else {
            return true;
        };
        let view = StoredBlockView {
            gs: stored.block.gs,
            length: stored.block.length,
            state: stored.state,
        };
        match check_replica_corrupt(&reported, replica, &view, self.config.replica_rules()) {
            ReplicaVerdict::Corrupt(_) if self.postpone => {
                self.enqueue(QueuedReport {
                    storage,
                    block: reported,
                    state,
                });
            }
            ReplicaVerdict::Corrupt(reason) => self.mark_corrupt(storage, reported, reason),
            ReplicaVerdict::Ignored => {}
            ReplicaVerdict::Ok => self.accept(storage, reported, replica, view.state),
        }
        true
    }

    fn enqueue(&mut self, report: QueuedReport) {
        match self.queue_kind {
            Queue::PerBlock => self
                .queue
                .entry(report.block.id)
                .or_default()
                .push_back(report),
            Queue::AfterBatch => self.batch_queue.push_back(report),
        }
    }

    /// Judges queued reports in order; behind one re-queued as future, the block's later
    /// replica reports go back unjudged (per-block queue). DELETED entries apply at once.
    pub(super) fn process_queued(&mut self, reports: VecDeque<QueuedReport>) {
        let mut previous_processed = true;
        let judge_behind_future = self.mutated_by(Mutant::ReportsBehindFutureOneJudged);
        for report in reports {
            match report.state {
                ReportedState::Deleted => {
                    self.remove_stored_location(report.block.id, report.storage)
                }
                ReportedState::Replica(_)
                    if !previous_processed
                        && self.queue_kind == Queue::PerBlock
                        && !judge_behind_future =>
                {
                    self.enqueue(report);
                }
                ReportedState::Replica(_) => {
                    previous_processed = self.report(report.storage, report.block, report.state);
                }
            }
        }
    }

    /// A healthy replica: an expected replica of a block being written, and once FINALIZED
    /// a location (a flagged one reported healthy reaches the location step again).
    fn accept(
        &mut self,
        storage: StorageId,
        reported: Block,
        replica: ReplicaState,
        block_state: BlockUcState,
    ) {
        let flagged = self
            .corrupt
            .get(&reported.id)
            .is_some_and(|f| f.contains_key(&storage));
        let Some(stored) = self.blocks.get_mut(&reported.id) else {
            return;
        };
        let finalized_new =
            replica == ReplicaState::Finalized && !stored.locations.contains(&storage);
        if is_block_under_construction(block_state, replica) {
            stored
                .expected
                .entry(storage)
                .and_modify(|(gs, _)| *gs = reported.gs)
                .or_insert((reported.gs, replica));
            if finalized_new || flagged {
                self.add_location(reported.id, storage);
            }
        } else if replica == ReplicaState::Finalized && (finalized_new || flagged) {
            self.add_location(reported.id, storage);
        }
    }

    fn add_location(&mut self, id: BlockId, storage: StorageId) {
        let Some(stored) = self.blocks.get_mut(&id) else {
            return;
        };
        if !stored.locations.insert(storage) {
            // Reported healthy again: a flag for a stamp mismatch goes.
            if let Some(flagged) = self.corrupt.get_mut(&id) {
                if flagged.get(&storage).map(|(_, r)| *r) == Some(CorruptReason::GenstampMismatch) {
                    flagged.remove(&storage);
                }
                if flagged.is_empty() {
                    self.corrupt.remove(&id);
                }
            }
            return;
        }
        let (state, count) = (stored.state, stored.locations.len());
        match state {
            BlockUcState::Committed if self.live_replicas(id) >= self.config.min_replication => {
                self.complete_block(id);
            }
            BlockUcState::Complete
                if self.safe_mode.on && count == self.config.safe_replication =>
            {
                self.safe_mode.block_safe += 1;
            }
            _ => {}
        }
    }

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
    }

    pub(super) fn remove_stored_location(&mut self, id: BlockId, storage: StorageId) {
        let Some(stored) = self.blocks.get_mut(&id) else {
            return;
        };
        if !stored.locations.remove(&storage) {
            return;
        }
        let (complete, remaining) = (
            stored.state == BlockUcState::Complete,
            stored.locations.len(),
        );
        if let Some(flagged) = self.corrupt.get_mut(&id) {
            flagged.remove(&storage);
            if flagged.is_empty() {
                self.corrupt.remove(&id);
            }
        }
        let was_safe = match self.mutated_by(Mutant::SafeCountOffByOne) {
            true => remaining == self.config.safe_replication,
            false => remaining + 1 == self.config.safe_replication,
        };
        if complete && self.safe_mode.on && was_safe {
            self.safe_mode.block_safe = self.safe_mode.block_safe.saturating_sub(1);
        }
    }

    /// Failover: catch up with postponing on, then stop postponing and judge what is
    /// queued once; the impending stamp applies last.
    pub(super) fn become_active(
        &mut self,
        remaining: &[EditOp],
        _datanodes: &[DatanodeId],
    ) -> Result<(), ReplayError> {
        if self.mutated_by(Mutant::QueueJudgedBeforeCatchUp) {
            self.judge_queue_as_active();
        }
        self.catching_up = true;
        let caught_up = remaining.iter().try_for_each(|op| self.apply(op));
        self.catching_up = false;
        caught_up?;
        self.end_of_batch();
        self.judge_queue_as_active();
        self.gs = self.gs.max(self.impending_gs);
        Ok(())
    }

    /// Stops postponing and judges every queued report once, in queue order.
    fn judge_queue_as_active(&mut self) {
        self.postpone = false;
        self.ha = HaState::Active;
        let mut queued: VecDeque<QueuedReport> = std::mem::take(&mut self.queue)
            .into_values()
            .flatten()
            .collect();
        queued.extend(std::mem::take(&mut self.batch_queue));
        self.process_queued(queued);
    }
}
