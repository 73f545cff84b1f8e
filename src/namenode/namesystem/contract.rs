//! The HA standby's boundary (HDFS-2742): [`NamesystemApi`], the entry points through
//! which edits, datanode reports and HA transitions reach a NameNode's namesystem, so that
//! another implementation of the standby's queue and replay can stand where this crate's
//! does and be checked the same way.
//!
//! **The race.** A datanode's report and the edit it depends on reach the standby in
//! either order; a report judged against a block state it was not produced under flags a
//! healthy replica corrupt (and the chain can lose every replica), or miscounts safe mode.
//!
//! **The fix** is what the trait's documentation asks of every implementation: postpone
//! what cannot be judged yet, per replica and per block, re-judge a block's reports right
//! after each edit that changes it, and at failover replay everything before judging the rest.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::api::Namesystem;
use super::config::{NamenodeConfig, NamesystemBehavior};
use super::edits::{EditOp, ReplayError};
use super::view::{
    BlockMetrics, HaState, NamesystemView, SafeModeCheck, SafeModeCounts, StoredBlock,
};
use crate::namenode::pending_messages::{QueueMetrics, ReportedState};
use crate::namenode::{Block, BlockId, DatanodeId, GenerationStamp, ReplicaState, StorageId};
use crate::sync::Arc;

/// A NameNode's namesystem as edit replay, datanode reports and HA transitions reach it:
/// `FSEditLogLoader` (through the tailer), `BlockManager.processReport` and
/// `processIncrementalBlockReport` (through `DatanodeProtocol`), and
/// `FSNamesystem.startActiveServices`/`startStandbyServices`; with the pending queue of
/// datanode messages (`PendingDataNodeMessages`) inside.
///
/// One value is shared by the NameNode's tailer thread and the threads that deliver
/// datanode reports; each call is one critical section of the namesystem lock.
///
/// # What a conforming standby guarantees (HDFS-2742)
///
/// - **Replay.** [`apply_edits`](Self::apply_edits) applies a batch whole or not at all
///   (the index and error of the first edit that does not fit, nothing applied). A replayed
///   `OP_SET_GENSTAMP` only records an impending stamp (HDFS-14941); attaching a block with
///   a stamp moves the stamp of the future test.
/// - **Postpone, per replica.** While standby, a reported replica whose generation stamp
///   is in the future, or that looks corrupt against the stored block
///   ([`check_replica_corrupt`](crate::namenode::evaluation::check_replica_corrupt)), is
///   queued for its block, in arrival order, with the values it was reported with; nothing
///   is ever marked corrupt while postponing.
/// - **Re-judge after the edit.** Right after an edit adds a block, changes its stamp, or
///   completes it, the block's queued reports are judged again in arrival order; what is
///   still future or inconsistent goes back in order.
/// - **Completion credits safe mode.** Completing a block on replay counts the live
///   replicas already stored, so the incremental safe-mode counts equal a recount.
/// - **Failover** ([`transition_to_active`](Self::transition_to_active)) replays the
///   `remaining` edits with postponing still on, then stops postponing and judges every
///   queued report once, leaving the queue empty, and applies the impending stamp.
/// - **Active.** Once active it judges every report at once and marks a corrupt replica,
///   and hands out deletions only while active.
///
/// [`view`](Self::view) is what the invariants read: the blocks with their stamps, states
/// and locations, the corrupt replicas with the stamp they were reported with, the queued
/// entries, the safe-mode counts and a recount, and
/// [`BlockMetrics::corrupt_marked_while_postponing`]. Fields an implementation does not
/// keep (`StoredBlock::expected`, the other metrics) may be left empty.
///
/// # Synchronization
///
/// Use [`crate::sync`] (or `hadoop_ref::sync` from another crate) for the namesystem lock:
/// loom and shuttle see only the facade's primitives. A `std::sync` or `parking_lot` lock
/// is invisible to them (or deadlocks the checker's single real thread).
pub trait NamesystemApi: Send + Sync + fmt::Debug {
    /// Applies a batch of edits (`doTailEdits` on the standby, the client's edits on the
    /// active): how many, or the first that does not fit with nothing applied.
    fn apply_edits(&self, ops: &[EditOp]) -> Result<usize, (usize, ReplayError)>;

    /// One incremental report entry: RECEIVING (RBW), RECEIVED (FINALIZED) or DELETED.
    fn incremental_report(&self, storage: StorageId, block: Block, state: ReportedState);

    /// A full block report of one storage.
    fn full_report(&self, storage: StorageId, entries: &[(Block, ReplicaState)]);

    /// Becomes active (`startActiveServices`): replays `remaining` with postponing on,
    /// marks `datanodes` stale, judges every queued report once.
    fn transition_to_active(
        &self,
        remaining: &[EditOp],
        datanodes: &[DatanodeId],
    ) -> Result<(), ReplayError>;

    /// Becomes standby (`startStandbyServices`): postponing again.
    fn transition_to_standby(&self);

    /// A datanode leaves: its locations, flags and queued reports go (HDFS-6289). Returns
    /// how many queued reports went.
    fn remove_datanode(&self, datanode: DatanodeId) -> usize;

    /// Leaves safe mode if the threshold is reached; whether safe mode is now off.
    fn leave_safe_mode_if_threshold_reached(&self) -> bool;

    /// The deletions for a datanode's heartbeat; none unless active.
    fn take_deletion_commands(&self, datanode: DatanodeId) -> Vec<(StorageId, Block)>;

    /// The HA state.
    fn ha_state(&self) -> HaState;

    /// A consistent copy of the observable state.
    fn view(&self) -> NamesystemView;

    /// The safe-mode counters.
    fn safe_mode(&self) -> SafeModeCounts {
        self.view().safe_mode
    }

    /// The safe-mode counters beside their recount from the namespace: what the
    /// safe-mode recount invariant reads (an implementation may answer it without a copy
    /// of its namespace).
    fn safe_mode_check(&self) -> SafeModeCheck {
        self.view().safe_mode_check()
    }

    /// The generation stamp of the future test.
    fn generation_stamp(&self) -> GenerationStamp {
        self.view().generation_stamp
    }

    /// A copy of a stored block.
    fn block(&self, id: BlockId) -> Option<StoredBlock> {
        self.view().blocks.get(&id).cloned()
    }

    /// Replicas flagged corrupt, by block.
    fn corrupt_replicas(&self) -> BTreeMap<BlockId, BTreeSet<StorageId>> {
        let corrupt = self.view().corrupt;
        corrupt
            .into_iter()
            .map(|(block, flagged)| (block, flagged.into_keys().collect()))
            .collect()
    }

    /// The pending queue's counters.
    fn queue_metrics(&self) -> QueueMetrics {
        self.view().queue
    }

    /// Corrupt markings and deletions so far.
    fn block_metrics(&self) -> BlockMetrics {
        self.view().metrics
    }
}

/// Builds a namesystem for one role of a scenario or a conformance run: a NameNode that
/// starts `ha` (a standby in safe mode, postponing; an active out of safe mode), with
/// `config` (its id, its rules) and its stamp counter at `initial_gs`.
///
/// [`NamesystemBehavior`] is one (the crate's `Namesystem` running that behavior in both
/// roles), and so is any function or closure with the signature of
/// [`NamesystemFactory::create`] returning a [`NamesystemApi`].
pub trait NamesystemFactory: Copy + Send + Sync + 'static {
    /// A fresh namesystem for role `ha`.
    fn create(
        &self,
        ha: HaState,
        config: NamenodeConfig,
        initial_gs: GenerationStamp,
    ) -> Arc<dyn NamesystemApi>;
}

impl NamesystemFactory for NamesystemBehavior {
    /// The crate's `Namesystem` with `config` running this behavior.
    fn create(
        &self,
        ha: HaState,
        config: NamenodeConfig,
        initial_gs: GenerationStamp,
    ) -> Arc<dyn NamesystemApi> {
        let config = NamenodeConfig {
            behavior: *self,
            ..config
        };
        match ha {
            HaState::Standby => Arc::new(Namesystem::standby(config, initial_gs)),
            HaState::Active => Arc::new(Namesystem::active(config, initial_gs)),
        }
    }
}

impl<N, F> NamesystemFactory for F
where
    N: NamesystemApi + 'static,
    F: Fn(HaState, NamenodeConfig, GenerationStamp) -> N + Copy + Send + Sync + 'static,
{
    fn create(
        &self,
        ha: HaState,
        config: NamenodeConfig,
        initial_gs: GenerationStamp,
    ) -> Arc<dyn NamesystemApi> {
        Arc::new(self(ha, config, initial_gs))
    }
}

impl NamesystemApi for Namesystem {
    fn apply_edits(&self, ops: &[EditOp]) -> Result<usize, (usize, ReplayError)> {
        Namesystem::apply_edits(self, ops)
    }

    fn incremental_report(&self, storage: StorageId, block: Block, state: ReportedState) {
        Namesystem::incremental_report(self, storage, block, state);
    }

    fn full_report(&self, storage: StorageId, entries: &[(Block, ReplicaState)]) {
        Namesystem::full_report(self, storage, entries);
    }

    fn transition_to_active(
        &self,
        remaining: &[EditOp],
        datanodes: &[DatanodeId],
    ) -> Result<(), ReplayError> {
        Namesystem::transition_to_active(self, remaining, datanodes)
    }

    fn transition_to_standby(&self) {
        Namesystem::transition_to_standby(self);
    }

    fn remove_datanode(&self, datanode: DatanodeId) -> usize {
        Namesystem::remove_datanode(self, datanode)
    }

    fn leave_safe_mode_if_threshold_reached(&self) -> bool {
        Namesystem::leave_safe_mode_if_threshold_reached(self)
    }

    fn take_deletion_commands(&self, datanode: DatanodeId) -> Vec<(StorageId, Block)> {
        Namesystem::take_deletion_commands(self, datanode)
    }

    fn ha_state(&self) -> HaState {
        Namesystem::ha_state(self)
    }

    fn view(&self) -> NamesystemView {
        Namesystem::view(self)
    }

    fn safe_mode(&self) -> SafeModeCounts {
        Namesystem::safe_mode(self)
    }

    fn safe_mode_check(&self) -> SafeModeCheck {
        Namesystem::safe_mode_check(self)
    }

    fn generation_stamp(&self) -> GenerationStamp {
        Namesystem::generation_stamp(self)
    }

    fn block(&self, id: BlockId) -> Option<StoredBlock> {
        Namesystem::block(self, id)
    }

    fn corrupt_replicas(&self) -> BTreeMap<BlockId, BTreeSet<StorageId>> {
        Namesystem::corrupt_replicas(self)
    }

    fn queue_metrics(&self) -> QueueMetrics {
        Namesystem::queue_metrics(self)
    }

    fn block_metrics(&self) -> BlockMetrics {
        Namesystem::block_metrics(self)
    }
}
