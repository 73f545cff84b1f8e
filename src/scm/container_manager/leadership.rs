//! Leadership and safe mode as the pending-allocation service sees them
//! (`SCMStateMachine`, `SCMContext`, `SCMSafeModeManager`, `SCMServiceManager`): the
//! notifications that open and close the allocation gate, and the rebuild of the pending
//! allocations (HDDS-16891).

use std::collections::{BTreeMap, BTreeSet};

use super::super::config::ScmBehavior;
use super::super::container_info::{ContainerInfo, LifeCycleState};
use super::super::node::DatanodeInfo;
use super::{Listed, ScmContext, StorageContainerManager};
use crate::hdds::ids::{ContainerId, DatanodeId};
use crate::hdds::term::Term;
use crate::sync::Arc;
use crate::sync::atomic::Ordering;

impl StorageContainerManager {
    /// Ratis made this SCM leader at `term` (`notifyLeaderChanged`): leading, not ready yet.
    pub fn notify_leader_changed(&self, term: Term) {
        // The RPC layer's check closes before the context changes: a reader of both sees
        // what it could see when both changed under the context's lock.
        self.ratis_leader_ready.store(false, Ordering::Release);
        self.context.write(|context| {
            context.is_leader = true;
            context.term = term;
            context.leader_ready = false;
        });
        crate::events::debug!(node = %self.id, term, "became leader");
    }

    /// Ratis made this SCM leader-ready (`SCMStateMachine.notifyLeaderReady`): it has
    /// applied the log, the RPC layer's leader check opens
    /// ([`mark_division_leader_ready`](Self::mark_division_leader_ready)), then the
    /// services are notified.
    pub fn notify_leader_ready(&self) {
        let Some(context) = self.mark_division_leader_ready() else {
            return;
        };
        self.context.write(|context| context.leader_ready = true);
        crate::events::debug!(node = %self.id, term = context.term, "leader ready");
        self.notify_status_changed();
    }

    /// Ratis marks this SCM's division leader-ready, its log applied: the RPC layer's
    /// leader check (`StorageContainerManager.checkLeader`, which reads the division's
    /// `isLeaderReady`) opens. The state machine's `notifyLeaderReady`, which notifies the
    /// services, follows ([`notify_leader_ready`](Self::notify_leader_ready) runs both, as
    /// Ratis's threads do one after the other); between the two, a client's allocation
    /// passes the leader check before the rebuild of the pending allocations has run
    /// (HDDS-16891's window, which the gate closes). Returns the context it opened the
    /// check in; `None`, with the check left as it was, for an SCM that does not lead.
    pub fn mark_division_leader_ready(&self) -> Option<ScmContext> {
        self.catch_up();
        let context = self.context();
        if !context.is_leader {
            return None;
        }
        self.ratis_leader_ready.store(true, Ordering::Release);
        Some(context)
    }

    /// Ratis told this SCM it lost leadership (`notifyNotLeader`).
    pub fn notify_not_leader(&self) {
        self.ratis_leader_ready.store(false, Ordering::Release);
        let led = self.context.write(|context| {
            let led = context.is_leader.then_some(context.term);
            context.is_leader = false;
            context.leader_ready = false;
            context.term = 0;
            led
        });
        if let Some(term) = led {
            crate::events::debug!(node = %self.id, term, "stepped down");
        }
        let rebuilt_for = self.allocation.lock().rebuilt_for_term.take();
        if let Some(term) = rebuilt_for.filter(|_| self.behavior.gates_allocation()) {
            crate::events::debug!(node = %self.id, term, "allocation gate closed");
        }
        self.notify_status_changed();
    }

    /// Safe-mode rules are met (`SCMSafeModeManager.emitSafeModeStatus`).
    pub fn exit_safe_mode(&self) {
        let was_in_safe_mode = self
            .context
            .write(|context| std::mem::replace(&mut context.in_safe_mode, false));
        if was_in_safe_mode {
            crate::events::debug!(node = %self.id, "safe mode exited");
        }
        self.notify_status_changed();
    }

    /// `SCMServiceManager.notifyStatusChanged`, as seen by the pending-allocation service:
    /// on becoming the serving leader, rebuild (unless the legacy logic runs no rebuild).
    pub fn notify_status_changed(&self) {
        if !self.context().is_serving() {
            return;
        }
        match self.behavior {
            ScmBehavior::LegacyNoRebuild => {}
            ScmBehavior::Hardened | ScmBehavior::SeedPatch => {
                // The gate is held for the whole rebuild: an allocation waits for it, and is
                // refused (`NotReady`) until the rebuild of its term is done.
                let mut gate = self.allocation.lock();
                // Read again under the gate: a notification that raced a step-down and a
                // re-election must not rebuild for, or open the gate to, a stale term.
                let context = self.context();
                if !context.is_serving() || gate.rebuilt_for_term == Some(context.term) {
                    return;
                }
                if self.hardening.apply_log_before_rebuild {
                    // Apply what committed before the gate was taken, so a container whose
                    // submit ended before the rebuild (even unconfirmed) is in the table and
                    // keeps its slot. No submit can be in flight: allocation holds the gate.
                    self.catch_up();
                }
                self.rebuild_pending_allocations();
                gate.rebuilt_for_term = Some(context.term);
                crate::events::debug!(node = %self.id, term = context.term, "allocation gate opened");
            }
            ScmBehavior::LegacyRebuildWithoutGate => {
                let term = self.context().term;
                if self.allocation.lock().rebuilt_for_term != Some(term) {
                    self.rebuild_pending_allocations();
                    self.allocation.lock().rebuilt_for_term = Some(term);
                }
            }
        }
    }

    /// The rebuild: drop every pending entry, then record a slot for each OPEN container
    /// on each known datanode of its pipeline that has no replica of it; under
    /// [`ScmHardening::rebuild_reserves_unreported_replicas`] for a container in any state
    /// but DELETING and DELETED, and under
    /// [`ScmHardening::rebuild_reserves_replication_targets`] for an under-replicated
    /// CLOSED or QUASI_CLOSED one on every registered datanode without a replica. No space
    /// check: these containers are granted, or being copied, already. Returns the slots
    /// recorded.
    ///
    /// [`ScmHardening::rebuild_reserves_unreported_replicas`]:
    /// crate::scm::ScmHardening::rebuild_reserves_unreported_replicas
    /// [`ScmHardening::rebuild_reserves_replication_targets`]:
    /// crate::scm::ScmHardening::rebuild_reserves_replication_targets
    pub fn rebuild_pending_allocations(&self) -> usize {
        let nodes: BTreeMap<DatanodeId, Arc<DatanodeInfo>> =
            self.nodes.all().into_iter().map(|n| (n.id(), n)).collect();
        let tracker = self.nodes.tracker();
        let mut dropped = BTreeSet::new();
        for node in nodes.values() {
            dropped.append(&mut tracker.clear(node));
        }
        let table = self.table.read();
        let mut recorded = 0;
        let mut reserved = Vec::new();
        for info in table.applied.containers.values() {
            let holders: BTreeSet<DatanodeId> = table
                .replicas
                .get(&info.id)
                .map(|r| r.keys().copied().collect())
                .unwrap_or_default();
            for datanode in self.reserving_datanodes(info, &holders, &nodes) {
                if let Some(node) = nodes.get(&datanode) {
                    tracker.record_allocation(node, info.id);
                    recorded += 1;
                    if reserved.last() != Some(&info.id) {
                        reserved.push(info.id);
                    }
                }
            }
        }
        let dropped: Vec<ContainerId> = dropped.into_iter().collect();
        crate::events::debug!(
            node = %self.id,
            dropped = %Listed(&dropped),
            reserved = %Listed(&reserved),
            slots = recorded,
            "buckets rebuilt"
        );
        recorded
    }

    /// The datanodes the rebuild reserves `info` on, none of them in `holders`: for an
    /// OPEN container, its pipeline's (for a CLOSING, QUASI_CLOSED or CLOSED one too under
    /// [`ScmHardening::rebuild_reserves_unreported_replicas`]); for a CLOSED or
    /// QUASI_CLOSED one with fewer holders than its factor, every registered datanode
    /// under [`ScmHardening::rebuild_reserves_replication_targets`] (any of them may be
    /// the target of the old leader's replicate); none for a DELETING or DELETED one.
    ///
    /// [`ScmHardening::rebuild_reserves_unreported_replicas`]:
    /// crate::scm::ScmHardening::rebuild_reserves_unreported_replicas
    /// [`ScmHardening::rebuild_reserves_replication_targets`]:
    /// crate::scm::ScmHardening::rebuild_reserves_replication_targets
    fn reserving_datanodes(
        &self,
        info: &ContainerInfo,
        holders: &BTreeSet<DatanodeId>,
        nodes: &BTreeMap<DatanodeId, Arc<DatanodeInfo>>,
    ) -> Vec<DatanodeId> {
        let hardening = self.hardening;
        let pipeline = self.pipeline_nodes(info);
        let copying = matches!(
            info.state,
            LifeCycleState::QuasiClosed | LifeCycleState::Closed
        ) && holders.len() < pipeline.len();
        let candidates: Vec<DatanodeId> = match info.state {
            _ if copying && hardening.rebuild_reserves_replication_targets => {
                nodes.keys().copied().collect()
            }
            LifeCycleState::Open => pipeline,
            LifeCycleState::Closing | LifeCycleState::QuasiClosed | LifeCycleState::Closed
                if hardening.rebuild_reserves_unreported_replicas =>
            {
                pipeline
            }
            // No replica of it is written any more, or the seed's rebuild skips it.
            _ => Vec::new(),
        };
        candidates
            .into_iter()
            .filter(|datanode| !holders.contains(datanode))
            .collect()
    }
}
