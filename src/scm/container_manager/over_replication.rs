//! The replication manager's over-replication handler (`RatisOverReplicationHandler`):
//! a CLOSED or QUASI_CLOSED container with more replicas than its factor has the excess
//! force-deleted, by the over-replicated processor, after the pass queued it.
//!
//! **The race (HDDS-16449, under HDDS-17268; HDDS-4589).** A pending delete lowers the
//! excess, so one replication manager does not delete twice. A new serving leader starts
//! with no pending op and picks the excess again while the deposed leader's deletes may
//! still be queued for their datanodes (or its processor may still run, if it has not
//! heard). **Two fences**: every SCM orders the replicas the same way (HDDS-4589,
//! [`ExcessReplicaOrder::Sorted`]), so the new leader's deletes fall on the replicas the
//! old leader picked and only repeat them; and the datanode's term fence drops the
//! deposed leader's deletes once the datanode heard the new term, the command's datanode
//! deadline bounding them otherwise. With both gone (an order of each SCM's own and a
//! datanode before HDDS-17268), the two leaders' deletes fall on different replicas and
//! the container is left below its replication factor.
//!
//! Placement (`isPlacementStatusActuallyEqualAfterRemove`), node health and throttling
//! (`hdds.scm.replication.datanode.delete.container.limit`) are not modelled: every
//! datanode is healthy, in service, and takes every delete.

use std::collections::BTreeSet;

use super::super::config::ExcessReplicaOrder;
use super::super::container_info::LifeCycleState;
use super::super::error::ScmError;
use super::super::pending_ops::PendingOp;
use super::super::replica_count::{RatisContainerReplicaCount, state_matches};
use super::StorageContainerManager;
use super::replication_manager::ContainerSnapshot;
use crate::hdds::command::CommandKind;
use crate::hdds::container::{ContainerReplicaReport, ContainerState};
use crate::hdds::ids::{DatanodeId, ScmId};

impl StorageContainerManager {
    /// `processAndSendCommands` for an over-replicated container, with its replicas and
    /// `pending` ops as read now: nothing unless it is over-replicated counting its
    /// unhealthy replicas and pending deletes; then the replicas without a pending delete,
    /// in the configured [`ExcessReplicaOrder`] (by sequence id first when none is
    /// healthy), a replica per origin kept unless the container is CLOSED (healthy ones
    /// before UNHEALTHY ones); those in another state than the container first, then the
    /// rest, each force-deleted while excess remains. Returns the deletes queued.
    pub(super) fn handle_over_replicated(
        &self,
        container: &ContainerSnapshot,
        pending: &[PendingOp],
    ) -> Result<usize, ScmError> {
        let info = &container.info;
        if !matches!(
            info.state,
            LifeCycleState::Closed | LifeCycleState::QuasiClosed
        ) {
            return Ok(0);
        }
        let count = RatisContainerReplicaCount::new(
            info.state,
            info.sequence_id,
            container.required,
            &container.replicas,
            pending,
            true,
        );
        if !count.is_over_replicated(true) {
            return Ok(0);
        }
        let eligible = self.eligible_excess(container, pending, count.healthy == 0);
        let mismatched = eligible
            .iter()
            .filter(|dn| !state_matches(info.state, container.replicas[*dn].state));
        let matched = eligible
            .iter()
            .filter(|dn| state_matches(info.state, container.replicas[*dn].state));
        let targets: Vec<DatanodeId> = mismatched
            .chain(matched)
            .take(count.excess(true))
            .copied()
            .collect();
        for &datanode in &targets {
            self.send_force_delete(container, datanode)?;
        }
        Ok(targets.len())
    }

    /// `getEligibleReplicas`: the replicas without a pending delete, ordered, with
    /// `saveReplicasWithUniqueOrigins` for a container not CLOSED.
    fn eligible_excess(
        &self,
        container: &ContainerSnapshot,
        pending: &[PendingOp],
        all_unhealthy: bool,
    ) -> Vec<DatanodeId> {
        let order = self.config.excess_replica_order;
        let rank = |dn: DatanodeId, r: &ContainerReplicaReport| {
            let hash = excess_rank(order, self.id, dn);
            (if all_unhealthy { r.sequence_id } else { 0 }, hash)
        };
        let mut eligible: Vec<(DatanodeId, &ContainerReplicaReport)> = container
            .replicas
            .iter()
            .filter(|(dn, _)| !pending.iter().any(|op| op.is_delete_of(**dn)))
            .map(|(&dn, r)| (dn, r))
            .collect();
        eligible.sort_by_key(|&(dn, r)| rank(dn, r));
        if container.info.state != LifeCycleState::Closed {
            eligible = non_unique_origins(eligible);
        }
        eligible.into_iter().map(|(dn, _)| dn).collect()
    }

    /// A forced delete of `datanode`'s replica, sent as every replication manager
    /// command is.
    pub(super) fn send_force_delete(
        &self,
        container: &ContainerSnapshot,
        datanode: DatanodeId,
    ) -> Result<(), ScmError> {
        let id = container.info.id;
        let delete = CommandKind::DeleteContainer {
            container: id,
            force: true,
        };
        self.send_datanode_command(id, datanode, delete)?;
        crate::events::debug!(
            node = %self.id,
            container = id.0,
            datanode = %datanode,
            "over-replicated replica deleted"
        );
        Ok(())
    }
}

/// `saveReplicasWithUniqueOrigins` (`findNonUniqueDeleteCandidates` over the eligible
/// replicas alone): the replicas that are not the first of their origin, the replicas in
/// a state other than UNHEALTHY seen first, then the UNHEALTHY ones; the order is kept.
fn non_unique_origins(
    eligible: Vec<(DatanodeId, &ContainerReplicaReport)>,
) -> Vec<(DatanodeId, &ContainerReplicaReport)> {
    let mut seen = BTreeSet::new();
    let mut deletable = BTreeSet::new();
    let unhealthy = |r: &ContainerReplicaReport| r.state == ContainerState::Unhealthy;
    for pass_unhealthy in [false, true] {
        for &(dn, r) in eligible
            .iter()
            .filter(|(_, r)| unhealthy(r) == pass_unhealthy)
        {
            if !seen.insert(r.origin) {
                deletable.insert(dn);
            }
        }
    }
    eligible
        .into_iter()
        .filter(|(dn, _)| deletable.contains(dn))
        .collect()
}

/// Where `datanode`'s replica stands in `scm`'s order of excess replicas: its id when
/// [`ExcessReplicaOrder::Sorted`] (the same on every SCM), a hash of both ids (SplitMix64's
/// finalizer) when [`ExcessReplicaOrder::LegacyPerScm`].
pub(super) fn excess_rank(order: ExcessReplicaOrder, scm: ScmId, datanode: DatanodeId) -> u64 {
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
