//! The re-judgement of queued reports (`BlockManager.processQueuedMessagesForBlock`,
//! `processQueuedMessages`, `processAllPendingDNMessages`).
//!
//! **The race (HDFS-2742).** A queued report judged against a block state newer than the
//! one it was produced under flags a healthy replica corrupt; one judged out of order
//! against the others of its block can be applied where an earlier one still waits.
//! **The fix:** each edit that changes a block re-judges the block's queue in arrival
//! order; what is still future or inconsistent goes back in order, and once an entry goes
//! back as future every later entry but a DELETED one goes back unjudged (trunk's
//! `isPreviousMessageProcessed`). Queued DELETED entries remove their location at once,
//! without the future test.

use super::state::{DrainTrigger, Origin, State};
use crate::namenode::BlockId;
use crate::namenode::pending_messages::{QueuedReport, ReportedState};

impl State {
    /// `processQueuedMessagesForBlock`: re-judges the block's queue after the edit that
    /// changed it. [`NamesystemBehavior::LegacyEarlyDrain`](super::NamesystemBehavior)
    /// drains only when replay first adds the block.
    pub(super) fn drain(&mut self, id: BlockId, trigger: DrainTrigger) {
        if self.config.behavior == super::NamesystemBehavior::LegacyEarlyDrain
            && trigger != DrainTrigger::NewBlock
        {
            let left = self.queue.queued(id).count();
            if left > 0 {
                crate::events::debug!(
                    node = self.node(),
                    block = id.0,
                    after = trigger.name(),
                    left,
                    why = "drained only when replay adds the block",
                    "drain skipped"
                );
            }
            return;
        }
        let Some(queued) = self.queue.take_block_queue(id) else {
            return;
        };
        crate::events::debug!(
            node = self.node(),
            block = id.0,
            after = trigger.name(),
            count = queued.len(),
            "queued reports drained"
        );
        self.process_queued(queued);
    }

    /// `processQueuedMessages`: each entry in order; a DELETED one removes its location
    /// without the future test; after an entry re-queued as future, the others are
    /// re-queued unjudged, keeping the block's order.
    pub(super) fn process_queued(&mut self, reports: impl IntoIterator<Item = QueuedReport>) {
        let mut previous_processed = true;
        for report in reports {
            match report.state {
                ReportedState::Deleted => {
                    crate::events::debug!(
                        node = self.node(),
                        datanode = %report.storage.datanode,
                        block = report.block.id.0,
                        gs = report.block.gs,
                        state = %report.state,
                        report = Origin::Queue.name(),
                        "report processed"
                    );
                    self.remove_stored_location(report.block.id, report.storage);
                }
                ReportedState::Replica(_) if !previous_processed => {
                    // Re-queued as "future", unjudged (`queueReportedBlock`).
                    crate::events::debug!(
                        node = self.node(),
                        datanode = %report.storage.datanode,
                        block = report.block.id.0,
                        gs = report.block.gs,
                        state = %report.state,
                        report = Origin::Queue.name(),
                        why = "behind a future report",
                        "report queued"
                    );
                    self.enqueue(report.storage, report.block, report.state);
                }
                ReportedState::Replica(_) => {
                    previous_processed = self.process_reported(
                        report.storage,
                        report.block,
                        report.state,
                        Origin::Queue,
                    );
                }
            }
        }
    }
}
