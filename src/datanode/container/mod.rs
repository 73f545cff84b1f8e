//! A datanode's container replicas: block metadata and files, the checksum tree, block
//! deletion, reconciliation with peers and the on-demand scanner (HDDS-16811, HDDS-16808).
//!
//! **The race (HDDS-16811).** The block deleting service deletes a block under the
//! container write lock while reconciliation copies the same block from a peer with no
//! lock: the block is restored, or its metadata is committed without its file.
//! **The fix.** The deleting service records every block of a transaction as deleted in
//! the tree, metadata or not; reconciliation finishes its chunk writes, then commits under
//! the read lock only if the tree does not mark the block deleted.
//!
//! - [`merkle`]: the checksum tree, its diff and the tree file encoding.
//! - [`store`]: the storage trait and its in-memory implementation; [`disk`] keeps a
//!   replica in a directory.
//! - [`replica`]: `KeyValueContainer` (state, lock, data checksum) and the tree file
//!   manager.
//! - [`deletion`]: delete transactions and the block deleting service.
//! - [`reconcile`]: reconciliation and the [`PeerDatanode`](reconcile::PeerDatanode) boundary.
//! - [`scanner`]: the on-demand scanner.
//! - [`handler`]: the replicas of one datanode (`KeyValueHandler`) and an in-process peer.
//!
//! # Example
//!
//! A replica that never had block 1 executes its deletion, then reconciles with a peer
//! that has not deleted it yet: the fixed code does not copy it back.
//!
//! ```
//! use hadoop_ref::datanode::DatanodeId;
//! use hadoop_ref::datanode::commands::DeletedBlocksTransaction;
//! use hadoop_ref::datanode::container::handler::{InProcessPeer, KeyValueHandler};
//! use hadoop_ref::datanode::container::store::{ChunkInfo, ContainerStore, MemoryStore, MetadataBatch, BlockData};
//! use hadoop_ref::datanode::container::{Behavior, ContainerConfig};
//! use hadoop_ref::datanode::container_set::ContainerState;
//! use hadoop_ref::ids::ContainerId;
//! use hadoop_ref::sync::Arc;
//!
//! let c = ContainerId(1);
//! let config = ContainerConfig::new(Behavior::Fixed);
//! // The peer holds block 1 (one chunk), written before the container was quasi-closed.
//! let peer_store = MemoryStore::new(ContainerState::QuasiClosed);
//! peer_store.write_chunk(1, 0, b"data")?;
//! peer_store.finish_write(1)?;
//! peer_store.commit(MetadataBatch {
//!     put_blocks: vec![BlockData::new(1, [ChunkInfo::for_data(0, b"data", 4)])],
//!     ..MetadataBatch::default()
//! })?;
//! let peer = Arc::new(KeyValueHandler::new(DatanodeId(2), config));
//! peer.add_container(c, peer_store.shared())?;
//!
//! let local_store = MemoryStore::new(ContainerState::QuasiClosed);
//! let local = KeyValueHandler::new(DatanodeId(1), config);
//! local.add_container(c, local_store.shared())?;
//! let tx = DeletedBlocksTransaction { tx_id: 1, container: c, local_ids: vec![1] };
//! local.handle_delete_blocks(&[tx]);
//! local.run_block_deleting_service();
//! let (report, _scan) = local.reconcile_container(c, &[InProcessPeer::shared(&peer)]);
//! assert!(report?.committed().is_empty());
//! assert_eq!(local_store.get_block(1)?, None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod deletion;
pub mod disk;
mod error;
pub mod handler;
pub mod merkle;
pub mod reconcile;
pub mod replica;
pub mod scanner;
pub mod store;

pub use error::{ContainerError, PeerError};

/// Which code the replica runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Behavior {
    /// Both parts of the seed's patch on top of HDDS-16808.
    Fixed,
    /// The unpatched code of the seed: the deleting service records only blocks that had
    /// metadata and leaves the data checksum alone; reconciliation commits with no lock and
    /// finishes its writes after the commit.
    Legacy,
}

impl Behavior {
    /// Every behavior, the fixed one first.
    pub const ALL: [Behavior; 2] = [Behavior::Fixed, Behavior::Legacy];

    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            Behavior::Fixed => "Fixed",
            Behavior::Legacy => "Legacy",
        }
    }
}

/// A datanode's container configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContainerConfig {
    /// Fixed or legacy code.
    pub behavior: Behavior,
    /// Beyond the seed: the commit check re-reads the tree file only when a tree write
    /// happened since the last read (a write counter in the tree manager).
    pub tree_generation_check: bool,
    /// Beyond the seed (HDDS-11765): a block a peer's tree marks deleted while it is live
    /// here is deleted here too.
    pub apply_peer_deletions: bool,
    /// Beyond the seed: the refresh of the data checksum from a new tree root (HDDS-16808)
    /// runs inside the tree write's critical section. Off is Ozone's order
    /// (`updateAndGetContainerChecksum` compares and sets after the tree write returned),
    /// where two concurrent tree writes of one replica — a deleting round and a
    /// reconciliation — can leave the in-memory and persisted value on the older root.
    pub refresh_checksum_in_tree_write: bool,
    /// Block ids one deleting task processes at most
    /// (`hdds.datanode.block.deleting.limit.per.interval`).
    pub block_deleting_limit_per_interval: usize,
}

impl ContainerConfig {
    /// The configuration of `behavior`: the fixed one with the additions beyond the seed
    /// on, the legacy one with them off (as in Ozone).
    pub fn new(behavior: Behavior) -> Self {
        let fixed = behavior == Behavior::Fixed;
        Self {
            behavior,
            tree_generation_check: fixed,
            apply_peer_deletions: fixed,
            refresh_checksum_in_tree_write: fixed,
            block_deleting_limit_per_interval: 20_000,
        }
    }
}

impl Default for ContainerConfig {
    fn default() -> Self {
        Self::new(Behavior::Fixed)
    }
}
