//! This crate's replica behind the repair/deletion boundary (HDDS-16811): a
//! [`ReplicaNode`] is a [`KeyValueContainerApi`], and every [`ContainerBehavior`] (or a
//! [`ContainerConfig`] of its own) starts one, so the scenarios written over the boundary
//! run on it unchanged.
//!
//! **The race** is the boundary's: a deleting pass and a reconciliation on one block.
//! **The fix** is the replica's behavior; each method here is the call the scenarios made
//! on the handler or the store before the boundary existed, in the same order, so a
//! checker sees the same scheduling points.

use super::{CONTAINER, ReplicaNode};
use crate::datanode::container::reconcile::PeerDatanode;
use crate::datanode::container::scanner::ScanReport;
use crate::datanode::container::store::BlockData;
use crate::datanode::container::{
    ContainerBehavior, ContainerConfig, ContainerError, KeyValueContainerApi, ReplicaFactory,
    ScanFindings, TreeEntry,
};
use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{DatanodeId, LocalId};
use crate::sync::Arc;

fn findings(report: Option<ScanReport>) -> ScanFindings {
    report.map(|r| r.errors.iter().map(|e| e.kind).collect())
}

impl KeyValueContainerApi for ReplicaNode {
    fn datanode(&self) -> DatanodeId {
        self.id()
    }

    fn store_delete_transactions(
        &self,
        transactions: &[DeletedBlocksTransaction],
    ) -> Result<(), ContainerError> {
        self.store_transactions(transactions)
    }

    fn run_block_deleting_pass(&self) -> Result<(), ContainerError> {
        self.delete_blocks()
    }

    fn reconcile_container(
        &self,
        peers: &[Arc<dyn PeerDatanode>],
    ) -> Result<ScanFindings, ContainerError> {
        let (result, scan) = self.handler.reconcile_with(CONTAINER, peers);
        result?;
        Ok(findings(scan.transpose()?))
    }

    fn reconcile_without_scan(
        &self,
        peers: &[Arc<dyn PeerDatanode>],
    ) -> Result<(), ContainerError> {
        self.handler
            .reconcile_without_scan(CONTAINER, peers)
            .map(|_| ())
    }

    fn scan_container(&self) -> Result<ScanFindings, ContainerError> {
        self.handler.scan(CONTAINER).map(findings)
    }

    fn peer(&self) -> Arc<dyn PeerDatanode> {
        ReplicaNode::peer(self)
    }

    fn restart(&self) -> Result<Self, ContainerError> {
        let mut node =
            ReplicaNode::reopened(self.id(), *self.handler.config(), Arc::clone(&self.store))?;
        node.memory = self.memory.clone();
        Ok(node)
    }

    fn block(&self, block: LocalId) -> Result<Option<BlockData>, ContainerError> {
        self.store
            .get_block(block)
            .map_err(ContainerError::store(CONTAINER))
    }

    fn blocks(&self) -> Result<Vec<BlockData>, ContainerError> {
        self.store
            .blocks()
            .map_err(ContainerError::store(CONTAINER))
    }

    fn block_file_len(&self, block: LocalId) -> Result<Option<u64>, ContainerError> {
        self.store
            .block_file_len(block)
            .map_err(ContainerError::store(CONTAINER))
    }

    fn read_block_file(
        &self,
        block: LocalId,
        offset: u64,
        length: u64,
    ) -> Result<Option<Vec<u8>>, ContainerError> {
        self.store
            .read_block(block, offset, length)
            .map_err(ContainerError::store(CONTAINER))
    }

    fn tree_entry(&self, block: LocalId) -> Result<TreeEntry, ContainerError> {
        Ok(match self.tree_entry_deleted(block)? {
            None => TreeEntry::Absent,
            Some(false) => TreeEntry::Live,
            Some(true) => TreeEntry::Deleted,
        })
    }

    fn data_checksum(&self) -> Result<Option<u64>, ContainerError> {
        Ok(self.container()?.checksums().read()?.tree.data_checksum())
    }

    fn state(&self) -> Result<ContainerState, ContainerError> {
        Ok(self.container()?.state())
    }

    fn pending_transactions(&self) -> u64 {
        ReplicaNode::pending_transactions(self)
    }

    fn is_empty(&self) -> Result<bool, ContainerError> {
        Ok(self.container()?.is_empty())
    }
}

/// This crate's replica running the configuration (a [`ReplicaNode`] over a memory store).
impl ReplicaFactory for ContainerConfig {
    type Replica = ReplicaNode;

    fn create(
        &self,
        datanode: DatanodeId,
        state: ContainerState,
        blocks: &[(LocalId, usize)],
    ) -> Result<ReplicaNode, ContainerError> {
        ReplicaNode::new(datanode, *self, state, blocks)
    }
}

/// This crate's replica running the behavior with its own configuration
/// ([`ContainerConfig::new`]).
impl ReplicaFactory for ContainerBehavior {
    type Replica = ReplicaNode;

    fn create(
        &self,
        datanode: DatanodeId,
        state: ContainerState,
        blocks: &[(LocalId, usize)],
    ) -> Result<ReplicaNode, ContainerError> {
        ContainerConfig::new(*self).create(datanode, state, blocks)
    }
}
