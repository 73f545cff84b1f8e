//! The replicas as the SCM command handlers see them (`ContainerController`): the
//! [`CommandDispatcher`](crate::datanode::dispatcher::CommandDispatcher) hands every
//! container command to this trait, and [`KeyValueHandler`] implements it over the real
//! [`KeyValueContainer`](super::replica::KeyValueContainer)s.
//!
//! **Why it matters (HDDS-17268).** The harm of a stale SCM leader's command is what it
//! does to a replica: a force delete removes a healthy replica's data. Every command here
//! acts on the real replica, so the fencing scenarios judge real deletions.
//!
//! Deletion follows `KeyValueHandler.deleteInternal`: under the container's write lock, a
//! non-force delete refuses an OPEN replica (`DELETE_ON_OPEN_CONTAINER`) and one with
//! blocks (`DELETE_ON_NON_EMPTY_CONTAINER`); the replica is marked DELETED, leaves the set,
//! and its storage is removed from the volume.

use std::fmt;

use super::deletion::TransactionStored;
use super::error::ContainerError;
use super::handler::KeyValueHandler;
use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::container::{ContainerReplicaReport, ContainerState};
use crate::hdds::ids::{ContainerId, DatanodeId};
use crate::sync::Arc;

/// The operations SCM commands run on a datanode's replicas (`ContainerController`).
pub trait ContainerController: Send + Sync + fmt::Debug {
    /// `DeleteBlocksCommandHandler`: stores each transaction with its container; each is
    /// acknowledged (or refused) on its own.
    fn delete_blocks(
        &self,
        transactions: &[DeletedBlocksTransaction],
    ) -> Vec<Result<TransactionStored, ContainerError>>;
    /// `DeleteContainerCommandHandler`: deletes a replica; `force` skips the OPEN and
    /// non-empty checks.
    fn delete_container(&self, container: ContainerId, force: bool) -> Result<(), ContainerError>;
    /// `CloseContainerCommandHandler`: closes an OPEN, CLOSING or QUASI_CLOSED replica;
    /// a CLOSED one, or one that cannot close (UNHEALTHY, DELETED), is left as it is.
    fn close_container(&self, container: ContainerId) -> Result<(), ContainerError>;
    /// `ReplicateContainerCommandHandler`: creates the replica here as a copy of the one on
    /// the first of `sources` that answers.
    fn replicate_container(
        &self,
        container: ContainerId,
        sources: &[DatanodeId],
    ) -> Result<(), ContainerError>;
    /// `ReconcileContainerCommandHandler`: reconciles the replica with `peers`, then scans it.
    fn reconcile_container(
        &self,
        container: ContainerId,
        peers: &[DatanodeId],
    ) -> Result<(), ContainerError>;
    /// The container report: one entry per replica here, in id order.
    fn container_report(&self) -> Vec<ContainerReplicaReport>;
}

impl ContainerController for KeyValueHandler {
    fn delete_blocks(
        &self,
        transactions: &[DeletedBlocksTransaction],
    ) -> Vec<Result<TransactionStored, ContainerError>> {
        self.handle_delete_blocks(transactions)
    }

    fn delete_container(&self, container: ContainerId, force: bool) -> Result<(), ContainerError> {
        self.delete_container_replica(container, force)
    }

    fn close_container(&self, container: ContainerId) -> Result<(), ContainerError> {
        let replica = self.container(container)?;
        match replica.state() {
            ContainerState::Open | ContainerState::Recovering => {
                replica.transition(ContainerState::Closing)?;
                replica.transition(ContainerState::Closed)
            }
            ContainerState::Closing | ContainerState::QuasiClosed => {
                replica.transition(ContainerState::Closed)
            }
            ContainerState::Closed
            | ContainerState::Unhealthy
            | ContainerState::Invalid
            | ContainerState::Deleted => Ok(()),
        }
    }

    fn replicate_container(
        &self,
        container: ContainerId,
        sources: &[DatanodeId],
    ) -> Result<(), ContainerError> {
        self.import_container(container, sources)
    }

    fn reconcile_container(
        &self,
        container: ContainerId,
        peers: &[DatanodeId],
    ) -> Result<(), ContainerError> {
        let peers = self.resolve_peers(peers)?;
        let (result, _scan) = KeyValueHandler::reconcile_container(self, container, &peers);
        result.map(|_| ())
    }

    fn container_report(&self) -> Vec<ContainerReplicaReport> {
        self.container_reports()
    }
}

/// A shared controller is a controller: the datanode keeps its handler and gives the
/// dispatcher the same one.
impl<T: ContainerController + ?Sized> ContainerController for Arc<T> {
    fn delete_blocks(
        &self,
        transactions: &[DeletedBlocksTransaction],
    ) -> Vec<Result<TransactionStored, ContainerError>> {
        (**self).delete_blocks(transactions)
    }

    fn delete_container(&self, container: ContainerId, force: bool) -> Result<(), ContainerError> {
        (**self).delete_container(container, force)
    }

    fn close_container(&self, container: ContainerId) -> Result<(), ContainerError> {
        (**self).close_container(container)
    }

    fn replicate_container(
        &self,
        container: ContainerId,
        sources: &[DatanodeId],
    ) -> Result<(), ContainerError> {
        (**self).replicate_container(container, sources)
    }

    fn reconcile_container(
        &self,
        container: ContainerId,
        peers: &[DatanodeId],
    ) -> Result<(), ContainerError> {
        (**self).reconcile_container(container, peers)
    }

    fn container_report(&self) -> Vec<ContainerReplicaReport> {
        (**self).container_report()
    }
}
