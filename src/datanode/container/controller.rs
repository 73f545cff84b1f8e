//! The replicas as the SCM command handlers see them (`ContainerController`): the
//! [`CommandDispatcher`](crate::datanode::dispatcher::CommandDispatcher) hands every
//! container command to this trait, and [`KeyValueHandler`] implements it over the real
//! [`KeyValueContainer`](super::replica::KeyValueContainer)s.
//!
//! **The race (HDDS-17268).** A command of a deposed SCM leader that gets past the term
//! fences acts on a replica: a force delete removes a healthy replica's data.
//! **The fix** is in the fences (`StateContext` and the dispatcher); here every command
//! acts on the real replica, so what a fence lets through has its real effect, and the
//! fencing scenarios judge the replicas themselves.
//!
//! What each handler does follows Ozone's: a missing replica is an error here where Ozone
//! logs it and returns (`ContainerController.deleteContainer`, `reconcileContainer`), so
//! that the dispatcher's report says what happened.

use std::fmt;

use super::deletion::TransactionStored;
use super::error::ContainerError;
use super::handler::KeyValueHandler;
use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::container::ContainerReplicaReport;
use crate::hdds::ids::{ContainerId, DatanodeId, PipelineId};
use crate::sync::{Arc, arc_from_box};

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
    /// `CloseContainerCommandHandler`: marks an OPEN replica CLOSING, then closes it
    /// through `pipeline` if this datanode is still a member, or when `force`, and
    /// quasi-closes it otherwise; closes a QUASI_CLOSED one only when `force`; leaves the
    /// others as they are.
    fn close_container(
        &self,
        container: ContainerId,
        pipeline: PipelineId,
        force: bool,
    ) -> Result<(), ContainerError>;
    /// `ReplicateContainerCommandHandler`: creates the replica here as a copy of the one on
    /// the first of `sources` that holds a closed replica.
    fn replicate_container(
        &self,
        container: ContainerId,
        sources: &[DatanodeId],
    ) -> Result<(), ContainerError>;
    /// `ReconcileContainerCommandHandler`: reconciles the replica with `peers`, then scans
    /// it. Fails when every peer failed.
    fn reconcile_container(
        &self,
        container: ContainerId,
        peers: &[DatanodeId],
    ) -> Result<(), ContainerError>;
    /// The container report: one entry per replica here, in id order.
    fn container_report(&self) -> Vec<ContainerReplicaReport>;
}

/// `handler` as the controller a dispatcher takes, still shared with the caller.
pub fn shared_controller(handler: &Arc<KeyValueHandler>) -> Arc<dyn ContainerController> {
    arc_from_box(Box::new(Arc::clone(handler)) as Box<dyn ContainerController>)
}

impl ContainerController for KeyValueHandler {
    fn delete_blocks(
        &self,
        transactions: &[DeletedBlocksTransaction],
    ) -> Vec<Result<TransactionStored, ContainerError>> {
        self.handle_delete_blocks(transactions)
    }

    fn delete_container(&self, container: ContainerId, force: bool) -> Result<(), ContainerError> {
        self.delete_replica(container, force)
    }

    fn close_container(
        &self,
        container: ContainerId,
        pipeline: PipelineId,
        force: bool,
    ) -> Result<(), ContainerError> {
        let active = self.is_pipeline_active(pipeline);
        self.container(container)?.close(force, active).map(|_| ())
    }

    fn replicate_container(
        &self,
        container: ContainerId,
        sources: &[DatanodeId],
    ) -> Result<(), ContainerError> {
        self.import_replica(container, sources)
    }

    fn reconcile_container(
        &self,
        container: ContainerId,
        peers: &[DatanodeId],
    ) -> Result<(), ContainerError> {
        let peers = self.resolve_peers(peers)?;
        let (result, _scan) = self.reconcile_with(container, &peers);
        let mut report = result?;
        if report.rounds.is_empty() && !report.peer_failures.is_empty() {
            return Err(report.peer_failures.remove(0).1);
        }
        Ok(())
    }

    fn container_report(&self) -> Vec<ContainerReplicaReport> {
        let replicas: Vec<_> = self
            .containers
            .read(|containers| containers.values().cloned().collect());
        replicas.iter().filter_map(|c| c.report().ok()).collect()
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

    fn close_container(
        &self,
        container: ContainerId,
        pipeline: PipelineId,
        force: bool,
    ) -> Result<(), ContainerError> {
        (**self).close_container(container, pipeline, force)
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
