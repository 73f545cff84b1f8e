//! The replicas a datanode holds, as far as the SCM command handlers see them
//! (`ContainerSet`): state, block count and the stored delete transactions.
//!
//! A force delete of the wrong replica is the harm of HDDS-17268, so deletion follows
//! spec A.7: the container's entry is changed under the set's write lock, and only a force
//! delete removes an OPEN or non-empty replica.

use std::collections::BTreeMap;

use super::commands::DeletedBlocksTransaction;
use super::{ContainerId, DatanodeError, DatanodeId};
use crate::sync::RwLock;

/// Replica states on the datanode (spec C.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContainerState {
    /// Accepting writes.
    Open,
    /// Closing; no new blocks.
    Closing,
    /// Closed without the Ratis quorum.
    QuasiClosed,
    /// Closed.
    Closed,
    /// Failed a scan.
    Unhealthy,
    /// Invalid (not used by the transitions modelled here).
    Invalid,
    /// Deleted.
    Deleted,
    /// Being rebuilt by reconstruction; accepts writes like OPEN.
    Recovering,
}

/// One replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerReplica {
    /// Its state.
    pub state: ContainerState,
    /// Blocks it holds.
    pub block_count: u64,
    /// Delete transactions stored for the block deleting service, by transaction id.
    pub pending_delete_transactions: BTreeMap<u64, Vec<u64>>,
    /// Where it was copied from, if it was replicated here.
    pub replicated_from: Option<DatanodeId>,
}

impl ContainerReplica {
    /// A replica in `state` with `block_count` blocks.
    pub fn new(state: ContainerState, block_count: u64) -> Self {
        Self {
            state,
            block_count,
            pending_delete_transactions: BTreeMap::new(),
            replicated_from: None,
        }
    }
}

/// The replicas of one datanode.
#[derive(Debug, Default)]
pub struct ContainerSet {
    replicas: RwLock<BTreeMap<ContainerId, ContainerReplica>>,
}

impl ContainerSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// A set holding `replicas`; a container named twice is
    /// [`DatanodeError::ContainerExists`].
    pub fn from_replicas(
        replicas: impl IntoIterator<Item = (ContainerId, ContainerReplica)>,
    ) -> Result<Self, DatanodeError> {
        let set = Self::new();
        for (id, replica) in replicas {
            set.add(id, replica)?;
        }
        Ok(set)
    }

    /// Adds a replica; an existing one is [`DatanodeError::ContainerExists`].
    pub fn add(&self, id: ContainerId, replica: ContainerReplica) -> Result<(), DatanodeError> {
        let mut replicas = self.replicas.write();
        if replicas.contains_key(&id) {
            return Err(DatanodeError::ContainerExists { container: id });
        }
        replicas.insert(id, replica);
        Ok(())
    }

    /// A copy of the replica, if present.
    pub fn get(&self, id: ContainerId) -> Option<ContainerReplica> {
        self.replicas.read().get(&id).cloned()
    }

    /// Whether a replica of `id` is here.
    pub fn contains(&self, id: ContainerId) -> bool {
        self.replicas.read().contains_key(&id)
    }

    /// Deletes a replica (`KeyValueHandler.deleteInternal`): without `force`, an OPEN or
    /// non-empty replica is refused.
    pub fn delete(&self, id: ContainerId, force: bool) -> Result<(), DatanodeError> {
        let mut replicas = self.replicas.write();
        let replica = replicas
            .get(&id)
            .ok_or(DatanodeError::UnknownContainer { container: id })?;
        if !force {
            if replica.state == ContainerState::Open {
                return Err(DatanodeError::DeleteOnOpenContainer { container: id });
            }
            if replica.block_count > 0 {
                return Err(DatanodeError::DeleteOnNonEmptyContainer {
                    container: id,
                    blocks: replica.block_count,
                });
            }
        }
        replicas.remove(&id);
        Ok(())
    }

    /// Closes a replica; closing a closed one is a no-op.
    pub fn close(&self, id: ContainerId) -> Result<(), DatanodeError> {
        let mut replicas = self.replicas.write();
        let replica = replicas
            .get_mut(&id)
            .ok_or(DatanodeError::UnknownContainer { container: id })?;
        if matches!(
            replica.state,
            ContainerState::Open | ContainerState::Closing | ContainerState::QuasiClosed
        ) {
            replica.state = ContainerState::Closed;
        }
        Ok(())
    }

    /// Imports a closed copy of a replica from the first of `sources`; a replica already
    /// here is [`DatanodeError::ContainerExists`]. The data copy itself is out of scope:
    /// the command's fencing is what matters here.
    pub fn import_replica(
        &self,
        id: ContainerId,
        sources: &[DatanodeId],
    ) -> Result<(), DatanodeError> {
        let mut replica = ContainerReplica::new(ContainerState::Closed, 0);
        replica.replicated_from = sources.first().copied();
        self.add(id, replica)
    }

    /// Stores delete transactions; a transaction id already stored for the container is
    /// kept as it was (the SCM re-sends until acknowledged). All-or-nothing: an unknown
    /// container refuses the whole command before anything is stored.
    pub fn store_delete_transactions(
        &self,
        transactions: &[DeletedBlocksTransaction],
    ) -> Result<(), DatanodeError> {
        let mut replicas = self.replicas.write();
        if let Some(missing) = transactions
            .iter()
            .find(|tx| !replicas.contains_key(&tx.container))
        {
            return Err(DatanodeError::UnknownContainer {
                container: missing.container,
            });
        }
        for tx in transactions {
            if let Some(replica) = replicas.get_mut(&tx.container) {
                replica
                    .pending_delete_transactions
                    .entry(tx.tx_id)
                    .or_insert_with(|| tx.local_ids.clone());
            }
        }
        Ok(())
    }
}
