//! Stuck QUASI_CLOSED containers (`QuasiClosedStuckReplicationCheck`,
//! `QuasiClosedStuckReplicaCount`, `QuasiClosedStuckOverReplicationHandler`,
//! `QuasiClosedStuckUnderReplicationHandler`): a QUASI_CLOSED container that cannot be
//! force-closed (too few origins seen, or an UNHEALTHY replica ahead of the best
//! QUASI_CLOSED one) keeps copies per origin: 3 of its best origins, 2 of each other.
//!
//! **What it meets (HDDS-16811).** Such a container at five replicas is what the health
//! check, which counts replicas and not origins, calls over-replicated, so the
//! deleted-block log holds its transactions back; at three it is healthy and every
//! replica, a lagging one too, gets them.

use std::collections::{BTreeMap, BTreeSet};

use super::super::container_info::LifeCycleState;
use super::super::error::ScmError;
use super::super::pending_ops::PendingOp;
use super::StorageContainerManager;
use super::replication_manager::ContainerSnapshot;
use super::replication_state::Processor;
use super::under_replication::is_add;
use crate::hdds::container::{ContainerReplicaReport, ContainerState};
use crate::hdds::ids::DatanodeId;

/// Copies kept of the one origin of a single-origin container (hard-coded upstream).
const SINGLE_ORIGIN_COPIES: usize = 3;

/// The replicas of a stuck container per origin, with the copies each origin keeps.
struct OriginCount<'a> {
    origins: BTreeMap<DatanodeId, Vec<(DatanodeId, &'a ContainerReplicaReport)>>,
    best: BTreeSet<DatanodeId>,
    best_copies: usize,
    other_copies: usize,
}

impl OriginCount<'_> {
    fn target(&self, origin: DatanodeId) -> usize {
        if self.origins.len() == 1 {
            SINGLE_ORIGIN_COPIES
        } else if self.best.contains(&origin) {
            self.best_copies
        } else {
            self.other_copies
        }
    }

    /// Each origin with fewer copies than it keeps, with how many it lacks.
    fn under(&self) -> Vec<(DatanodeId, usize)> {
        self.origins
            .iter()
            .filter_map(|(&o, r)| {
                self.target(o)
                    .checked_sub(r.len())
                    .filter(|&n| n > 0)
                    .map(|n| (o, n))
            })
            .collect()
    }

    /// Each origin with more copies than it keeps, with how many too many.
    fn over(&self) -> Vec<(DatanodeId, usize)> {
        self.origins
            .iter()
            .filter_map(|(&o, r)| {
                r.len()
                    .checked_sub(self.target(o))
                    .filter(|&n| n > 0)
                    .map(|n| (o, n))
            })
            .collect()
    }
}

impl StorageContainerManager {
    /// `shouldHandleAsQuasiClosedStuck`: QUASI_CLOSED, not force-closable, replicas of more
    /// or fewer than one origin, and fewer origins among its QUASI_CLOSED and OPEN
    /// replicas than its factor.
    pub(super) fn is_quasi_closed_stuck(&self, container: &ContainerSnapshot) -> bool {
        let replicas = &container.replicas;
        let origins = |pick: &dyn Fn(ContainerState) -> bool| -> usize {
            let set: BTreeSet<DatanodeId> = replicas
                .values()
                .filter(|r| pick(r.state))
                .map(|r| r.origin)
                .collect();
            set.len()
        };
        container.info.state == LifeCycleState::QuasiClosed
            && !can_force_close(container)
            && origins(&|_| true) != 1
            && origins(&|s| matches!(s, ContainerState::QuasiClosed | ContainerState::Open))
                < container.required
    }

    /// `QuasiClosedStuckReplicationCheck.handle` for a stuck container: under-replicated
    /// origins first (queued when no add is pending), then over-replicated ones (queued
    /// when no delete is pending). A container whose replicas are all UNHEALTHY is not
    /// queued here.
    pub(super) fn quasi_closed_stuck_check(
        &self,
        container: &ContainerSnapshot,
        pending: &[PendingOp],
    ) -> Option<Processor> {
        let replicas = &container.replicas;
        if replicas
            .values()
            .all(|r| r.state == ContainerState::Unhealthy)
        {
            return None;
        }
        let count = self.origin_count(container);
        if !count.under().is_empty() {
            return (!pending.iter().any(is_add)).then_some(Processor::Under);
        }
        let deleting = pending.iter().any(|op| !is_add(op));
        (!count.over().is_empty() && !deleting).then_some(Processor::Over)
    }

    /// `QuasiClosedStuckOverReplicationHandler`: with no delete pending, each origin's
    /// extra copies force-deleted, first in the replica order. Returns the deletes queued.
    pub(super) fn handle_quasi_closed_stuck_over(
        &self,
        container: &ContainerSnapshot,
        pending: &[PendingOp],
    ) -> Result<usize, ScmError> {
        if pending.iter().any(|op| !is_add(op)) {
            return Ok(0);
        }
        let count = self.origin_count(container);
        let mut sent = 0;
        for (origin, excess) in count.over() {
            for &(datanode, _) in count.origins[&origin].iter().take(excess) {
                self.send_force_delete(container, datanode)?;
                sent += 1;
            }
        }
        Ok(sent)
    }

    /// `QuasiClosedStuckUnderReplicationHandler`: unless every replica is empty or an add
    /// is pending, each origin lacking copies copied to as many new datanodes, from its
    /// own replicas. Returns the commands queued.
    pub(super) fn handle_quasi_closed_stuck_under(
        &self,
        container: &ContainerSnapshot,
        pending: &[PendingOp],
    ) -> Result<usize, ScmError> {
        if container.replicas.values().all(|r| r.is_empty) || pending.iter().any(is_add) {
            return Ok(0);
        }
        let count = self.origin_count(container);
        let mut sent = 0;
        let mut taken: Vec<PendingOp> = pending.to_vec();
        for (origin, missing) in count.under() {
            let sources: Vec<DatanodeId> =
                count.origins[&origin].iter().map(|(dn, _)| *dn).collect();
            for target in self.replication_targets(container, &taken, missing) {
                self.send_replicate(container, target, sources.clone())?;
                // A later origin must not pick the same target.
                taken.extend(self.pending_ops(container.info.id));
                sent += 1;
            }
        }
        Ok(sent)
    }

    /// `QuasiClosedStuckReplicaCount`: the replicas by origin (UNHEALTHY ones included) in
    /// the replica order, the best origins (a non-UNHEALTHY replica at the highest
    /// sequence id among them) and the copies each keeps.
    fn origin_count<'a>(&self, container: &'a ContainerSnapshot) -> OriginCount<'a> {
        let order = self.config.excess_replica_order;
        let mut origins: BTreeMap<DatanodeId, Vec<(DatanodeId, &ContainerReplicaReport)>> =
            BTreeMap::new();
        for (&dn, replica) in &container.replicas {
            origins
                .entry(replica.origin)
                .or_default()
                .push((dn, replica));
        }
        for replicas in origins.values_mut() {
            replicas
                .sort_by_key(|(dn, _)| super::over_replication::excess_rank(order, self.id, *dn));
        }
        let healthy = || {
            container
                .replicas
                .values()
                .filter(|r| r.state != ContainerState::Unhealthy)
        };
        let best_seq = healthy().map(|r| r.sequence_id).max();
        let best = healthy()
            .filter(|r| Some(r.sequence_id) == best_seq)
            .map(|r| r.origin)
            .collect();
        let config = self.config.replication;
        OriginCount {
            origins,
            best,
            best_copies: config.quasi_closed_stuck_best_origin_copies,
            other_copies: config.quasi_closed_stuck_other_origin_copies,
        }
    }
}

/// `QuasiClosedContainerHandler.canForceCloseContainer`: a QUASI_CLOSED replica, none
/// UNHEALTHY ahead of the best of them, and replicas of at least the factor of origins
/// among the QUASI_CLOSED and UNHEALTHY ones.
pub(super) fn can_force_close(container: &ContainerSnapshot) -> bool {
    let replicas = &container.replicas;
    let best_of = |state: ContainerState| {
        replicas
            .values()
            .filter(|r| r.state == state)
            .map(|r| r.sequence_id)
            .max()
    };
    let Some(best) = best_of(ContainerState::QuasiClosed) else {
        return false;
    };
    if best_of(ContainerState::Unhealthy).is_some_and(|unhealthy| unhealthy > best) {
        return false;
    }
    let origins: BTreeSet<DatanodeId> = replicas
        .values()
        .filter(|r| {
            matches!(
                r.state,
                ContainerState::QuasiClosed | ContainerState::Unhealthy
            )
        })
        .map(|r| r.origin)
        .collect();
    origins.len() >= container.required
}
