//! `Namesystem`: the public API. Each call takes the namesystem lock once, calls into
//! the `State` and releases the lock on return.
//!
//! **The race (HDFS-2742).** A datanode's report and the tailer's edits race for the
//! standby; which one runs first decides what the report is judged against. **The fix**
//! does not remove that race: every call here is one critical section, and the state
//! postpones what it cannot judge yet, so either order ends the same.

use std::collections::{BTreeMap, BTreeSet};

use super::config::NamenodeConfig;
use super::edits::{EditOp, ReplayError};
use super::state::State;
use super::view::{
    BlockMetrics, HaState, NamesystemView, SafeModeCheck, SafeModeCounts, StoredBlock,
};
use crate::namenode::pending_messages::{QueueMetrics, ReportedState};
use crate::namenode::{Block, BlockId, DatanodeId, GenerationStamp, ReplicaState, StorageId};
use crate::sync::Mutex;

/// A NameNode's namesystem behind its write lock.
#[derive(Debug)]
pub struct Namesystem {
    state: Mutex<State>,
}

impl Namesystem {
    /// A standby with an empty namespace, in safe mode, postponing, GS counter at
    /// `initial_gs`.
    pub fn standby(config: NamenodeConfig, initial_gs: GenerationStamp) -> Self {
        Self::new(config, initial_gs, HaState::Standby)
    }

    /// An active NameNode with an empty namespace, out of safe mode, GS counter at
    /// `initial_gs`: it applies the edits it logs with [`Namesystem::apply_edits`] and
    /// judges every report at once.
    pub fn active(config: NamenodeConfig, initial_gs: GenerationStamp) -> Self {
        Self::new(config, initial_gs, HaState::Active)
    }

    fn new(config: NamenodeConfig, initial_gs: GenerationStamp, ha: HaState) -> Self {
        Self {
            state: Mutex::new(State::new(config, initial_gs, ha)),
        }
    }

    /// Replays a batch of edits under the lock (one `doTailEdits`), whole or not at all:
    /// returns how many were applied, or the index of the first edit that does not fit
    /// with its error, none of the batch applied.
    pub fn apply_edits(&self, ops: &[EditOp]) -> Result<usize, (usize, ReplayError)> {
        let mut ns = self.state.lock();
        ns.apply_batch(ops)
    }

    /// An incremental report entry: RECEIVING (RBW), RECEIVED (FINALIZED) or DELETED.
    pub fn incremental_report(&self, storage: StorageId, block: Block, state: ReportedState) {
        let mut ns = self.state.lock();
        ns.receive_incremental_report(storage, block, state);
    }

    /// A full block report of one storage: the first since registration takes the first
    /// path; a later one also removes the replicas the storage no longer lists.
    ///
    /// The report is processed entry by entry from the caller's slice: only the entries
    /// that are postponed are copied, into the queue (the legacy whole-message queue keeps
    /// a postponed report whole, as it did).
    pub fn full_report(&self, storage: StorageId, entries: &[(Block, ReplicaState)]) {
        let mut ns = self.state.lock();
        ns.receive_full_report(storage, entries);
    }

    /// Becomes active (`startActiveServices`, one critical section): replays `remaining`
    /// edits with postpone still on, turns postpone off, marks every datanode stale,
    /// forgets the standby's deletion set, judges every queued report once, leaving the
    /// queue empty, and applies the impending generation stamp. The caller has stopped the
    /// tailer.
    pub fn transition_to_active(
        &self,
        remaining: &[EditOp],
        datanodes: &[DatanodeId],
    ) -> Result<(), ReplayError> {
        let mut ns = self.state.lock();
        ns.become_active(remaining, datanodes)
    }

    /// Becomes standby (`stopActiveServices`, then `startStandbyServices`): postpone on, the
    /// deletion and stale sets cleared; stored locations and the corrupt map are kept. The
    /// caller starts a tailer at the end of the edits this node logged.
    pub fn transition_to_standby(&self) {
        let mut ns = self.state.lock();
        ns.become_standby();
    }

    /// A datanode leaves (declared dead, or re-registered under a new identity): its
    /// locations, corrupt flags and pending deletions go, and so do its queued reports
    /// (HDFS-6289), so that no later drain judges a report of a datanode that no longer
    /// exists. Returns how many queued reports went.
    pub fn remove_datanode(&self, datanode: DatanodeId) -> usize {
        let mut ns = self.state.lock();
        ns.remove_datanode(datanode)
    }

    /// Leaves safe mode if `block_safe ≥ floor(block_total × threshold)`
    /// (`BlockManagerSafeMode.checkSafeMode`); on the active this runs the replication
    /// checks that safe mode held back (`processMisReplicatedBlocks`). The datanode
    /// threshold (0 by default) and the extension are not modelled: the caller's safe-mode
    /// monitor decides when to ask. Returns whether safe mode is now off.
    pub fn leave_safe_mode_if_threshold_reached(&self) -> bool {
        let mut ns = self.state.lock();
        ns.leave_safe_mode_if_threshold_reached()
    }

    /// Deletion commands for a datanode's storages (handed out on its heartbeat). The
    /// standby's commands are ignored by datanodes, so it hands out none.
    pub fn take_deletion_commands(&self, datanode: DatanodeId) -> Vec<(StorageId, Block)> {
        let mut ns = self.state.lock();
        ns.take_deletion_commands(datanode)
    }

    /// Turns safe mode on or off (tests and scenarios set up a restarted standby).
    pub fn set_safe_mode(&self, on: bool) {
        self.state.lock().safe_mode.on = on;
    }

    /// The safe-mode counters.
    pub fn safe_mode(&self) -> SafeModeCounts {
        self.state.lock().safe_mode
    }

    /// Recounts the safe-mode counters from the namespace: what the incremental counts
    /// must equal (the scenarios' safe-mode recount invariant).
    pub fn recount_safe_mode(&self) -> (usize, usize) {
        self.state.lock().count_safe_blocks()
    }

    /// The HA state.
    pub fn ha_state(&self) -> HaState {
        self.state.lock().ha
    }

    /// A copy of a stored block.
    pub fn block(&self, id: BlockId) -> Option<StoredBlock> {
        self.state.lock().blocks.get(&id).cloned()
    }

    /// Replicas flagged corrupt, by block.
    pub fn corrupt_replicas(&self) -> BTreeMap<BlockId, BTreeSet<StorageId>> {
        self.state
            .lock()
            .corrupt
            .iter()
            .map(|(b, m)| (*b, m.keys().copied().collect()))
            .collect()
    }

    /// The pending queue's counters.
    pub fn queue_metrics(&self) -> QueueMetrics {
        self.state.lock().queue.metrics()
    }

    /// The generation-stamp counter of the future test (`getGenerationStamp`).
    pub fn generation_stamp(&self) -> GenerationStamp {
        self.state.lock().gs_counter
    }

    /// The highest GS replayed from `OP_SET_GENSTAMP` (`getImpendingGenerationStamp`,
    /// HDFS-14941): the counter reaches it when replay attaches a block with it, or at
    /// failover.
    pub fn impending_generation_stamp(&self) -> GenerationStamp {
        self.state.lock().impending_gs
    }

    /// Corrupt markings and deletions so far.
    pub fn block_metrics(&self) -> BlockMetrics {
        self.state.lock().metrics
    }

    /// A consistent copy of the observable state (one lock acquisition). Costs a copy of
    /// the namespace: for checkers and tests, not for a hot path.
    pub fn view(&self) -> NamesystemView {
        let ns = self.state.lock();
        ns.view()
    }

    /// The safe-mode counters beside their recount (see [`SafeModeCheck`]), with the
    /// events a [`view`](Self::view) states, without its copy of the namespace.
    pub fn safe_mode_check(&self) -> SafeModeCheck {
        self.state.lock().safe_mode_check()
    }
}
