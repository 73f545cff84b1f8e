//! Two HA standby namesystems behind `NamesystemApi` (HDFS-2742), written from scratch:
//! the namespace, the block map and a queue of postponed datanode reports.
//!
//! **The race.** A datanode's report reaches the standby before the edits it was produced
//! under; judged against a later block state a healthy replica looks corrupt, and the
//! corrupt mark can end with no replica left.
//!
//! **The fix** ([`PerBlockStandby`]): the queue is per block, in arrival order, drained
//! right after each edit that adds the block, changes its stamp or completes it; a report
//! processed for a (block, storage) drops that pair's older queued entries.
//! [`BatchDrainStandby`] is the HA branch before HDFS-2742, as the seed describes it: one
//! queue for everything, drained after the whole batch of edits, nothing superseded.
//!
//! Both share this crate's namespace and report judging (`state`, `replay`, `reports`);
//! they differ in the queue ([`Queue`]). Left out, as beyond the standby's boundary: the
//! active's replication work (excess and corrupt replica deletion), so
//! `take_deletion_commands` hands out nothing; and the active's checks of a client's edits
//! (this namesystem trusts the active that logged them).

mod replay;
mod reports;
mod state;

use hadoop_ref::namenode::namesystem::{
    EditOp, HaState, NamenodeConfig, NamesystemApi, NamesystemFactory, NamesystemView, ReplayError,
};
use hadoop_ref::namenode::pending_messages::ReportedState;
use hadoop_ref::namenode::{Block, DatanodeId, GenerationStamp, ReplicaState, StorageId};
use hadoop_ref::sync::Mutex;

use crate::mutants::Mutant;
use state::State;

/// How postponed reports are kept and when they are judged again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queue {
    /// Per block, in arrival order, drained after each edit that changes the block; a
    /// processed report supersedes its (block, storage) entries (trunk).
    PerBlock,
    /// One queue in arrival order, drained after each batch of edits (the 2012 HA branch).
    AfterBatch,
}

/// A namesystem behind one `hadoop_ref::sync::Mutex` (the namesystem lock).
#[derive(Debug)]
pub struct Standby {
    state: Mutex<State>,
}

impl Standby {
    fn new(queue: Queue, ha: HaState, config: NamenodeConfig, gs: GenerationStamp) -> Self {
        Self {
            state: Mutex::new(State::new(queue, ha, config, gs, None)),
        }
    }
}

/// The HDFS-2742 fix: a per-block queue drained after each edit of its block.
#[derive(Debug, Clone, Copy)]
pub struct PerBlockStandby;

impl PerBlockStandby {
    /// A namesystem starting in role `ha` (the signature a conformance suite builds it with).
    pub fn start(ha: HaState, config: NamenodeConfig, gs: GenerationStamp) -> Standby {
        Standby::new(Queue::PerBlock, ha, config, gs)
    }

    /// A factory of namesystems carrying `mutant`'s one change.
    pub fn mutated(mutant: Mutant) -> impl NamesystemFactory {
        move |ha, config, gs| Standby {
            state: Mutex::new(State::new(Queue::PerBlock, ha, config, gs, Some(mutant))),
        }
    }
}

/// The seed's defect: one queue, drained only after the whole batch of edits.
#[derive(Debug, Clone, Copy)]
pub struct BatchDrainStandby;

impl BatchDrainStandby {
    /// A namesystem starting in role `ha` (the signature a conformance suite builds it with).
    pub fn start(ha: HaState, config: NamenodeConfig, gs: GenerationStamp) -> Standby {
        Standby::new(Queue::AfterBatch, ha, config, gs)
    }
}

impl NamesystemApi for Standby {
    fn apply_edits(&self, ops: &[EditOp]) -> Result<usize, (usize, ReplayError)> {
        let mut state = self.state.lock();
        // Whole or not at all: the batch runs on a copy, kept only if every edit fits.
        let mut next = state.clone();
        for (index, op) in ops.iter().enumerate() {
            next.apply(op).map_err(|error| (index, error))?;
        }
        next.end_of_batch();
        *state = next;
        Ok(ops.len())
    }

    fn incremental_report(&self, storage: StorageId, block: Block, reported: ReportedState) {
        self.state.lock().report(storage, block, reported);
    }

    fn full_report(&self, storage: StorageId, entries: &[(Block, ReplicaState)]) {
        self.state.lock().full_report(storage, entries);
    }

    fn transition_to_active(
        &self,
        remaining: &[EditOp],
        datanodes: &[DatanodeId],
    ) -> Result<(), ReplayError> {
        self.state.lock().become_active(remaining, datanodes)
    }

    fn transition_to_standby(&self) {
        self.state.lock().become_standby();
    }

    fn remove_datanode(&self, datanode: DatanodeId) -> usize {
        self.state.lock().remove_datanode(datanode)
    }

    fn leave_safe_mode_if_threshold_reached(&self) -> bool {
        self.state.lock().leave_safe_mode()
    }

    fn take_deletion_commands(&self, _datanode: DatanodeId) -> Vec<(StorageId, Block)> {
        Vec::new()
    }

    fn ha_state(&self) -> HaState {
        self.state.lock().ha
    }

    fn view(&self) -> NamesystemView {
        self.state.lock().view()
    }
}
