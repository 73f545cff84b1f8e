//! The replication manager's processors (`UnderReplicatedProcessor`,
//! `OverReplicatedProcessor`): each runs on its own interval, takes what the last pass
//! queued, reads the container's replicas and pending ops again, and has its handler send
//! the commands.
//!
//! **The race (HDDS-17268, HDDS-16449).** The queue outlives the pass that filled it, and
//! a change of leader does not clear it: a leader deposed after its pass queued an
//! over-replicated container, and that has not heard, deletes a replica at its old term
//! while the new leader's own pass picks one too; a leader that heard stops, and finds the
//! old queue again if it is elected anew. **The fence is the datanode's** term, as for
//! every command of a deposed leader; the processor only re-reads the replicas and the
//! pending ops, as upstream does (not the health check).

use std::collections::VecDeque;

use super::super::error::ScmError;
use super::StorageContainerManager;
use super::replication_state::{Processor, Queued};

impl StorageContainerManager {
    /// One run of `UnderReplicatedProcessor`: when the replication manager runs and the
    /// processor's interval is over, every queued under-replicated container handled
    /// (`RatisUnderReplicationHandler`, or the stuck QUASI_CLOSED one). Returns the
    /// commands sent; a container whose handling failed is queued again.
    pub fn run_under_replicated_processor(&self) -> Result<usize, ScmError> {
        self.run_processor(Processor::Under)
    }

    /// One run of `OverReplicatedProcessor` (`RatisOverReplicationHandler`, or the stuck
    /// QUASI_CLOSED one), as [`run_under_replicated_processor`](Self::run_under_replicated_processor).
    pub fn run_over_replicated_processor(&self) -> Result<usize, ScmError> {
        self.run_processor(Processor::Over)
    }

    /// Containers queued for the processors (under- and over-replicated).
    pub fn replication_queue_len(&self) -> usize {
        self.replication.lock().queue.len()
    }

    fn run_processor(&self, processor: Processor) -> Result<usize, ScmError> {
        let Some(batch) = self.take_queue(processor) else {
            return Ok(0);
        };
        let mut sent = 0;
        let mut failed = VecDeque::new();
        let mut entries = batch.into_iter();
        // Bounded by the batch taken; each entry is handled once.
        for entry in entries.by_ref() {
            if !self.context().is_serving() {
                // `shouldRun` checked again before each entry: the rest waits.
                failed.push_back(entry);
                break;
            }
            match self.process_queued(processor, entry) {
                Ok(commands) => sent += commands,
                Err(error) => {
                    crate::events::debug!(
                        node = %self.id,
                        container = entry.container.0,
                        %error,
                        "queued container failed"
                    );
                    failed.push_back(entry);
                }
            }
        }
        failed.extend(entries);
        self.replication.lock().queue.of(processor).extend(failed);
        Ok(sent)
    }

    /// The processor's queue, taken whole, when the manager runs and the processor's
    /// interval is over.
    fn take_queue(&self, processor: Processor) -> Option<VecDeque<Queued>> {
        let mut rm = self.replication.lock();
        if !self.replication_manager_should_run(&mut rm) {
            return None;
        }
        let now_ms = self.clock.now_ms();
        let interval_ms = match processor {
            Processor::Under => self.config.replication.under_replicated_interval_ms,
            Processor::Over => self.config.replication.over_replicated_interval_ms,
        };
        let last = &mut rm.last_processed_ms[processor.index()];
        if last.is_some_and(|last| now_ms.saturating_sub(last) < interval_ms) {
            return None;
        }
        *last = Some(now_ms);
        Some(std::mem::take(rm.queue.of(processor)))
    }

    /// `processUnderReplicatedContainer` / `processOverReplicatedContainer`: the replicas
    /// and pending ops read again, the stuck QUASI_CLOSED check made again to pick the
    /// handler, and the handler run. A container gone meanwhile is dropped.
    fn process_queued(&self, processor: Processor, entry: Queued) -> Result<usize, ScmError> {
        let Some(container) = self.container_snapshot(entry.container) else {
            return Ok(0);
        };
        let pending = self.pending_ops(entry.container);
        let stuck = self.is_quasi_closed_stuck(&container);
        let commands = match (processor, stuck) {
            (Processor::Under, true) => {
                self.handle_quasi_closed_stuck_under(&container, &pending)?
            }
            (Processor::Under, false) => self.handle_under_replicated(&container, &pending)?,
            (Processor::Over, true) => self.handle_quasi_closed_stuck_over(&container, &pending)?,
            (Processor::Over, false) => self.handle_over_replicated(&container, &pending)?,
        };
        crate::events::debug!(
            node = %self.id,
            container = entry.container.0,
            health = processor.name(),
            queued_term = entry.term,
            term = self.context().term,
            commands,
            "queued container processed"
        );
        Ok(commands)
    }
}
