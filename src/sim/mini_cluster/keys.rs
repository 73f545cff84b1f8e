//! What a client and an operator do to the cluster's data: grant, write, close and delete
//! keys, and reconcile a container's replicas.
//!
//! A key's life follows Ozone's: the leader grants a container on a pipeline with room
//! (`allocateContainer`, which records a pending allocation on each datanode of the
//! pipeline); the client's first write creates each replica, which reserves the whole
//! container size on its volume while it is OPEN; the leader closes the container; a
//! deleted key's blocks go into the leader's deleted-block log. One key per container.

use std::collections::BTreeMap;

use super::cluster::{ClusterError, Key, MiniOzoneCluster};
use crate::datanode::DatanodeError;
use crate::datanode::container::{ContainerController, ContainerError};
use crate::hdds::ids::{ContainerId, DatanodeId, LocalId};
use crate::hdds::report::StorageReport;
use crate::scm::ScmError;
use crate::sim::replica_node::write_block;
use crate::sync::atomic::Ordering;

impl MiniOzoneCluster {
    /// Grants a key of `blocks` blocks (`OzoneBucket.createKey` asking the SCM for a
    /// block): the leader allocates a container on a pipeline with room, judged by the
    /// datanodes' node reports and its pending allocations. Nothing is written yet.
    pub fn open_key(&self, blocks: usize) -> Result<Key, ClusterError> {
        let leader = self.leader()?;
        let container = leader.allocate_container()?;
        let info = leader
            .container(container)
            .ok_or(ScmError::UnknownContainer { container })?;
        let datanodes = self
            .config
            .pipelines
            .iter()
            .find(|p| p.id == info.pipeline)
            .ok_or(ScmError::UnknownContainer { container })?
            .nodes
            .clone();
        let first = self.next_block.fetch_add(blocks as u64, Ordering::Relaxed);
        Ok(Key {
            container,
            datanodes,
            blocks: (first..first + blocks as u64).collect(),
        })
    }

    /// Grants one container and `count` keys of `blocks` blocks each in it (at least
    /// one key): what the seed's reproductions start from, a container whose replicas
    /// keep the other keys' blocks when one key is deleted, so they never report empty.
    pub fn open_keys(&self, count: usize, blocks: usize) -> Result<Vec<Key>, ClusterError> {
        let first = self.open_key(blocks)?;
        let mut keys = vec![first.clone()];
        for _ in 1..count {
            let start = self.next_block.fetch_add(blocks as u64, Ordering::Relaxed);
            keys.push(Key {
                blocks: (start..start + blocks as u64).collect(),
                ..first.clone()
            });
        }
        Ok(keys)
    }

    /// The client writes `key` to every datanode of its pipeline: each creates its
    /// replica, OPEN, if it has none, with every block written and committed.
    pub fn write_blocks(&self, key: &Key) -> Result<(), ClusterError> {
        for &datanode in &key.datanodes {
            self.write_replica(key, datanode, &key.blocks)?;
        }
        Ok(())
    }

    /// Writes `key` to every datanode of its pipeline, but the replica on `lagging` gets
    /// every block except the last: a pipeline write that failed on it, as reconciliation
    /// exists to repair.
    pub fn write_blocks_lagging(&self, key: &Key, lagging: DatanodeId) -> Result<(), ClusterError> {
        let all_but_last = key.blocks.len().saturating_sub(1);
        for &datanode in &key.datanodes {
            let blocks = if datanode == lagging {
                &key.blocks[..all_but_last]
            } else {
                &key.blocks[..]
            };
            self.write_replica(key, datanode, blocks)?;
        }
        Ok(())
    }

    /// The client's write of `blocks` of `key` reaching `datanode` only: its replica is
    /// created, OPEN and empty, in the datanode's volume unless it is there already (a
    /// second key of the container), then those blocks are written and committed to it. A replica written with
    /// fewer blocks than the key's lags behind its peers, as one does after a failed
    /// pipeline write; reconciliation repairs it.
    pub fn write_replica(
        &self,
        key: &Key,
        datanode: DatanodeId,
        blocks: &[LocalId],
    ) -> Result<(), ClusterError> {
        let index = self.datanode_index(datanode)?;
        let container = key.container;
        let _process = self.processes[index].read();
        let replicas = self.datanodes[index].replicas();
        let replica = match replicas.container(container) {
            Ok(replica) => replica,
            Err(_) => replicas
                .create_container(container)
                .map_err(DatanodeError::from)?,
        };
        for &block in blocks {
            write_block(replica.store().as_ref(), block, 1)
                .map_err(|e| DatanodeError::from(ContainerError::store(container)(e)))?;
        }
        Ok(())
    }

    /// The leader closes `key`'s container (`CloseContainerEventHandler`): CLOSING in
    /// every SCM's table, and a close command to each datanode of the pipeline; the
    /// replicas' reports then make it CLOSED (or QUASI_CLOSED, for replicas whose datanode
    /// left the pipeline).
    pub fn close_key(&self, key: &Key) -> Result<(), ClusterError> {
        Ok(self.leader()?.close_container(key.container)?)
    }

    /// Writes a whole key of `blocks` blocks: [`open_key`](Self::open_key),
    /// [`write_blocks`](Self::write_blocks), [`close_key`](Self::close_key) (the
    /// container is closed as full: one key per container keeps replicas whole).
    pub fn write_key(&self, blocks: usize) -> Result<Key, ClusterError> {
        let key = self.open_key(blocks)?;
        self.write_blocks(&key)?;
        self.close_key(&key)?;
        Ok(key)
    }

    /// Deletes a key (`OzoneBucket.deleteKey` reaching `SCMBlockProtocolServer`): its
    /// blocks go into the leader's deleted-block log. Returns the transaction ids.
    pub fn delete_key(&self, key: &Key) -> Result<Vec<u64>, ClusterError> {
        let blocks = BTreeMap::from([(key.container, key.blocks.clone())]);
        Ok(self.leader()?.add_delete_transactions(&blocks)?)
    }

    /// An operator's `ozone admin container reconcile`: the leader tells each datanode
    /// that reported a replica of `container` to reconcile it with the others. Returns the
    /// commands queued.
    pub fn reconcile(&self, container: ContainerId) -> Result<usize, ClusterError> {
        Ok(self.leader()?.reconcile_container(container)?)
    }

    /// The leader sends the datanode at `target` a replicate command for `container`, its
    /// holders as sources, as the under-replication handler or a balancer's move would
    /// ([`StorageContainerManager::replicate_container`]); the copy is made when the
    /// datanode runs the command. How a container gets more replicas than its factor.
    ///
    /// [`StorageContainerManager::replicate_container`]: crate::scm::StorageContainerManager::replicate_container
    pub fn replicate(&self, container: ContainerId, target: usize) -> Result<(), ClusterError> {
        let target = self.datanode(target)?.id();
        self.leader()?.replicate_container(container, target)?;
        Ok(())
    }

    /// A full repair round of `container` on the calling thread, no SCM involved: each
    /// datanode holding a replica reconciles it with every other holder
    /// ([`reconcile_on`](Self::reconcile_on)), in turn. What a checker runs at quiescence
    /// to see whether repair brings anything back. Returns the reconciliations that failed
    /// (every peer cut off, a replica not closed): the round goes on past them, as the
    /// datanodes would.
    pub fn repair_round(&self, container: ContainerId) -> Result<usize, ClusterError> {
        let mut failed = 0;
        for index in 0..self.datanodes.len() {
            if self.datanodes[index]
                .replicas()
                .container(container)
                .is_ok()
                && self.reconcile_on(index, container).is_err()
            {
                failed += 1;
            }
        }
        Ok(failed)
    }

    /// The datanode at `index` reconciles its replica of `container` with every other
    /// datanode holding one, on the calling thread: what its reconcile command handler
    /// runs on its own executor (`ReconcileContainerCommandHandler`).
    pub fn reconcile_on(&self, index: usize, container: ContainerId) -> Result<(), ClusterError> {
        let id = self.datanode(index)?.id();
        let others: Vec<DatanodeId> = self
            .datanodes
            .iter()
            .filter(|dn| dn.id() != id && dn.replicas().container(container).is_ok())
            .map(|dn| dn.id())
            .collect();
        self.datanodes[index]
            .replicas()
            .reconcile_container(container, &others)
            .map_err(|e| ClusterError::Datanode(DatanodeError::from(e)))
    }

    /// Cuts (`up` false) or heals the link between the datanodes at `a` and `b`:
    /// reconciliation between them fails while it is cut.
    pub fn set_peer_link(&self, a: usize, b: usize, up: bool) -> Result<(), ClusterError> {
        let (a, b) = (self.datanode(a)?.id(), self.datanode(b)?.id());
        if up {
            self.peers.heal_link(a, b);
        } else {
            self.peers.cut(a, b);
        }
        Ok(())
    }

    /// The node report the datanode at `index` sends next: its volume's space with its
    /// replicas as they are now.
    pub fn node_report(&self, index: usize) -> Result<Vec<StorageReport>, ClusterError> {
        Ok(self
            .datanode(index)?
            .reports()
            .node_report()
            .unwrap_or_default())
    }
}
