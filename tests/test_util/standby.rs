//! Helpers of the HA standby tests (HDFS-2742): one file with one block, storages, a
//! standby namesystem, the edits that create a file and the report of a finished replica.

use hadoop_ref::namenode::namesystem::{
    EditOp, FileId, NamenodeConfig, Namesystem, NamesystemApi, NamesystemBehavior,
};
use hadoop_ref::namenode::pending_messages::ReportedState;
use hadoop_ref::namenode::{Block, BlockId, DatanodeId, ReplicaState, StorageId};
use hadoop_ref::scenarios::standby::BLOCK_LENGTH;
use hadoop_ref::sim::hdfs_datanode::storage_of;

/// The file of the tests.
pub const FILE: FileId = FileId(1);
/// The block of the tests.
pub const B: BlockId = BlockId(100);
/// The length of a finished block.
pub const LEN: u64 = BLOCK_LENGTH;

/// The single storage of datanode `dn`.
pub fn storage(dn: u64) -> StorageId {
    storage_of(DatanodeId(dn))
}

/// Block `id` at generation stamp `gs` with `length` bytes.
pub fn block(id: BlockId, gs: i64, length: u64) -> Block {
    Block { id, gs, length }
}

/// A standby namesystem running `behavior`, its generation stamp at `gs`.
pub fn standby(behavior: NamesystemBehavior, gs: i64) -> Namesystem {
    Namesystem::standby(
        NamenodeConfig {
            behavior,
            ..NamenodeConfig::default()
        },
        gs,
    )
}

/// Datanode `dn` reports `b` RECEIVED (FINALIZED) to `ns`.
pub fn received(ns: &dyn NamesystemApi, dn: u64, b: Block) {
    ns.incremental_report(
        storage(dn),
        b,
        ReportedState::Replica(ReplicaState::Finalized),
    );
}

/// The edits that create `FILE` with `replication` and allocate `B` at `gs`.
pub fn open_file(gs: i64, replication: usize) -> Vec<EditOp> {
    vec![
        EditOp::SetGenstamp(gs),
        EditOp::AddFile {
            file: FILE,
            replication,
        },
        EditOp::AddBlock {
            file: FILE,
            penultimate: None,
            last: block(B, gs, 0),
        },
    ]
}

/// `OP_CLOSE` of `FILE` with `B@1` of length `LEN`.
pub fn close_file() -> EditOp {
    EditOp::Close {
        file: FILE,
        blocks: vec![block(B, 1, LEN)],
    }
}

/// The edits that create `FILE` with `replication`, write `B` at GS 1 and close it, as a
/// standby replays them (an active closes only once a replica is reported).
pub fn create_and_close(replication: usize) -> Vec<EditOp> {
    let mut edits = open_file(1, replication);
    edits.push(close_file());
    edits
}
