//! The replication manager's handlers that close containers and their replicas
//! (`OpenContainerHandler`, `ClosingContainerHandler`, `QuasiClosedContainerHandler`,
//! `MismatchedReplicasHandler`), and the close an SCM starts (`CloseContainerEventHandler`).
//!
//! **The race it opens (HDDS-16811).** A replica whose datanode left the container's Ratis
//! pipeline quasi-closes, and the container goes QUASI_CLOSED from its report. Until
//! replicas of every origin are seen, nothing closes it, and while its replicas are all
//! QUASI_CLOSED it is HEALTHY: the deleted-block log sends its transactions to every
//! replica, the one that lags behind included. **Upstream then force-closes** only the
//! replicas with the highest sequence id, and the lagging one counts as unhealthy.

use super::super::container_info::LifeCycleState;
use super::super::error::ScmError;
use super::super::ha::LogEntry;
use super::StorageContainerManager;
use super::quasi_closed_stuck::can_force_close;
use super::replication_manager::ContainerSnapshot;
use crate::hdds::command::CommandKind;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, DatanodeId};

impl StorageContainerManager {
    /// `CloseContainerEventHandler`: the leader moves an OPEN container to CLOSING
    /// through the log (`FINALIZE`), then, if it is CLOSING, tells each datanode of its
    /// pipeline to close its replica (not forced: a RATIS container). The lease that delays
    /// the commands (`ozone.scm.close.container.wait.duration`, 150 s) is not modelled:
    /// the cluster's client closes a key once its writes are done.
    pub fn close_container(&self, container: ContainerId) -> Result<(), ScmError> {
        if !self.context().is_leader {
            return Err(ScmError::NotLeader { scm: self.id });
        }
        let info = self
            .container(container)
            .ok_or(ScmError::UnknownContainer { container })?;
        if info.state == LifeCycleState::Open {
            let entry = LogEntry::UpdateContainerState(container, LifeCycleState::Closing);
            self.log
                .submit(self.id, self.context().term, entry)
                .map_err(|reason| ScmError::SubmitNotConfirmed { container, reason })?;
            self.catch_up();
            crate::events::debug!(
                node = %self.id,
                container = container.0,
                state = ?LifeCycleState::Closing,
                "container state updated"
            );
        }
        if self.container(container).map(|c| c.state) != Some(LifeCycleState::Closing) {
            return Ok(());
        }
        for datanode in self.pipeline_nodes(&info) {
            let close = CommandKind::CloseContainer {
                container,
                pipeline: info.pipeline,
                force: false,
            };
            self.send_command(datanode, close)?;
        }
        Ok(())
    }

    /// `OpenContainerHandler`: an OPEN container with a replica that is not OPEN is
    /// closed (the pipeline's health is not modelled: every pipeline is healthy).
    pub(super) fn handle_open(&self, container: &ContainerSnapshot) -> Result<usize, ScmError> {
        let mismatched = container
            .replicas
            .values()
            .any(|r| r.state != ContainerState::Open);
        if !mismatched {
            return Ok(0);
        }
        self.close_container(container.info.id)?;
        Ok(self.pipeline_nodes(&container.info).len())
    }

    /// `ClosingContainerHandler`: a close (not forced) to every replica that is not
    /// UNHEALTHY; a container whose replicas are all UNHEALTHY goes QUASI_CLOSED. One with
    /// no replica waits (upstream closes it after five intervals when it has no key).
    pub(super) fn handle_closing(&self, container: &ContainerSnapshot) -> Result<usize, ScmError> {
        let id = container.info.id;
        if container.replicas.is_empty() {
            return Ok(0);
        }
        if container
            .replicas
            .values()
            .all(|r| r.state == ContainerState::Unhealthy)
        {
            let entry = LogEntry::UpdateContainerState(id, LifeCycleState::QuasiClosed);
            self.update_state(id, entry);
            return Ok(0);
        }
        let targets: Vec<DatanodeId> = container
            .replicas
            .iter()
            .filter(|(_, r)| r.state != ContainerState::Unhealthy)
            .map(|(&dn, _)| dn)
            .collect();
        self.send_closes(container, &targets, false)
    }

    /// `QuasiClosedContainerHandler`: once replicas of every origin are seen among the
    /// QUASI_CLOSED and UNHEALTHY ones, and the best QUASI_CLOSED sequence id is not below
    /// an UNHEALTHY one's, a forced close goes to the QUASI_CLOSED replicas with the
    /// highest sequence id. Otherwise the container is stuck in QUASI_CLOSED
    /// (`quasi_closed_stuck`).
    pub(super) fn handle_quasi_closed(
        &self,
        container: &ContainerSnapshot,
    ) -> Result<usize, ScmError> {
        if !can_force_close(container) {
            return Ok(0);
        }
        let replicas = &container.replicas;
        let best = replicas
            .values()
            .filter(|r| r.state == ContainerState::QuasiClosed)
            .map(|r| r.sequence_id)
            .max();
        let targets: Vec<DatanodeId> = replicas
            .iter()
            .filter(|(_, r)| r.state == ContainerState::QuasiClosed && Some(r.sequence_id) == best)
            .map(|(&dn, _)| dn)
            .collect();
        self.send_closes(container, &targets, true)
    }

    /// `MismatchedReplicasHandler`, for a CLOSED or QUASI_CLOSED container: an OPEN or
    /// CLOSING replica is told to close (not forced, so it quasi-closes without its
    /// pipeline); a QUASI_CLOSED replica of a CLOSED container with the container's
    /// sequence id is force-closed.
    pub(super) fn handle_mismatched(
        &self,
        container: &ContainerSnapshot,
    ) -> Result<usize, ScmError> {
        let closed = container.info.state == LifeCycleState::Closed;
        let mut queued = 0;
        for (&datanode, replica) in &container.replicas {
            let force = match replica.state {
                ContainerState::Open | ContainerState::Closing => false,
                ContainerState::QuasiClosed
                    if closed && replica.sequence_id == container.info.sequence_id =>
                {
                    true
                }
                _ => continue,
            };
            queued += self.send_closes(container, &[datanode], force)?;
        }
        Ok(queued)
    }

    /// `sendCloseContainerReplicaCommand` to each of `targets` that has no such close
    /// queued here. Returns the commands queued.
    fn send_closes(
        &self,
        container: &ContainerSnapshot,
        targets: &[DatanodeId],
        force: bool,
    ) -> Result<usize, ScmError> {
        let close = CommandKind::CloseContainer {
            container: container.info.id,
            pipeline: container.info.pipeline,
            force,
        };
        let mut queued = 0;
        for &datanode in targets {
            if self.commands.contains(datanode, &close) {
                continue;
            }
            self.send_datanode_command(container.info.id, datanode, close.clone())?;
            queued += 1;
        }
        Ok(queued)
    }
}
