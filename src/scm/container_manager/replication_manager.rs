//! The part of the SCM's `ReplicationManager` the cluster needs: a container CLOSED in the
//! table whose replica a datanode still reports OPEN or CLOSING is told again to close
//! (`ClosedWithMismatchedReplicasHandler`). A close command of a deposed leader is dropped
//! by the datanode (HDDS-17268), so the new leader must send its own.
//!
//! Also the reconcile command an operator triggers (`ozone admin container reconcile`,
//! `ReconcileContainerEventHandler`): each datanode that reported a replica is told to
//! reconcile it with the others (HDDS-16811's repair).

use super::super::container_info::LifeCycleState;
use super::super::error::ScmError;
use super::StorageContainerManager;
use crate::hdds::command::CommandKind;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::ContainerId;

impl StorageContainerManager {
    /// One run of the replication manager when this SCM serves: a close command, stamped
    /// with this term, for each replica of a CLOSED container that a datanode reports OPEN
    /// or CLOSING and has no close command of it queued here; then the container deletion
    /// handlers (`container_deletion`). Returns the commands queued.
    pub fn run_replication_manager(&self) -> Result<usize, ScmError> {
        if !self.context().is_serving() {
            return Ok(0);
        }
        let mismatched: Vec<_> = {
            let table = self.table.read();
            table
                .replicas
                .iter()
                .filter(|(container, _)| {
                    table
                        .applied
                        .containers
                        .get(container)
                        .is_some_and(|info| info.state == LifeCycleState::Closed)
                })
                .flat_map(|(&container, states)| {
                    states
                        .iter()
                        .filter(|(_, replica)| {
                            matches!(
                                replica.state,
                                ContainerState::Open | ContainerState::Closing
                            )
                        })
                        .map(move |(&datanode, _)| (container, datanode))
                })
                .collect()
        };
        let mut queued = 0;
        for (container, datanode) in mismatched {
            let close = CommandKind::CloseContainer {
                container,
                force: false,
            };
            if self.commands.contains(datanode, &close) {
                continue;
            }
            self.send_command(datanode, close)?;
            queued += 1;
        }
        Ok(queued + self.delete_empty_containers()?)
    }

    /// `ReconcileContainerEventHandler`: a reconcile command, stamped with this term, for
    /// each datanode that reported a replica of `container`, naming the other holders as
    /// its peers. Only the leader sends; a container with fewer than two replicas has
    /// nothing to reconcile with. Returns the commands queued.
    pub fn reconcile_container(&self, container: ContainerId) -> Result<usize, ScmError> {
        if !self.context().is_leader {
            return Err(ScmError::NotLeader { scm: self.id });
        }
        let holders = {
            let table = self.table.read();
            if !table.applied.containers.contains_key(&container) {
                return Err(ScmError::UnknownContainer { container });
            }
            table.holders(container)
        };
        if holders.len() < 2 {
            return Ok(0);
        }
        for &datanode in &holders {
            let peers = holders.iter().copied().filter(|&p| p != datanode).collect();
            self.send_command(
                datanode,
                CommandKind::ReconcileContainer { container, peers },
            )?;
        }
        Ok(holders.len())
    }
}
