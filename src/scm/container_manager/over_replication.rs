//! The replication manager's over-replication handler (`RatisOverReplicationHandler`):
//! a CLOSED or QUASI_CLOSED container with more replicas than its factor has the excess
//! force-deleted.
//!
//! **The race (HDDS-16449, under HDDS-17268; HDDS-4589).** A pending delete lowers the
//! excess, so one replication manager does not delete twice. A new serving leader starts
//! with no pending op and picks the excess again while the deposed leader's deletes may
//! still be queued for their datanodes. **Two fences**: every SCM orders the replicas the
//! same way (HDDS-4589, [`ExcessReplicaOrder::Sorted`]), so the new leader's deletes fall
//! on the replicas the old leader picked and only repeat them; and the datanode's term
//! fence drops the deposed leader's deletes once the datanode heard the new term, the
//! command's datanode deadline bounding them otherwise. With both gone (an order of each
//! SCM's own and a datanode before HDDS-17268), the two leaders' deletes fall on different
//! replicas and the container is left below its replication factor.
//!
//! Placement (`isPlacementStatusActuallyEqualAfterRemove`) and throttling
//! (`hdds.scm.replication.datanode.delete.container.limit`) are not modelled.

use std::collections::BTreeSet;

use super::super::config::ExcessReplicaOrder;
use super::super::container_info::LifeCycleState;
use super::super::error::ScmError;
use super::super::replica_count::{ContainerHealth, state_matches};
use super::StorageContainerManager;
use super::replication_manager::ContainerSnapshot;
use crate::hdds::command::CommandKind;
use crate::hdds::ids::{DatanodeId, ScmId};

impl StorageContainerManager {
    /// `processAndSendCommands` for an over-replicated container: the replicas without a
    /// pending delete, in the configured [`ExcessReplicaOrder`], keeping one replica per origin unless the container is CLOSED; first those whose
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
        let order = self.config.excess_replica_order;
        eligible.sort_by_key(|&(dn, _)| excess_rank(order, self.id, dn));
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

/// Where `datanode`'s replica stands in `scm`'s order of excess replicas: its id when
/// [`ExcessReplicaOrder::Sorted`] (the same on every SCM), a hash of both ids (SplitMix64's
/// finalizer) when [`ExcessReplicaOrder::LegacyPerScm`].
fn excess_rank(order: ExcessReplicaOrder, scm: ScmId, datanode: DatanodeId) -> u64 {
    match order {
        ExcessReplicaOrder::Sorted => datanode.0,
        ExcessReplicaOrder::LegacyPerScm => {
            let mut z = scm.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ datanode.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
    }
}
