//! The replication manager's over-replication handler (`RatisOverReplicationHandler`):
//! a CLOSED or QUASI_CLOSED container with more replicas than its factor has the excess
//! force-deleted.
//!
//! **The race (HDDS-16449, under HDDS-17268).** A pending delete lowers the excess, so one
//! replication manager does not delete twice. A new serving leader starts with no pending
//! op and picks the same excess again; a deposed leader's delete, still queued for its
//! datanode, would run beside the new leader's and leave the container one replica short.
//! **The datanode's term fence** drops the deposed leader's delete once the datanode heard
//! the new term; the command's datanode deadline bounds it otherwise.
//!
//! Placement (`isPlacementStatusActuallyEqualAfterRemove`) and throttling
//! (`hdds.scm.replication.datanode.delete.container.limit`) are not modelled.

use std::collections::BTreeSet;

use super::super::container_info::LifeCycleState;
use super::super::error::ScmError;
use super::super::replica_count::{ContainerHealth, state_matches};
use super::StorageContainerManager;
use super::replication_manager::ContainerSnapshot;
use crate::hdds::command::CommandKind;
use crate::hdds::ids::DatanodeId;

impl StorageContainerManager {
    /// `processAndSendCommands` for an over-replicated container: the replicas without a
    /// pending delete, in datanode order (upstream sorts by a hash that is as fixed),
    /// keeping one replica per origin unless the container is CLOSED; first those whose
    /// state does not match the container's, then the rest, each force-deleted while
    /// excess remains. Returns the deletes queued.
    pub(super) fn handle_over_replicated(
        &self,
        container: &ContainerSnapshot,
    ) -> Result<usize, ScmError> {
        let state = container.info.state;
        if !matches!(state, LifeCycleState::Closed | LifeCycleState::QuasiClosed) {
            return Ok(0);
        }
        let count = self.replica_count(container);
        if count.health(state) != ContainerHealth::OverReplicated {
            return Ok(0);
        }
        let mut excess = count.excess(true);
        let id = container.info.id;
        let mut eligible: Vec<(DatanodeId, bool)> = container
            .replicas
            .iter()
            .filter(|(dn, _)| !self.delete_pending(id, **dn))
            .map(|(&dn, r)| (dn, state_matches(state, r.state)))
            .collect();
        if state != LifeCycleState::Closed {
            // `saveReplicasWithUniqueOrigins`: the first replica seen of each origin stays.
            let mut seen = BTreeSet::new();
            eligible.retain(|(dn, _)| !seen.insert(container.replicas[dn].origin));
        }
        let mismatched = eligible.iter().filter(|(_, matches)| !matches);
        let matched = eligible.iter().filter(|(_, matches)| *matches);
        let mut queued = 0;
        for &(datanode, _) in mismatched.chain(matched) {
            if excess == 0 {
                break;
            }
            let delete = CommandKind::DeleteContainer {
                container: id,
                force: true,
            };
            self.send_datanode_command(id, datanode, delete)?;
            tracing::debug!(
                node = %self.id,
                container = %id,
                datanode = %datanode,
                "over-replicated replica deleted"
            );
            excess -= 1;
            queued += 1;
        }
        Ok(queued)
    }
}
