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
//! - [`config`]: the replica's behavior (the seed's patch, the hardened code or the legacy
//!   code) and the switch of each addition of this crate; [`error`]: what a replica and
//!   its peers refuse.
//! - [`merkle`]: the checksum tree, its diff and the tree file encoding.
//! - [`store`]: the storage trait and its in-memory implementation; [`disk`] keeps a
//!   replica in a directory; [`volume`] holds a datanode's replicas (memory or disk),
//!   with staged imports and durable removals.
//! - [`replica`]: `KeyValueContainer` (state, lock, data checksum) and the tree file
//!   manager.
//! - [`deletion`]: delete transactions and the block deleting service.
//! - [`reconcile`]: reconciliation and the [`PeerDatanode`](reconcile::PeerDatanode) and
//!   [`PeerDirectory`](reconcile::PeerDirectory) boundaries.
//! - [`scanner`]: the on-demand scanner.
//! - [`handler`]: the replicas of one datanode (`KeyValueHandler`): deletion, reconciliation,
//!   scans and what it serves to peers; [`replica_set`]: loading, adding, deleting and
//!   importing whole replicas.
//! - [`controller`]: the `ContainerController` the SCM commands run through.
//! - [`contract`]: the replica's repair/deletion boundary ([`KeyValueContainerApi`]), which
//!   another implementation fits to be held to HDDS-16811's fix by the conformance kit.
//!
//! # Example
//!
//! A replica that never had block 1 executes its deletion, then reconciles with a peer
//! that has not deleted it yet: the patched code (here the seed's patch alone) does not
//! copy it back.
//!
//! ```
//! # hadoop_ref::sync::run_example(|| {
//! use hadoop_ref::datanode::container::handler::KeyValueHandler;
//! use hadoop_ref::datanode::container::store::{
//!     BlockData, ChunkInfo, ContainerStore, MemoryStore, MetadataBatch,
//! };
//! use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig};
//! use hadoop_ref::hdds::command::DeletedBlocksTransaction;
//! use hadoop_ref::hdds::container::ContainerState;
//! use hadoop_ref::hdds::ids::{ContainerId, DatanodeId};
//! use hadoop_ref::sim::peers::InProcessPeer;
//! use hadoop_ref::sync::Arc;
//!
//! let c = ContainerId(1);
//! let config = ContainerConfig::new(ContainerBehavior::SeedPatch);
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
//! let (report, _scan) = local.reconcile_with(c, &[InProcessPeer::shared(&peer)]);
//! assert!(report?.committed().is_empty());
//! assert_eq!(local_store.get_block(1)?, None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # });
//! ```

pub mod checksum_tree;
pub mod config;
pub mod contract;
pub mod controller;
pub mod deletion;
pub mod disk;
pub mod error;
pub mod handler;
pub mod merkle;
mod peer_deletion;
pub mod reconcile;
pub mod replica;
pub mod replica_set;
pub mod scanner;
pub mod store;
pub mod volume;

pub use config::{ContainerBehavior, ContainerConfig, ScanRecheck};
pub use contract::{KeyValueContainerApi, ReplicaFactory, ScanFindings, TreeEntry};
pub use controller::ContainerController;
pub use error::{ContainerError, PeerError};
