//! The part of the SCM's `ReplicationManager` that deletes containers. A CLOSED container
//! whose replicas all report no block, with no delete transaction left for it, goes
//! DELETING through the log and each holder is told to delete its replica, not forced
//! (`EmptyContainerHandler`); a DELETING container is told again while replicas are
//! reported, and goes DELETED once none is (`DeletingContainerHandler`).
//!
//! Where the seeds meet: the delete is not forced, so a datanode refuses it for a replica
//! that holds blocks again (HDDS-16811's repair), and it carries the leader's term, so a
//! deposed leader's delete is dropped (HDDS-17268).

use std::collections::BTreeSet;

use super::super::container_info::LifeCycleState;
use super::super::error::ScmError;
use super::super::ha::LogEntry;
use super::{ContainerTable, StorageContainerManager};
use crate::hdds::command::CommandKind;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, DatanodeId};

/// What one run found to do.
#[derive(Debug, Default)]
struct Deletions {
    /// CLOSED, every replica empty: to DELETING, and a delete to each holder.
    empty: Vec<(ContainerId, BTreeSet<DatanodeId>)>,
    /// DELETING with replicas still reported: the delete again to each.
    deleting: Vec<(ContainerId, BTreeSet<DatanodeId>)>,
    /// DELETING with no replica reported: to DELETED.
    gone: Vec<ContainerId>,
}

impl StorageContainerManager {
    /// The container deletion handlers, when this SCM serves. A state change the log
    /// refuses (this SCM deposed meanwhile) is left for the next run. Returns the delete
    /// commands queued.
    pub(super) fn delete_empty_containers(&self) -> Result<usize, ScmError> {
        if !self.context().is_serving() {
            return Ok(0);
        }
        let found = self.find_deletions(&self.table.read());
        let mut queued = 0;
        for (container, holders) in found.empty {
            if self.update_state(container, LifeCycleState::Deleting) {
                queued += self.send_deletes(container, &holders)?;
            }
        }
        for (container, holders) in found.deleting {
            queued += self.send_deletes(container, &holders)?;
        }
        for container in found.gone {
            self.update_state(container, LifeCycleState::Deleted);
        }
        Ok(queued)
    }

    fn find_deletions(&self, table: &ContainerTable) -> Deletions {
        let mut found = Deletions::default();
        for (&id, info) in &table.applied.containers {
            let holders = table.holders(id);
            match info.state {
                LifeCycleState::Closed if self.is_empty_everywhere(table, id) => {
                    found.empty.push((id, holders));
                }
                LifeCycleState::Deleting if holders.is_empty() => found.gone.push(id),
                LifeCycleState::Deleting => found.deleting.push((id, holders)),
                _ => {}
            }
        }
        found
    }

    /// Every datanode of the container's pipeline reported its replica CLOSED with no
    /// block, and no delete transaction of the container is left in the log.
    fn is_empty_everywhere(&self, table: &ContainerTable, container: ContainerId) -> bool {
        let Some(info) = table.applied.containers.get(&container) else {
            return false;
        };
        let expected = self.expected_replicas(info);
        let Some(replicas) = table.replicas.get(&container) else {
            return false;
        };
        replicas.len() >= expected
            && replicas
                .values()
                .all(|r| r.state == ContainerState::Closed && r.block_count == 0)
            && !table
                .applied
                .deleted_blocks
                .values()
                .any(|tx| tx.container == container)
    }

    /// The container's new state through the log; false when the log refused it.
    fn update_state(&self, container: ContainerId, state: LifeCycleState) -> bool {
        let term = self.context().term;
        let entry = LogEntry::UpdateContainerState(container, state);
        match self.log.submit(self.id, term, entry) {
            Ok(_) => {
                self.catch_up();
                tracing::debug!(
                    node = %self.id,
                    container = %container,
                    state = ?state,
                    "container state updated"
                );
                true
            }
            Err(reason) => {
                tracing::debug!(
                    node = %self.id,
                    container = %container,
                    ?reason,
                    "container state not updated"
                );
                false
            }
        }
    }

    /// A non-forced delete of `container` to each of `holders` without one queued here.
    fn send_deletes(
        &self,
        container: ContainerId,
        holders: &BTreeSet<DatanodeId>,
    ) -> Result<usize, ScmError> {
        let delete = CommandKind::DeleteContainer {
            container,
            force: false,
        };
        let mut queued = 0;
        for &datanode in holders {
            if !self.commands.contains(datanode, &delete) {
                self.send_command(datanode, delete.clone())?;
                queued += 1;
            }
        }
        Ok(queued)
    }
}
