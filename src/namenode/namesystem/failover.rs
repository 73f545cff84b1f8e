//! The HA transitions inside the namesystem (`FSNamesystem.startActiveServices`,
//! `stopActiveServices`, `startStandbyServices`).
//!
//! **The race (HDFS-2742, HDFS-3605).** A failover that turned postponing off, or switched
//! the HA state, before replaying the rest of the log judged the queued reports against
//! intermediate block states and flagged healthy replicas corrupt. **The fix:** in one
//! critical section, catch up with postponing still on, only then turn it off, mark every
//! datanode stale, and judge each queued report once.

use super::config::NamesystemBehavior;
use super::edits::{EditOp, ReplayError};
use super::state::{Origin, State};
use super::view::HaState;
use crate::namenode::{DatanodeId, GenerationStamp};

impl State {
    /// Becomes active: replays `remaining` with postpone still on, turns postpone off,
    /// marks `datanodes` stale, forgets the standby's deletion set, judges every queued
    /// report once and leaves the queue empty.
    pub(super) fn become_active(
        &mut self,
        remaining: &[EditOp],
        datanodes: &[DatanodeId],
    ) -> Result<(), ReplayError> {
        if self.config.behavior == NamesystemBehavior::LegacyHaStateCheck {
            // `HAState.setStateInternal` switches first, then runs the catch-up.
            self.ha = HaState::Active;
        }
        self.batch_max_gs = GenerationStamp::MIN;
        for op in remaining {
            self.apply(op)?;
        }
        self.end_of_batch();
        self.postpone = false;
        self.ha = HaState::Active;
        self.stale = datanodes.iter().copied().collect();
        self.pending_deletion.clear();
        for report in self.queue.take_all() {
            self.process_reported(report.storage, report.block, report.state, Origin::Queue);
        }
        for (_, message) in std::mem::take(&mut self.whole_messages) {
            self.process_message(message);
        }
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
        self.ha = HaState::Standby;
        self.postpone = true;
        self.pending_deletion.clear();
        self.stale.clear();
    }
}
