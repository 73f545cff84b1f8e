//! The HDFS HA standby NameNode's handling of datanode messages that arrive before the
//! edits they depend on (HDFS-2742).
//!
//! - [`namesystem`]: the namespace and block manager under the namesystem lock (edit
//!   replay, per-replica report processing, drains, failover, safe mode, and on the
//!   active corrupt marking and excess deletion), with the per-fix [`namesystem::NamesystemBehavior`].
//! - [`pending_messages`]: the per-block queue of postponed reports
//!   (`PendingDataNodeMessages`).
//! - [`evaluation`]: the corrupt-replica and under-construction decision tables.
//! - [`edit_log`] and [`edit_tailer`]: the shared edit log with epoch fencing and the
//!   standby's `EditLogTailer` (with its production thread).
//! - [`ha`]: a [`ha::NameNode`] of the pair with its HA transitions, and the
//!   [`ha::DatanodeProtocol`] boundary datanodes talk to.
//!
//! `scenarios::standby` wires two NameNodes and simulated datanodes together and checks
//! the invariants the fix must keep: no false corruption, a passive standby, safe-mode
//! counts equal to a recount, a sound queue, complete locations and no block lost.
//!
//! # Protocol events
//!
//! For the [story](crate::story) of a failure, the NameNode emits a `tracing` event at each
//! protocol step, with its node (`nn0`, `nn1`) when it knows it
//! ([`namesystem::NamenodeConfig::namenode_id`]): an edit logged by the active or applied
//! by replay, a report queued, processed or drained, stale queue entries purged, a replica
//! marked corrupt or invalidated, a block completed, the safe-mode counts changed or safe
//! mode left, and each step of a failover (catch-up, transition, the failover drain, the
//! impending generation stamp applied).

pub mod edit_log;
pub mod edit_tailer;
pub mod evaluation;
pub mod ha;
pub mod namesystem;
pub mod pending_messages;

use std::fmt;

use crate::events::EventText;
use crate::hdds::ids::write_id;

/// Identifies a NameNode of the HA pair (`dfs.ha.namenode.id`); shown as `nn0`, `nn1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NameNodeId(pub u32);

impl fmt::Display for NameNodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_id(f, "nn", u64::from(self.0))
    }
}

crate::events::event_id!(NameNodeId, "nn", |id| u64::from(id.0));

/// A position in the shared edit log: the number of edits before it. The edit after
/// position `p` has transaction id `p + 1`, as HDFS numbers transactions from 1.
pub type TxId = u64;

/// Identifies a datanode (`DatanodeID`'s UUID).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DatanodeId(pub u64);

impl fmt::Display for DatanodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_id(f, "dn", self.0)
    }
}

crate::events::event_id!(DatanodeId, "dn", |id| id.0);

/// A block id. Blocks are identified by id alone (`Block.equals` compares ids): two
/// reports of the same id with different generation stamps are the same block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlockId(pub i64);

impl fmt::Display for BlockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match u64::try_from(self.0) {
            Ok(id) => write_id(f, "blk_", id),
            Err(_) => write!(f, "blk_{}", self.0),
        }
    }
}

/// A generation stamp.
pub type GenerationStamp = i64;

/// One storage (volume) of a datanode; reports are per storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StorageId {
    /// The datanode.
    pub datanode: DatanodeId,
    /// The storage's index on the datanode.
    pub index: u32,
}

/// A block with a generation stamp and a length: in a report, the replica's own; in an
/// edit, what the active logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Block {
    /// The block.
    pub id: BlockId,
    /// The generation stamp.
    pub gs: GenerationStamp,
    /// The length in bytes.
    pub length: u64,
}

impl fmt::Display for Block {
    /// `blk_<id>_<genstamp>`, as HDFS prints a block.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.id, self.gs)
    }
}

/// Replica states a datanode reports (`HdfsServerConstants.ReplicaState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplicaState {
    /// Write finished, length fixed.
    Finalized,
    /// Being written, in an open pipeline.
    Rbw,
    /// Waiting for recovery (an RBW replica found after a datanode restart).
    Rwr,
    /// Under recovery (never reported normally: an invalid state).
    Rur,
    /// A replication target in progress (never reported normally: an invalid state).
    Temporary,
}

impl fmt::Display for ReplicaState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

impl EventText for ReplicaState {
    fn text(&self) -> &'static str {
        match self {
            ReplicaState::Finalized => "FINALIZED",
            ReplicaState::Rbw => "RBW",
            ReplicaState::Rwr => "RWR",
            ReplicaState::Rur => "RUR",
            ReplicaState::Temporary => "TEMPORARY",
        }
    }
}
