//! Safe-mode counting (`BlockManagerSafeMode`): the COMPLETE blocks, the safe ones, and
//! the threshold to leave.
//!
//! **The race (HDFS-2742).** On the standby a replica is often reported before replay
//! completes its block; if completion does not credit it, the safe count stays short and
//! a restarted standby never leaves safe mode. **The fix:** `forceCompleteBlock` counts the
//! block and credits the replicas already present; reopen and delete take a COMPLETE
//! block back out, so the counters always equal a recount of the namespace.

use super::config::NamesystemBehavior;
use super::state::State;
use super::view::HaState;
use crate::namenode::evaluation::BlockUcState;

impl State {
    /// (total, safe) recounted from the namespace: what the incremental counters must
    /// equal.
    pub(super) fn count_safe_blocks(&self) -> (usize, usize) {
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

    /// The block total set from a recount (`setBlockTotal`, the legacy whole-message
    /// queue after each batch); the safe count is left alone.
    pub(super) fn reset_block_total_to_recount(&mut self) {
        let total = self.count_safe_blocks().0;
        if total != self.safe_mode.block_total {
            self.safe_mode.block_total = total;
            self.trace_counts("block total recounted");
        }
    }

    /// The `safe mode counts changed` event, after a change `why` names. A block's
    /// completion shows the counts in its own event instead.
    fn trace_counts(&self, why: &'static str) {
        crate::events::debug!(
            node = self.node(),
            block_safe = self.safe_mode.block_safe,
            block_total = self.safe_mode.block_total,
            why,
            "safe mode counts changed"
        );
    }

    /// A block became COMPLETE with `present` locations: it joins the total, and is safe
    /// at once if those reach the safe replication. [`NamesystemBehavior::LegacyEarlyDrain`]
    /// does not credit them; the whole-message legacy queue recounts instead.
    pub(super) fn count_completed_block(&mut self, present: usize) {
        let (safe_replication, min_replication) =
            (self.config.safe_replication, self.config.min_replication);
        let credit_present = self.config.behavior != NamesystemBehavior::LegacyEarlyDrain;
        let adjust = self.config.behavior != NamesystemBehavior::LegacyWholeMessageQueue;
        if self.safe_mode.on && adjust {
            self.safe_mode.block_total += 1;
            if credit_present && present.min(min_replication) == safe_replication {
                self.safe_mode.block_safe += 1;
            }
        }
    }

    /// A COMPLETE block with `locations` locations leaves the counts (reopened by an
    /// append, or removed).
    pub(super) fn uncount_complete_block(&mut self, locations: usize) {
        if self.safe_mode.on && self.config.behavior != NamesystemBehavior::LegacyWholeMessageQueue
        {
            self.safe_mode.block_total = self.safe_mode.block_total.saturating_sub(1);
            if locations >= self.config.min_replication {
                self.safe_mode.block_safe = self.safe_mode.block_safe.saturating_sub(1);
            }
            self.trace_counts("complete block reopened or removed");
        }
    }

    /// `incrementSafeBlockCount`: a COMPLETE block now has `locations` locations; it turns
    /// safe as they reach the safe replication.
    pub(super) fn count_added_location(&mut self, locations: usize) {
        if self.safe_mode.on && locations == self.config.safe_replication {
            self.safe_mode.block_safe += 1;
            self.trace_counts("location added");
        }
    }

    /// `decrementSafeBlockCount`: a COMPLETE block is down to `locations` locations; it
    /// stops being safe as they drop just below the safe replication.
    pub(super) fn count_removed_location(&mut self, locations: usize) {
        if self.safe_mode.on && locations + 1 == self.config.safe_replication {
            self.safe_mode.block_safe = self.safe_mode.block_safe.saturating_sub(1);
            self.trace_counts("location removed");
        }
    }

    /// Leaves safe mode once the safe blocks reach the threshold; on the active, runs the
    /// replication checks safe mode held back (`processMisReplicatedBlocks`). Returns
    /// whether safe mode is now off.
    pub(super) fn leave_safe_mode_if_threshold_reached(&mut self) -> bool {
        if !self.safe_mode.on {
            return true;
        }
        if !self
            .safe_mode
            .threshold_reached(self.config.safemode_threshold_per_mille)
        {
            return false;
        }
        self.safe_mode.on = false;
        crate::events::debug!(
            node = self.node(),
            block_safe = self.safe_mode.block_safe,
            block_total = self.safe_mode.block_total,
            "safe mode left"
        );
        if self.ha == HaState::Active {
            self.process_over_replicated_blocks();
        }
        true
    }
}
