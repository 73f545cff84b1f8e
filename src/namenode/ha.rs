//! One NameNode of an HA pair: its namesystem, its tailer over the shared edit log, the
//! HA transitions, and the [`DatanodeProtocol`] boundary datanodes talk to (HDFS-2742).
//!
//! **The race.** Datanodes send every report to both NameNodes; the standby learns block
//! state only from the edits it has tailed. A failover that judged the queued reports
//! before replaying the rest of the log, or while the tailer still ran, would judge them
//! against intermediate states (HDFS-3605) and mark healthy replicas corrupt.
//!
//! **The fix** (`NameNode.transitionToActive`): [`NameNode::transition_to_active`] fences
//! the log, stops the tailer, replays the rest with postponing still on, and only then
//! turns postponing off and judges everything left, all in one namesystem critical section.
//!
//! ```
//! # hadoop_ref::sync::run_example(|| {
//! use hadoop_ref::namenode::DatanodeId;
//! use hadoop_ref::namenode::edit_log::{NameNodeId, SharedEditLog};
//! use hadoop_ref::namenode::ha::NameNode;
//! use hadoop_ref::namenode::namesystem::{EditOp, HaState, NamenodeConfig};
//! use hadoop_ref::sync::Arc;
//!
//! let log = Arc::new(SharedEditLog::new(1_000));
//! let nn0 = NameNode::active(NameNodeId(0), NamenodeConfig::default(), 0, Arc::clone(&log), 100);
//! let nn1 = NameNode::standby(NameNodeId(1), NamenodeConfig::default(), 0, Arc::clone(&log), 100);
//! nn0.log_edits(&[EditOp::SetGenstamp(3)])?;
//! nn1.transition_to_active(&[DatanodeId(1)])?;
//! nn0.transition_to_standby();
//! assert_eq!(nn1.namesystem().ha_state(), HaState::Active);
//! assert_eq!(nn1.namesystem().generation_stamp(), 3);
//! assert!(nn0.log_edits(&[EditOp::SetGenstamp(4)]).is_err(), "the old active is fenced");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # });
//! ```

use super::edit_log::{EditLogError, NameNodeId, SharedEditLog, TxId};
use super::edit_tailer::{EditLogTailer, TailError};
use super::namesystem::{EditOp, HaState, NamenodeConfig, NamesystemApi, NamesystemFactory};
use super::pending_messages::ReportedState;
use super::{Block, DatanodeId, GenerationStamp, ReplicaState, StorageId};
use crate::sync::Arc;

/// What a NameNode answers a datanode's heartbeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatResponse {
    /// The NameNode's HA state: a datanode obeys only the one it believes active.
    pub ha_state: HaState,
    /// Replicas to delete (`DNA_INVALIDATE`), by storage, with the generation stamp to
    /// delete (a replica of another GS is left alone, HDFS-3157).
    pub deletions: Vec<(StorageId, Block)>,
}

/// The datanode-to-NameNode protocol as the NameNode serves it
/// (`DatanodeProtocol`): what datanodes, real or simulated, call on both NameNodes.
pub trait DatanodeProtocol: Send + Sync {
    /// A full block report of one storage.
    fn block_report(&self, storage: StorageId, entries: &[(Block, ReplicaState)]);
    /// One incremental report entry: RECEIVING (RBW), RECEIVED (FINALIZED) or DELETED.
    fn block_received_and_deleted(&self, storage: StorageId, block: Block, state: ReportedState);
    /// A heartbeat: the NameNode's HA state and its commands for the datanode.
    fn heartbeat(&self, datanode: DatanodeId) -> HeartbeatResponse;
}

/// A NameNode of an HA pair, over any implementation of the namesystem boundary
/// ([`NamesystemApi`]; the crate's `Namesystem` unless built with [`NameNode::start`]).
#[derive(Debug)]
pub struct NameNode {
    id: NameNodeId,
    namesystem: Arc<dyn NamesystemApi>,
    tailer: EditLogTailer,
}

impl NameNode {
    /// A NameNode starting as standby, tailing `log` from its start, at most
    /// `max_txns_per_lock` edits per batch.
    pub fn standby(
        id: NameNodeId,
        config: NamenodeConfig,
        initial_gs: GenerationStamp,
        log: Arc<SharedEditLog>,
        max_txns_per_lock: usize,
    ) -> Self {
        let behavior = config.behavior;
        Self::start(
            id,
            HaState::Standby,
            behavior,
            config,
            initial_gs,
            log,
            max_txns_per_lock,
        )
    }

    /// A NameNode starting as active on an empty log: it fences the log.
    pub fn active(
        id: NameNodeId,
        config: NamenodeConfig,
        initial_gs: GenerationStamp,
        log: Arc<SharedEditLog>,
        max_txns_per_lock: usize,
    ) -> Self {
        let behavior = config.behavior;
        Self::start(
            id,
            HaState::Active,
            behavior,
            config,
            initial_gs,
            log,
            max_txns_per_lock,
        )
    }

    /// A NameNode starting in role `ha` over the namesystem `factory` builds with `config`
    /// (named after `id`): as standby it tails `log` from its start, as active it fences
    /// the log first.
    pub fn start(
        id: NameNodeId,
        ha: HaState,
        factory: impl NamesystemFactory,
        config: NamenodeConfig,
        initial_gs: GenerationStamp,
        log: Arc<SharedEditLog>,
        max_txns_per_lock: usize,
    ) -> Self {
        if ha == HaState::Active {
            log.fence(id);
        }
        let namesystem = factory.create(ha, named(config, id), initial_gs);
        let tailer = EditLogTailer::new(log, Arc::clone(&namesystem), 0, max_txns_per_lock);
        if ha == HaState::Active {
            tailer.stop();
        }
        Self {
            id,
            namesystem,
            tailer,
        }
    }

    /// The NameNode's id.
    pub fn id(&self) -> NameNodeId {
        self.id
    }

    /// Its namesystem.
    pub fn namesystem(&self) -> &Arc<dyn NamesystemApi> {
        &self.namesystem
    }

    /// Its tailer (runs while standby).
    pub fn tailer(&self) -> &EditLogTailer {
        &self.tailer
    }

    /// A client operation's edits: applied here and logged, if this NameNode is the
    /// active holding the log's epoch.
    pub fn log_edits(&self, ops: &[EditOp]) -> Result<TxId, EditLogError> {
        self.tailer.log_own_edits(self.id, ops)
    }

    /// Becomes active (`transitionToActive`): fences the log (the old active's
    /// appends are refused from now on), stops the tailer, then in one namesystem
    /// critical section replays the rest of the log with postponing on, turns postponing
    /// off, marks `datanodes` stale and judges every queued report once. An edit that does
    /// not fit fails the transition (HDFS aborts the NameNode then).
    pub fn transition_to_active(&self, datanodes: &[DatanodeId]) -> Result<(), TailError> {
        let position = self.tailer.position();
        self.tailer.fence_log(self.id);
        let remaining = self.tailer.stop_for_catch_up();
        self.namesystem
            .transition_to_active(&remaining, datanodes)
            .map_err(|error| TailError { position, error })
    }

    /// Becomes standby (`transitionToStandby`): the namesystem postpones again and the
    /// tailer resumes after this NameNode's own last edit.
    pub fn transition_to_standby(&self) {
        self.namesystem.transition_to_standby();
        self.tailer.resume();
    }
}

/// `config` with this NameNode's own id (`dfs.ha.namenode.id`).
fn named(config: NamenodeConfig, id: NameNodeId) -> NamenodeConfig {
    NamenodeConfig {
        namenode_id: Some(id),
        ..config
    }
}

impl DatanodeProtocol for NameNode {
    fn block_report(&self, storage: StorageId, entries: &[(Block, ReplicaState)]) {
        self.namesystem.full_report(storage, entries);
    }

    fn block_received_and_deleted(&self, storage: StorageId, block: Block, state: ReportedState) {
        self.namesystem.incremental_report(storage, block, state);
    }

    fn heartbeat(&self, datanode: DatanodeId) -> HeartbeatResponse {
        HeartbeatResponse {
            ha_state: self.namesystem.ha_state(),
            deletions: self.namesystem.take_deletion_commands(datanode),
        }
    }
}
