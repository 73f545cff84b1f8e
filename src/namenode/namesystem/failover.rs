//! The HA transitions inside the namesystem (`FSNamesystem.startActiveServices`,
//! `stopActiveServices`, `startStandbyServices`).
//!
//! **The race (HDFS-2742, HDFS-3605).** A failover that turned postponing off, or switched
//! the HA state, before replaying the rest of the log judged the queued reports against
//! intermediate block states and flagged healthy replicas corrupt. **The fix:** in one
//! critical section, catch up with postponing still on, only then turn it off, mark every
//! datanode stale, judge each queued report once, and apply the impending generation
//! stamp (HDFS-14941) so that the new active never reuses one.

use super::config::NamesystemBehavior;
use super::edits::{EditOp, ReplayError};
use super::state::State;
use super::view::HaState;
use crate::namenode::{DatanodeId, GenerationStamp};

impl State {
    /// Becomes active (`startActiveServices`): replays `remaining` with postpone still on
    /// (`catchupDuringFailover`), turns postpone off, marks `datanodes` stale, forgets the
    /// standby's deletion set (`clearQueues`), judges every queued report once
    /// (`processAllPendingDNMessages`), leaving the queue empty, and then applies the
    /// impending GS (`applyImpendingGenerationStamp`).
    pub(super) fn become_active(
        &mut self,
        remaining: &[EditOp],
        datanodes: &[DatanodeId],
    ) -> Result<(), ReplayError> {
        if self.config.behavior == NamesystemBehavior::LegacyHaStateCheck {
            // `HAState.setStateInternal` switches first, then runs the catch-up.
            self.ha = HaState::Active;
            crate::events::debug!(
                node = self.node(),
                why = "HA state switched before the catch-up",
                "failover: state active"
            );
        }
        self.batch_max_gs = GenerationStamp::MIN;
        self.catching_up = true;
        let caught_up = remaining.iter().try_for_each(|op| self.apply(op));
        self.catching_up = false;
        caught_up?;
        crate::events::debug!(
            node = self.node(),
            edits = remaining.len(),
            txid = self.last_applied_txid,
            "failover: catch-up done"
        );
        self.end_of_batch();
        self.postpone = false;
        self.ha = HaState::Active;
        self.stale = datanodes.iter().copied().collect();
        self.pending_deletion.clear();
        crate::events::debug!(
            node = self.node(),
            stale_datanodes = datanodes.len(),
            "transition to active"
        );
        let queued = self.queue.take_all();
        let messages = std::mem::take(&mut self.whole_messages);
        if !queued.is_empty() || !messages.is_empty() {
            crate::events::debug!(
                node = self.node(),
                after = "failover",
                count = queued.len() + messages.len(),
                "queued reports drained"
            );
        }
        self.process_queued(queued);
        for (_, message) in messages {
            self.process_message(message);
        }
        if self.impending_gs > self.gs_counter {
            crate::events::debug!(
                node = self.node(),
                gs = self.impending_gs,
                from = self.gs_counter,
                "failover: impending genstamp applied"
            );
        }
        self.gs_counter = self.gs_counter.max(self.impending_gs);
        debug_assert_eq!(
            self.queue.count(),
            0,
            "nothing can be re-queued once postpone is off"
        );
        Ok(())
    }

    /// Becomes standby: postpone on, the deletion and stale sets cleared; stored locations
    /// and the corrupt map are kept.
    pub(super) fn become_standby(&mut self) {
        crate::events::debug!(node = self.node(), "transition to standby");
        self.ha = HaState::Standby;
        self.postpone = true;
        self.pending_deletion.clear();
        self.stale.clear();
    }
}
