//! How many replicas a Ratis container has that count, and whether the replication
//! manager calls it healthy (`RatisContainerReplicaCount`,
//! `RatisReplicationCheckHandler.checkHealth`, reached through
//! `ReplicationManager.getContainerReplicationHealth`).
//!
//! **The race it gates (HDDS-16811).** The deleted-block log sends a container's delete
//! transactions only while this check says HEALTHY. A QUASI_CLOSED container whose
//! replicas are all QUASI_CLOSED is HEALTHY whatever their sequence ids, so a replica that
//! lags behind its peers gets the transaction too: the seed's trigger. So is a QUASI_CLOSED
//! container over-replicated only by UNHEALTHY replicas none of which may be deleted (each
//! the last of its origin). Once the container is CLOSED, a QUASI_CLOSED replica with
//! another sequence id counts as unhealthy and the transactions are held back.
//!
//! Placement (`validateContainerPlacement`, MIS_REPLICATED) and maintenance or
//! decommissioning datanodes are not modelled: every datanode is in service and healthy.

use std::collections::{BTreeMap, BTreeSet};

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
    /// More replicas than the factor, pending deletes not counted.
    OverReplicated,
}

/// A health check's result with what the replication manager's gates read
/// (`UnderReplicatedHealthResult`, `OverReplicatedHealthResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthResult {
    /// The health.
    pub health: ContainerHealth,
    /// The pending ops would fix it (`isReplicatedOkAfterPending`): adds for an
    /// under-replicated container, deletes for an over-replicated one.
    pub replicated_ok_after_pending: bool,
    /// Some healthy replica's state differs from the container's (`hasMismatchedReplicas`;
    /// over-replication only).
    pub has_mismatched_replicas: bool,
    /// Over-replicated with at least the factor of replicas in the container's state
    /// (`isSafelyOverReplicated`; over-replication only).
    pub safely_over_replicated: bool,
    /// Some replica counts as healthy (`hasHealthyReplicas`).
    pub has_healthy_replicas: bool,
}

impl HealthResult {
    fn only(health: ContainerHealth, has_healthy_replicas: bool) -> Self {
        Self {
            health,
            replicated_ok_after_pending: false,
            has_mismatched_replicas: false,
            safely_over_replicated: false,
            has_healthy_replicas,
        }
    }
}

/// The replicas of one container as the replication manager counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RatisContainerReplicaCount {
    /// The replication factor (`getRequiredNodes`).
    pub required: usize,
    /// Whether unhealthy replicas count as available (`considerUnhealthy`).
    pub consider_unhealthy: bool,
    /// Replicas that count as healthy (state UNHEALTHY aside, and a QUASI_CLOSED replica
    /// of a CLOSED container with another sequence id aside).
    pub healthy: usize,
    /// Healthy replicas in the container's own state (`getMatchingReplicaCount`).
    pub matching: usize,
    /// Replicas that count as unhealthy.
    pub unhealthy: usize,
    /// Pending deletes that count (`inFlightDel`): of any replica when unhealthy ones are
    /// considered, else of healthy ones only.
    pub pending_deletes: usize,
    /// Pending adds (`inFlightAdd`).
    pub pending_adds: usize,
}

impl RatisContainerReplicaCount {
    /// Counts `replicas` of a container in `state` with `sequence_id`, `required` of them
    /// wanted, with the ops pending on it; unhealthy replicas are available when
    /// `consider_unhealthy`.
    pub fn new(
        state: LifeCycleState,
        sequence_id: u64,
        required: usize,
        replicas: &BTreeMap<DatanodeId, ContainerReplicaReport>,
        pending: &[PendingOp],
        consider_unhealthy: bool,
    ) -> Self {
        let mut count = Self {
            required,
            consider_unhealthy,
            healthy: 0,
            matching: 0,
            unhealthy: 0,
            pending_deletes: 0,
            pending_adds: 0,
        };
        for replica in replicas.values() {
            if counts_as_unhealthy(state, sequence_id, replica) {
                count.unhealthy += 1;
            } else {
                count.healthy += 1;
                count.matching += usize::from(state_matches(state, replica.state));
            }
        }
        for op in pending {
            match op.kind {
                PendingOpKind::Add => count.pending_adds += 1,
                PendingOpKind::Delete => {
                    let of_unhealthy = replicas
                        .get(&op.target)
                        .is_some_and(|r| r.state == ContainerState::Unhealthy);
                    count.pending_deletes += usize::from(consider_unhealthy || !of_unhealthy);
                }
            }
        }
        count
    }

    /// Replicas that count (`getAvailableReplicas`).
    fn available(&self) -> usize {
        self.healthy
            + if self.consider_unhealthy {
                self.unhealthy
            } else {
                0
            }
    }

    /// `redundancyDelta`: replicas missing, more with pending deletes, fewer with pending
    /// adds (negative: excess).
    fn delta(&self, include_pending_delete: bool, include_pending_add: bool) -> i64 {
        let mut delta = self.required as i64 - self.available() as i64;
        if include_pending_delete {
            delta += self.pending_deletes as i64;
        }
        if include_pending_add {
            delta -= self.pending_adds as i64;
        }
        delta
    }

    /// `isSufficientlyReplicated(includePendingAdd)`: pending deletes always taken off.
    pub fn is_sufficiently_replicated(&self, include_pending_add: bool) -> bool {
        self.delta(true, include_pending_add) <= 0
    }

    /// `additionalReplicaNeeded`: replicas missing, pending deletes and adds counted.
    pub fn missing(&self) -> usize {
        usize::try_from(self.delta(true, true)).unwrap_or(0)
    }

    /// `getExcessRedundancy(includePendingDelete)`: replicas beyond the factor.
    pub fn excess(&self, include_pending_delete: bool) -> usize {
        usize::try_from(-self.delta(include_pending_delete, false)).unwrap_or(0)
    }

    /// `isOverReplicated(includePendingDelete)`.
    pub fn is_over_replicated(&self, include_pending_delete: bool) -> bool {
        self.excess(include_pending_delete) > 0
    }

    /// `toOverHealthResult` (with the mismatched and safely-over flags).
    fn over_result(&self) -> HealthResult {
        HealthResult {
            health: ContainerHealth::OverReplicated,
            replicated_ok_after_pending: !self.is_over_replicated(true),
            has_mismatched_replicas: self.healthy > self.matching,
            safely_over_replicated: self.is_over_replicated(true) && self.matching >= self.required,
            has_healthy_replicas: self.healthy > 0,
        }
    }
}

/// `RatisReplicationCheckHandler.checkHealth` for a container in `state` with
/// `sequence_id`, `required` replicas wanted, in upstream's order: under-replicated
/// (pending deletes counted), over-replicated (pending deletes not counted), then
/// over-replicated counting the unhealthy replicas (a CLOSED container always; a
/// QUASI_CLOSED one only when one of its UNHEALTHY replicas may be deleted, HEALTHY
/// otherwise), unhealthy replicas present, healthy.
pub fn check_health(
    state: LifeCycleState,
    sequence_id: u64,
    required: usize,
    replicas: &BTreeMap<DatanodeId, ContainerReplicaReport>,
    pending: &[PendingOp],
) -> HealthResult {
    let count =
        RatisContainerReplicaCount::new(state, sequence_id, required, replicas, pending, false);
    if !count.is_sufficiently_replicated(false) {
        return HealthResult {
            replicated_ok_after_pending: count.is_sufficiently_replicated(true),
            ..HealthResult::only(ContainerHealth::UnderReplicated, count.healthy > 0)
        };
    }
    if count.is_over_replicated(false) {
        return count.over_result();
    }
    let with_unhealthy =
        RatisContainerReplicaCount::new(state, sequence_id, required, replicas, pending, true);
    if with_unhealthy.is_over_replicated(false) {
        match state {
            LifeCycleState::Closed => return with_unhealthy.over_result(),
            LifeCycleState::QuasiClosed => {
                return if unhealthy_replica_for_delete(state, sequence_id, replicas).is_some() {
                    with_unhealthy.over_result()
                } else {
                    HealthResult::only(ContainerHealth::Healthy, count.healthy > 0)
                };
            }
            _ => {}
        }
    }
    let health = if count.unhealthy > 0 {
        ContainerHealth::Unhealthy
    } else {
        ContainerHealth::Healthy
    };
    HealthResult::only(health, count.healthy > 0)
}

/// `ReplicationManagerUtil.selectUnhealthyReplicaForDelete` (no pending delete): with more
/// than two replicas and one in the container's state, the first candidate by sequence id
/// (then datanode) that may go. Candidates are the UNHEALTHY replicas, and for a container
/// not QUASI_CLOSED the QUASI_CLOSED ones below its sequence id; of a QUASI_CLOSED
/// container, a candidate may go only if another replica keeps its origin
/// (`findNonUniqueDeleteCandidates`).
pub fn unhealthy_replica_for_delete(
    state: LifeCycleState,
    sequence_id: u64,
    replicas: &BTreeMap<DatanodeId, ContainerReplicaReport>,
) -> Option<DatanodeId> {
    if replicas.len() <= 2 || !replicas.values().any(|r| state_matches(state, r.state)) {
        return None;
    }
    let quasi_closed = state == LifeCycleState::QuasiClosed;
    let is_candidate = |r: &ContainerReplicaReport| {
        r.state == ContainerState::Unhealthy
            || (!quasi_closed
                && r.state == ContainerState::QuasiClosed
                && r.sequence_id < sequence_id)
    };
    let mut candidates: Vec<(&DatanodeId, &ContainerReplicaReport)> =
        replicas.iter().filter(|(_, r)| is_candidate(r)).collect();
    candidates.sort_by_key(|(dn, r)| (r.sequence_id, **dn));
    if !quasi_closed {
        return candidates.first().map(|(dn, _)| **dn);
    }
    let mut covered: BTreeSet<DatanodeId> = replicas
        .values()
        .filter(|r| !is_candidate(r))
        .map(|r| r.origin)
        .collect();
    candidates
        .into_iter()
        .find(|(_, r)| !covered.insert(r.origin))
        .map(|(dn, _)| *dn)
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
