//! The queue before the HDFS-2742 fix, kept as [`NamesystemBehavior::LegacyWholeMessageQueue`]:
//! whole datanode messages postponed by their highest generation stamp.
//!
//! **The race (HDFS-2742).** A message is postponed only if its highest GS is in the
//! future, and processed whole after the batch of edits that reaches that GS: an RBW
//! report is then judged against the block the batch completed, and flagged corrupt.
//! **The fix** replaces this with the per-replica, per-block queue of reports.rs; this
//! file exists so that the checkers can show the difference.

use super::config::NamesystemBehavior;
use super::state::{Message, Origin, State};
use crate::namenode::{Block, GenerationStamp};

impl State {
    /// Whether the legacy queue postpones a whole message whose highest generation stamp
    /// is `target_gs` (it is in the future).
    pub(super) fn postpones_whole_message(&self, target_gs: GenerationStamp) -> bool {
        self.config.behavior == NamesystemBehavior::LegacyWholeMessageQueue
            && self.postpone
            && target_gs > self.gs_counter
    }

    /// A postponed message, processed whole as if it had just arrived.
    pub(super) fn process_message(&mut self, message: Message) {
        match message {
            Message::Incremental(storage, block, state) => {
                self.process_reported(storage, block, state, Origin::Incremental);
            }
            Message::FullReport(storage, entries) => self.process_full_report(storage, &entries),
        }
    }

    /// The highest GS an edit's block list names, for the batch's target.
    pub(super) fn note_block_list(&mut self, blocks: &[Block]) {
        if let Some(max) = blocks.iter().map(|b| b.gs).max() {
            self.batch_max_gs = self.batch_max_gs.max(max);
        }
    }

    /// After a batch of edits. The whole-message legacy queue recounts the safe-mode block
    /// total (only the total: `setBlockTotal`; the safe count stays as it was, so a
    /// replica reported before its block completed is never credited), then processes, in
    /// target order, the messages whose target GS the batch's block lists reached.
    pub(super) fn end_of_batch(&mut self) {
        if self.config.behavior != NamesystemBehavior::LegacyWholeMessageQueue {
            return;
        }
        if self.safe_mode.on {
            self.reset_block_total_to_recount();
        }
        self.whole_messages.sort_by_key(|(target, _)| *target);
        let ready = self
            .whole_messages
            .partition_point(|(target, _)| *target <= self.batch_max_gs);
        let ready: Vec<(GenerationStamp, Message)> = self.whole_messages.drain(..ready).collect();
        if !ready.is_empty() {
            crate::events::debug!(
                node = self.node(),
                after = "end of batch",
                count = ready.len(),
                batch_gs = self.batch_max_gs,
                "queued reports drained"
            );
        }
        for (_, message) in ready {
            self.process_message(message);
        }
    }
}
