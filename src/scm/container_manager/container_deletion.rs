//! The part of the SCM's `ReplicationManager` that deletes containers
//! (`EmptyContainerHandler`, `DeletingContainerHandler`), and the replicated state update
//! every handler uses.
//!
//! **The race it meets (HDDS-16811).** "Empty" is each replica's own sticky flag
//! (`isEmpty`, set by its block deleting service once no block is left), not its block
//! count: a replica that got a deleted block back by a repair never becomes empty, and its
//! container is never deleted. **Upstream's rule is kept**: a CLOSED container goes DELETING
//! once every replica reports CLOSED and empty (a QUASI_CLOSED one once every replica
//! reports empty), each replica gets a non-forced delete, and the report handler
//! force-deletes a replica that reports blocks while the container is DELETING.

use super::super::container_info::LifeCycleState;
use super::super::error::ScmError;
use super::super::ha::LogEntry;
use super::StorageContainerManager;
use super::replication_manager::ContainerSnapshot;
use crate::hdds::command::CommandKind;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, DatanodeId};

impl StorageContainerManager {
    /// `EmptyContainerHandler`: a CLOSED container with at least one replica, all CLOSED
    /// and empty, or a QUASI_CLOSED one with at least one replica, all empty, gets a
    /// non-forced delete to each CLOSED or QUASI_CLOSED replica and goes DELETING through
    /// the log (a CLOSED one only if a replica has the container's sequence id; a
    /// QUASI_CLOSED one has its sequence id raised to its best replica's first). `None`
    /// when the container is not empty, so the chain goes on.
    pub(super) fn handle_empty(
        &self,
        container: &ContainerSnapshot,
    ) -> Result<Option<usize>, ScmError> {
        let info = &container.info;
        let replicas = &container.replicas;
        let empty = !replicas.is_empty()
            && match info.state {
                LifeCycleState::Closed => replicas
                    .values()
                    .all(|r| r.state == ContainerState::Closed && r.is_empty),
                LifeCycleState::QuasiClosed => replicas.values().all(|r| r.is_empty),
                _ => false,
            };
        if !empty {
            return Ok(None);
        }
        let targets: Vec<DatanodeId> = replicas
            .iter()
            .filter(|(_, r)| {
                matches!(
                    r.state,
                    ContainerState::Closed | ContainerState::QuasiClosed
                )
            })
            .map(|(&dn, _)| dn)
            .collect();
        let deleting = LogEntry::UpdateContainerState(info.id, LifeCycleState::Deleting);
        if info.state == LifeCycleState::QuasiClosed {
            let best = replicas.values().map(|r| r.sequence_id).max().unwrap_or(0);
            self.raise_container_sequence_id(info.id, best);
            self.update_state(info.id, deleting);
            return self.send_deletes(info.id, &targets).map(Some);
        }
        let queued = self.send_deletes(info.id, &targets)?;
        if replicas.values().any(|r| r.sequence_id == info.sequence_id) {
            self.update_state(info.id, deleting);
        }
        Ok(Some(queued))
    }

    /// `DeletingContainerHandler`: a DELETING container with no replica goes DELETED;
    /// otherwise each empty replica without a pending delete is told again (a replica with
    /// blocks is the report handler's).
    pub(super) fn handle_deleting(&self, container: &ContainerSnapshot) -> Result<usize, ScmError> {
        let id = container.info.id;
        if container.replicas.is_empty() {
            self.update_state(
                id,
                LogEntry::UpdateContainerState(id, LifeCycleState::Deleted),
            );
            return Ok(0);
        }
        let targets: Vec<DatanodeId> = container
            .replicas
            .iter()
            .filter(|&(&dn, r)| r.is_empty && !self.delete_pending(id, dn))
            .map(|(&dn, _)| dn)
            .collect();
        self.send_deletes(id, &targets)
    }

    /// `sendDeleteCommand`, not forced, to each of `targets`. Returns the commands queued.
    fn send_deletes(
        &self,
        container: ContainerId,
        targets: &[DatanodeId],
    ) -> Result<usize, ScmError> {
        let delete = CommandKind::DeleteContainer {
            container,
            force: false,
        };
        for &datanode in targets {
            self.send_datanode_command(container, datanode, delete.clone())?;
        }
        Ok(targets.len())
    }

    /// The container's sequence id raised to at least `sequence_id` (`updateSequenceId`).
    fn raise_container_sequence_id(&self, container: ContainerId, sequence_id: u64) {
        if let Some(info) = self.table.write().applied.containers.get_mut(&container) {
            info.sequence_id = info.sequence_id.max(sequence_id);
        }
    }

    /// A state change of `container` through the log (`entry` is an
    /// `UpdateContainerState` or a `TransitionDeletingOrDeleted`); false when the log
    /// refused it (this SCM deposed meanwhile), which a later run repeats.
    pub(super) fn update_state(&self, container: ContainerId, entry: LogEntry) -> bool {
        let term = self.context().term;
        let state = match &entry {
            LogEntry::UpdateContainerState(_, state)
            | LogEntry::TransitionDeletingOrDeleted(_, state) => *state,
            _ => return false,
        };
        match self.log.submit(self.id, term, entry) {
            Ok(_) => {
                self.catch_up();
                crate::events::debug!(
                    node = %self.id,
                    container = container.0,
                    state = ?state,
                    "container state updated"
                );
                true
            }
            Err(reason) => {
                crate::events::debug!(
                    node = %self.id,
                    container = container.0,
                    ?reason,
                    "container state not updated"
                );
                false
            }
        }
    }
}
