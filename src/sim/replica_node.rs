//! A simulated datanode's replica of one container ([`ReplicaNode`]): a real
//! `KeyValueHandler` over a store set up with blocks written as a client writes them, with
//! the operations the container scenarios and tests drive (delete transactions, deleting
//! passes, reconciliation with other nodes, scans) and what they look at afterwards.
//!
//! Errors are the component's [`ContainerError`]s: judging a run is the scenarios' work.
//!
//! ```
//! # hadoop_ref::sync::run_example(|| {
//! use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig};
//! use hadoop_ref::hdds::container::ContainerState;
//! use hadoop_ref::hdds::ids::DatanodeId;
//! use hadoop_ref::sim::replica_node::{ReplicaNode, transaction};
//!
//! let config = ContainerConfig::new(ContainerBehavior::Hardened);
//! let qc = ContainerState::QuasiClosed;
//! let dn1 = ReplicaNode::new(DatanodeId(1), config, qc, &[])?;
//! let dn2 = ReplicaNode::new(DatanodeId(2), config, qc, &[(1, 2)])?;
//! dn1.reconcile(&[&dn2])?;
//! assert!(dn1.has_metadata(1) && dn1.has_file(1));
//! dn1.store_transactions(&[transaction(1, &[1])])?;
//! dn1.delete_blocks()?;
//! assert_eq!(dn1.tree_entry_deleted(1)?, Some(true));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # });
//! ```

use crate::datanode::container::handler::KeyValueHandler;
use crate::datanode::container::reconcile::PeerDatanode;
use crate::datanode::container::replica::KeyValueContainer;
use crate::datanode::container::scanner::ScanReport;
use crate::datanode::container::store::{
    BYTES_PER_CHECKSUM, BlockData, ChunkInfo, ContainerStore, MemoryStore, MetadataBatch,
    StoreError,
};
use crate::datanode::container::{ContainerConfig, ContainerError};
use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, DatanodeId, LocalId};
use crate::sim::peers::InProcessPeer;
use crate::sync::Arc;

mod api;

/// The container every [`ReplicaNode`] holds a replica of.
pub const CONTAINER: ContainerId = ContainerId(1);

/// Bytes per chunk of the blocks [`write_block`] writes (several checksum windows each).
pub const CHUNK_LEN_BYTES: usize = 8;

/// The bytes of chunk `index` of `block`: distinct per block and chunk.
pub fn chunk_bytes(block: LocalId, index: usize) -> Vec<u8> {
    (0..CHUNK_LEN_BYTES)
        .map(|i| (block as u8).wrapping_mul(31) ^ (index as u8).wrapping_mul(7) ^ i as u8)
        .collect()
}

/// The metadata of `block` with `chunks` chunks of [`chunk_bytes`].
pub fn block_data(block: LocalId, chunks: usize) -> BlockData {
    BlockData::new(
        block,
        (0..chunks).map(|i| {
            ChunkInfo::for_data(
                (i * CHUNK_LEN_BYTES) as u64,
                &chunk_bytes(block, i),
                BYTES_PER_CHECKSUM,
            )
        }),
    )
}

/// A simulated datanode holding a replica of [`CONTAINER`]: its handler (`KeyValueHandler`)
/// and a handle on the replica's storage.
#[derive(Debug, Clone)]
pub struct ReplicaNode {
    /// The datanode's replicas.
    pub handler: Arc<KeyValueHandler>,
    /// Its storage of [`CONTAINER`].
    pub store: Arc<dyn ContainerStore>,
    memory: Option<MemoryStore>,
}

/// Makes the storage of a datanode's replica in a given state: in memory for the
/// checkers, on disk for the integration tests.
pub type StoreFactory<'a> =
    dyn FnMut(DatanodeId, ContainerState) -> Result<Arc<dyn ContainerStore>, ContainerError> + 'a;

/// The factory of in-memory stores.
pub fn memory_stores(
    _datanode: DatanodeId,
    state: ContainerState,
) -> Result<Arc<dyn ContainerStore>, ContainerError> {
    Ok(MemoryStore::new(state).shared())
}

impl ReplicaNode {
    /// A datanode holding a replica of [`CONTAINER`] in memory, in `state`, with `blocks`
    /// (id, chunk count) written as a client would have written them before the close,
    /// and its tree built from metadata (as a quasi-close does).
    pub fn new(
        datanode: DatanodeId,
        config: ContainerConfig,
        state: ContainerState,
        blocks: &[(LocalId, usize)],
    ) -> Result<Self, ContainerError> {
        let memory = MemoryStore::new(state);
        let mut node = Self::with_store(datanode, config, memory.shared(), blocks)?;
        node.memory = Some(memory);
        Ok(node)
    }

    /// As [`ReplicaNode::new`], over `store` (whose persisted state is the replica's).
    pub fn with_store(
        datanode: DatanodeId,
        config: ContainerConfig,
        store: Arc<dyn ContainerStore>,
        blocks: &[(LocalId, usize)],
    ) -> Result<Self, ContainerError> {
        for &(block, chunks) in blocks {
            write_block(&*store, block, chunks).map_err(ContainerError::store(CONTAINER))?;
        }
        let handler = Arc::new(KeyValueHandler::new(datanode, config));
        let container = handler.add_container(CONTAINER, Arc::clone(&store))?;
        container.update_checksum_from_metadata()?;
        Ok(Self {
            handler,
            store,
            memory: None,
        })
    }

    /// A datanode restarted over `store`, which holds the replica as the last run left it:
    /// the replica is loaded, nothing is written.
    pub fn reopened(
        datanode: DatanodeId,
        config: ContainerConfig,
        store: Arc<dyn ContainerStore>,
    ) -> Result<Self, ContainerError> {
        let handler = Arc::new(KeyValueHandler::new(datanode, config));
        handler.add_container(CONTAINER, Arc::clone(&store))?;
        Ok(Self {
            handler,
            store,
            memory: None,
        })
    }

    /// As [`ReplicaNode::with_store`], with a store from `stores`.
    pub fn from_factory(
        stores: &mut StoreFactory<'_>,
        datanode: DatanodeId,
        config: ContainerConfig,
        state: ContainerState,
        blocks: &[(LocalId, usize)],
    ) -> Result<Self, ContainerError> {
        let store = stores(datanode, state)?;
        Self::with_store(datanode, config, store, blocks)
    }

    /// The in-memory store, to inspect or corrupt it; `None` for another store.
    pub fn memory(&self) -> Option<&MemoryStore> {
        self.memory.as_ref()
    }

    /// The datanode's id.
    pub fn id(&self) -> DatanodeId {
        self.handler.datanode()
    }

    /// Its replica of [`CONTAINER`].
    pub fn container(&self) -> Result<Arc<KeyValueContainer>, ContainerError> {
        self.handler.container(CONTAINER)
    }

    /// The datanode as a peer of reconciliation.
    pub fn peer(&self) -> Arc<dyn PeerDatanode> {
        InProcessPeer::shared(&self.handler)
    }

    /// Stores the delete transactions (the delete-blocks command).
    pub fn store_transactions(
        &self,
        txs: &[DeletedBlocksTransaction],
    ) -> Result<(), ContainerError> {
        self.handler
            .handle_delete_blocks(txs)
            .into_iter()
            .find_map(Result::err)
            .map_or(Ok(()), Err)
    }

    /// One run of the block deleting service.
    pub fn delete_blocks(&self) -> Result<(), ContainerError> {
        for (_, result) in self.handler.run_block_deleting_service() {
            result?;
        }
        Ok(())
    }

    /// Reconciliation with `peers`, then the scan it triggers.
    pub fn reconcile(&self, peers: &[&ReplicaNode]) -> Result<Option<ScanReport>, ContainerError> {
        let peers: Vec<Arc<dyn PeerDatanode>> = peers.iter().map(|p| p.peer()).collect();
        let (result, scan) = self.handler.reconcile_with(CONTAINER, &peers);
        result?;
        scan.transpose()
    }

    /// Whether the replica has metadata for `block`.
    pub fn has_metadata(&self, block: LocalId) -> bool {
        matches!(self.store.get_block(block), Ok(Some(_)))
    }

    /// Whether the replica has a file for `block`.
    pub fn has_file(&self, block: LocalId) -> bool {
        matches!(self.store.block_file_len(block), Ok(Some(_)))
    }

    /// The tree entry of `block`: `None` if absent, else whether it is deleted.
    pub fn tree_entry_deleted(&self, block: LocalId) -> Result<Option<bool>, ContainerError> {
        let info = self.container()?.checksums().read()?;
        Ok(info.tree.block(block).map(|b| b.deleted))
    }

    /// Delete transactions pending here.
    pub fn pending_transactions(&self) -> u64 {
        self.store.summary().map_or(0, |s| s.pending_transactions)
    }
}

/// Writes `block` with `chunks` chunks into `store` as the client path does on an open
/// container: chunk files, finish, then the metadata.
pub fn write_block(
    store: &dyn ContainerStore,
    block: LocalId,
    chunks: usize,
) -> Result<(), StoreError> {
    let data = block_data(block, chunks);
    for (i, chunk) in data.chunks.iter().enumerate() {
        store.write_chunk(block, chunk.offset, &chunk_bytes(block, i))?;
    }
    if chunks > 0 {
        store.finish_write(block)?;
    }
    store.commit(MetadataBatch {
        put_blocks: vec![data],
        ..MetadataBatch::default()
    })
}

/// The transaction deleting `blocks` of [`CONTAINER`].
pub fn transaction(tx_id: u64, blocks: &[LocalId]) -> DeletedBlocksTransaction {
    DeletedBlocksTransaction {
        tx_id,
        container: CONTAINER,
        local_ids: blocks.to_vec(),
    }
}
