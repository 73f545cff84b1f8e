//! How many replicas a Ratis container has that count, and whether the replication
//! manager calls it healthy (`RatisContainerReplicaCount`,
//! `RatisReplicationCheckHandler.checkHealth`, reached through
//! `ReplicationManager.getContainerReplicationHealth`).
//!
//! **The race it gates (HDDS-16811).** The deleted-block log sends a container's delete
//! transactions only while this check says HEALTHY. A QUASI_CLOSED container whose
//! replicas are all QUASI_CLOSED is HEALTHY whatever their sequence ids, so a replica that
//! lags behind its peers gets the transaction too: the seed's trigger. Once the container
//! is CLOSED, a QUASI_CLOSED replica with another sequence id counts as unhealthy and the
//! transactions are held back.
//!
//! Placement (`validateContainerPlacement`, MIS_REPLICATED) and maintenance or
//! decommissioning datanodes are not modelled: every datanode is in service.

use std::collections::BTreeMap;

use super::container_info::LifeCycleState;
use super::pending_ops::{PendingOp, PendingOpKind};
use crate::hdds::container::{ContainerReplicaReport, ContainerState};
use crate::hdds::ids::DatanodeId;

/// What `RatisReplicationCheckHandler.checkHealth` says of a container
/// (`ContainerHealthResult.HealthState`, MIS_REPLICATED aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContainerHealth {
    /// As many healthy replicas as the replication factor, none unhealthy.
    Healthy,
    /// Enough healthy replicas, and unhealthy ones that do not make it over-replicated.
    Unhealthy,
    /// Fewer healthy replicas than the factor, pending deletes counted (no replica at all
    /// is this too: upstream's "missing" is an unrecoverable under-replication).
    UnderReplicated,
    /// More replicas than the factor, pending deletes counted.
    OverReplicated,
}

/// The replicas of one container as the replication manager counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RatisContainerReplicaCount {
    /// The replication factor (`getRequiredNodes`).
    pub required: usize,
    /// Replicas that count as healthy (state UNHEALTHY aside, and a QUASI_CLOSED replica
    /// of a CLOSED container with another sequence id aside).
    pub healthy: usize,
    /// Replicas that count as unhealthy.
    pub unhealthy: usize,
    /// Pending deletes of healthy replicas.
    pub deleting_healthy: usize,
    /// Pending deletes of unhealthy replicas.
    pub deleting_unhealthy: usize,
}

impl RatisContainerReplicaCount {
    /// Counts `replicas` of a container in `state` with `sequence_id`, `required` of them
    /// wanted, with the ops pending on it.
    pub fn new(
        state: LifeCycleState,
        sequence_id: u64,
        required: usize,
        replicas: &BTreeMap<DatanodeId, ContainerReplicaReport>,
        pending: &[PendingOp],
    ) -> Self {
        let mut count = Self {
            required,
            healthy: 0,
            unhealthy: 0,
            deleting_healthy: 0,
            deleting_unhealthy: 0,
        };
        for (datanode, replica) in replicas {
            let unhealthy = counts_as_unhealthy(state, sequence_id, replica);
            let deleting = pending
                .iter()
                .any(|op| op.kind == PendingOpKind::Delete && op.target == *datanode);
            match (unhealthy, deleting) {
                (false, false) => count.healthy += 1,
                (false, true) => {
                    count.healthy += 1;
                    count.deleting_healthy += 1;
                }
                (true, false) => count.unhealthy += 1,
                (true, true) => {
                    count.unhealthy += 1;
                    count.deleting_unhealthy += 1;
                }
            }
        }
        count
    }

    /// Replicas that count, less their pending deletes; unhealthy ones too when
    /// `consider_unhealthy`.
    fn available(&self, consider_unhealthy: bool) -> usize {
        let healthy = self.healthy - self.deleting_healthy;
        if consider_unhealthy {
            healthy + self.unhealthy - self.deleting_unhealthy
        } else {
            healthy
        }
    }

    /// `isSufficientlyReplicated(false)`: healthy replicas, pending deletes taken off, are
    /// at least the factor.
    pub fn is_sufficiently_replicated(&self) -> bool {
        self.available(false) >= self.required
    }

    /// `getExcessRedundancy(true)`: replicas beyond the factor, pending deletes taken off.
    pub fn excess(&self, consider_unhealthy: bool) -> usize {
        self.available(consider_unhealthy)
            .saturating_sub(self.required)
    }

    /// `checkHealth` for a container in `state`, in upstream's order: under-replicated,
    /// over-replicated, over-replicated counting the unhealthy replicas (for CLOSED and
    /// QUASI_CLOSED containers), unhealthy replicas present, healthy.
    pub fn health(&self, state: LifeCycleState) -> ContainerHealth {
        if !self.is_sufficiently_replicated() {
            return ContainerHealth::UnderReplicated;
        }
        if self.excess(false) > 0 {
            return ContainerHealth::OverReplicated;
        }
        if self.excess(true) > 0
            && matches!(state, LifeCycleState::Closed | LifeCycleState::QuasiClosed)
        {
            return ContainerHealth::OverReplicated;
        }
        if self.unhealthy > 0 {
            ContainerHealth::Unhealthy
        } else {
            ContainerHealth::Healthy
        }
    }
}

/// A replica counts as unhealthy when it is UNHEALTHY, or QUASI_CLOSED with another
/// sequence id than its CLOSED container's ("treated as unhealthy" in
/// `RatisContainerReplicaCount`); a replica whose state only differs from the
/// container's (an OPEN replica of a CLOSED container) still counts as healthy.
pub fn counts_as_unhealthy(
    state: LifeCycleState,
    sequence_id: u64,
    replica: &ContainerReplicaReport,
) -> bool {
    replica.state == ContainerState::Unhealthy
        || (state == LifeCycleState::Closed
            && replica.state == ContainerState::QuasiClosed
            && replica.sequence_id != sequence_id)
}

/// `compareState`: the replica is in the state matching its container's (OPEN, CLOSING,
/// QUASI_CLOSED, CLOSED; a container in any other state matches no replica).
pub fn state_matches(state: LifeCycleState, replica: ContainerState) -> bool {
    matches!(
        (state, replica),
        (LifeCycleState::Open, ContainerState::Open)
            | (LifeCycleState::Closing, ContainerState::Closing)
            | (LifeCycleState::QuasiClosed, ContainerState::QuasiClosed)
            | (LifeCycleState::Closed, ContainerState::Closed)
    )
}
