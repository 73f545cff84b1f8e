//! The SCM's `ReplicationManager`: when it runs (leader ready, out of safe mode, a start
//! delay after that, one pass per interval), how it sends a command (the leader's term, a
//! datanode deadline, a pending op), and its pass over every container (`processAll`)
//! through the handlers upstream chains: `OpenContainerHandler`, `ClosingContainerHandler`,
//! `QuasiClosedContainerHandler`, `MismatchedReplicasHandler` (`close_handlers`),
//! `EmptyContainerHandler`, `DeletingContainerHandler` (`container_deletion`), the stuck
//! QUASI_CLOSED check (`quasi_closed_stuck`) and `RatisReplicationCheckHandler`. The
//! handlers that close and delete send their commands in the pass; an under- or
//! over-replicated container is only queued, and the processors act on it later
//! (`replication_processors`).
//!
//! **The race (HDDS-17268, HDDS-16449).** A new serving leader clears the pending ops,
//! trusting datanodes to drop the old term's commands; the deposed leader's delete of an
//! over-replicated container's replica may still be queued, and the new leader's own pass
//! picks a replica to delete too. A leader deposed between a pass that queued a container
//! and its processor's run still acts on it, at its old term, until it hears it no longer
//! leads. **The fence is the datanode's** (the term), bounded in time by the datanode
//! deadline every command here carries and by the start delay.
//!
//! Also the reconcile command an operator triggers (`ozone admin container reconcile`,
//! `ReconciliationEligibilityHandler`, `ReconcileContainerEventHandler`).

use std::collections::BTreeMap;

use super::super::config::{PendingOpsOnNewTerm, ReplicationSpaceAccounting};
use super::super::container_info::{ContainerInfo, LifeCycleState};
use super::super::error::ScmError;
use super::super::pending_ops::{PendingOp, PendingOpKind};
use super::super::replica_count::{ContainerHealth, check_health};
use super::StorageContainerManager;
use super::replication_state::{Processor, Queued, ReplicationManagerState, ReplicationQueue};
use crate::hdds::command::{CommandKind, ScmCommand};
use crate::hdds::container::{ContainerReplicaReport, ContainerState};
use crate::hdds::ids::{ContainerId, DatanodeId};
use crate::hdds::term::Term;

/// One container as a pass sees it: its row and its replicas, read under the table lock.
#[derive(Debug, Clone)]
pub(super) struct ContainerSnapshot {
    pub(super) info: ContainerInfo,
    pub(super) replicas: BTreeMap<DatanodeId, ContainerReplicaReport>,
    /// Its replication factor.
    pub(super) required: usize,
}

impl StorageContainerManager {
    /// One run of the replication manager: when this SCM serves, has been serving for
    /// `hdds.scm.wait.time.after.safemode.exit` (`shouldRun`) and the interval since the
    /// last pass is over, a pass over every container (`processAll`). Returns the commands
    /// queued; a pass cut short because this SCM was deposed meanwhile returns `Ok(0)`.
    pub fn run_replication_manager(&self) -> Result<usize, ScmError> {
        if !self.replication_manager_should_pass() {
            return Ok(0);
        }
        match self.replication_manager_pass() {
            Err(ScmError::NotLeader { .. }) => {
                // Deposed during the pass (`getTermOfLeader` throws): what was queued
                // stays, the rest of the pass is skipped, as the block deleting service
                // does.
                crate::events::debug!(node = %self.id, "replication manager pass skipped");
                Ok(0)
            }
            result => result,
        }
    }

    /// `processAll`: expired deletes sent again, each container through the handlers, and
    /// the queue for the processors replaced by what this pass found.
    fn replication_manager_pass(&self) -> Result<usize, ScmError> {
        let mut queued = self.resend_expired_deletes()?;
        let term = self.context().term;
        let mut queue = ReplicationQueue::default();
        for container in &self.container_snapshots() {
            queued += self.process_container(container, term, &mut queue)?;
        }
        self.replication.lock().queue = queue;
        Ok(queued)
    }

    /// Every container with its replicas, as a pass reads them under the table lock.
    fn container_snapshots(&self) -> Vec<ContainerSnapshot> {
        let table = self.table.read();
        table
            .applied
            .containers
            .values()
            .map(|info| ContainerSnapshot {
                info: info.clone(),
                replicas: table.replicas.get(&info.id).cloned().unwrap_or_default(),
                required: self.expected_replicas(info),
            })
            .collect()
    }

    /// One container as a processor reads it again: its row and replicas now (`None` when
    /// the container is gone).
    pub(super) fn container_snapshot(&self, id: ContainerId) -> Option<ContainerSnapshot> {
        let table = self.table.read();
        let info = table.applied.containers.get(&id)?;
        Some(ContainerSnapshot {
            info: info.clone(),
            replicas: table.replicas.get(&id).cloned().unwrap_or_default(),
            required: self.expected_replicas(info),
        })
    }

    /// `notifyStatusChanged` and `shouldRun`, checked at each run: the first run of a
    /// new serving term makes it RUNNING (the time noted, the pending ops cleared unless
    /// [`PendingOpsOnNewTerm::LegacyKeep`], the queue kept); it runs once the start delay is over. Upstream does the first part in
    /// the service notification; doing it at the next run keeps the leadership
    /// notifications, which the HDDS-16891 checkers explore, free of this lock.
    pub(super) fn replication_manager_should_run(&self, rm: &mut ReplicationManagerState) -> bool {
        let context = self.context();
        if !context.is_serving() {
            return false;
        }
        let now_ms = self.clock.now_ms();
        if rm.running_for_term != Some(context.term) {
            rm.running_for_term = Some(context.term);
            rm.ready_since_ms = now_ms;
            rm.last_pass_ms = None;
            rm.last_processed_ms = [None; 2];
            if self.config.pending_ops_on_new_term == PendingOpsOnNewTerm::Clear {
                rm.pending.clear();
            }
            crate::events::debug!(node = %self.id, term = context.term, "replication manager running");
        }
        now_ms.saturating_sub(rm.ready_since_ms)
            >= self.config.replication.wait_after_safe_mode_exit_ms
    }

    /// [`replication_manager_should_run`](Self::replication_manager_should_run) and the
    /// pass interval over.
    fn replication_manager_should_pass(&self) -> bool {
        let mut rm = self.replication.lock();
        if !self.replication_manager_should_run(&mut rm) {
            return false;
        }
        let now_ms = self.clock.now_ms();
        let interval_ms = self.config.replication.interval_ms;
        if rm
            .last_pass_ms
            .is_some_and(|last| now_ms.saturating_sub(last) < interval_ms)
        {
            return false;
        }
        rm.last_pass_ms = Some(now_ms);
        true
    }

    /// The handlers for one container, in upstream's chain order; an under- or
    /// over-replicated one goes to `queue` (queued at `term`).
    fn process_container(
        &self,
        container: &ContainerSnapshot,
        term: Term,
        queue: &mut ReplicationQueue,
    ) -> Result<usize, ScmError> {
        let queued = match container.info.state {
            LifeCycleState::Open => return self.handle_open(container),
            LifeCycleState::Closing => return self.handle_closing(container),
            LifeCycleState::QuasiClosed => self.handle_quasi_closed(container)?,
            LifeCycleState::Closed => 0,
            LifeCycleState::Deleting => return self.handle_deleting(container),
            LifeCycleState::Deleted => return Ok(0),
        };
        let queued = queued + self.handle_mismatched(container)?;
        if let Some(empty) = self.handle_empty(container)? {
            return Ok(queued + empty);
        }
        let pending = self.pending_ops(container.info.id);
        let found = if self.is_quasi_closed_stuck(container) {
            self.quasi_closed_stuck_check(container, &pending)
        } else {
            self.ratis_replication_check(container, &pending)
        };
        if let Some(processor) = found {
            let id = container.info.id;
            queue.of(processor).push_back(Queued {
                container: id,
                term,
            });
            crate::events::debug!(
                node = %self.id,
                container = id.0,
                health = processor.name(),
                term,
                "container queued for replication"
            );
        }
        Ok(queued)
    }

    /// `RatisReplicationCheckHandler.handle`: an under-replicated container with a healthy
    /// replica that its pending adds do not fix is queued for the under-replicated
    /// processor; an over-replicated one only when its pending deletes do not fix it, no
    /// healthy replica is in another state than the container (those are closed first),
    /// and at least the factor of replicas are in its state.
    fn ratis_replication_check(
        &self,
        container: &ContainerSnapshot,
        pending: &[PendingOp],
    ) -> Option<Processor> {
        let info = &container.info;
        let result = check_health(
            info.state,
            info.sequence_id,
            container.required,
            &container.replicas,
            pending,
        );
        match result.health {
            ContainerHealth::UnderReplicated => (!container.replicas.is_empty()
                && result.has_healthy_replicas
                && !result.replicated_ok_after_pending)
                .then_some(Processor::Under),
            ContainerHealth::OverReplicated => (!result.replicated_ok_after_pending
                && !result.has_mismatched_replicas
                && result.safely_over_replicated)
                .then_some(Processor::Over),
            ContainerHealth::Healthy | ContainerHealth::Unhealthy => None,
        }
    }

    /// The ops pending on `container`.
    pub(super) fn pending_ops(&self, container: ContainerId) -> Vec<PendingOp> {
        self.replication.lock().pending.get(container).to_vec()
    }

    /// Whether a delete of `datanode`'s replica of `container` is pending.
    pub(super) fn delete_pending(&self, container: ContainerId, datanode: DatanodeId) -> bool {
        self.replication
            .lock()
            .pending
            .has_delete(container, datanode)
    }

    /// `ReplicationManager.sendDatanodeCommand`: `kind` for `datanode`, stamped with this
    /// leader's term, with a datanode deadline of now + the event timeout − its datanode
    /// offset, queued; a delete or a replicate is recorded as a pending op until the SCM
    /// deadline (now + the event timeout). A replicate's op is the target's, which is the
    /// datanode it is sent to here (pull mode).
    pub(super) fn send_datanode_command(
        &self,
        container: ContainerId,
        datanode: DatanodeId,
        kind: CommandKind,
    ) -> Result<ScmCommand, ScmError> {
        let config = self.config.replication;
        let now_ms = self.clock.now_ms();
        let scm_deadline_ms = now_ms.saturating_add(config.event_timeout_ms);
        let deadline_ms = scm_deadline_ms - config.event_timeout_datanode_offset_ms;
        let op_kind = match kind {
            CommandKind::DeleteContainer { .. } => Some(PendingOpKind::Delete),
            CommandKind::ReplicateContainer { .. } => Some(PendingOpKind::Add),
            _ => None,
        };
        let command = self.queue_command(datanode, kind, deadline_ms)?;
        if let Some(kind) = op_kind {
            let op = PendingOp {
                kind,
                target: datanode,
                command: command.clone(),
                deadline_ms: scm_deadline_ms,
            };
            let replaced = self.replication.lock().pending.schedule(container, op);
            let accounted = self.config.replication_space_accounting
                == ReplicationSpaceAccounting::PendingAllocationOnTarget;
            if kind == PendingOpKind::Add && !replaced && accounted {
                self.record_replication_target(container, datanode);
            }
        }
        Ok(command)
    }

    /// `SCMNodeManager.opAdded` (HDDS-14924): a replicate's new pending add records a
    /// pending allocation on its target, without a space check, as a grant records one
    /// (HDDS-16891's bucket), until the target's report confirms the replica or it ages
    /// out.
    fn record_replication_target(&self, container: ContainerId, target: DatanodeId) {
        if let Ok(node) = self.nodes.get(target) {
            self.nodes.tracker().record_allocation(&node, container);
            crate::events::debug!(
                node = %self.id,
                container = container.0,
                datanode = %target,
                "replication target recorded"
            );
        }
    }

    /// `removeExpiredEntries` with `opCompleted(timedOut)`: each expired pending delete is
    /// sent again, with this term and a new deadline.
    fn resend_expired_deletes(&self) -> Result<usize, ScmError> {
        let expired = self
            .replication
            .lock()
            .pending
            .expired_deletes(self.clock.now_ms());
        for (container, op) in &expired {
            self.send_datanode_command(*container, op.target, op.command.kind.clone())?;
        }
        Ok(expired.len())
    }

    /// Ops pending in the replication manager (`ContainerReplicaPendingOps`).
    pub fn pending_replica_ops(&self) -> usize {
        self.replication.lock().pending.len()
    }

    /// A replicate command for `target` naming the container's reported holders as its
    /// sources (pull mode), sent as the replication manager sends one
    /// (`ReplicationManager.sendDatanodeCommand`: this leader's term, a datanode deadline,
    /// a pending add): what `RatisUnderReplicationHandler` or the
    /// container balancer's move sends. This SCM does not judge whether the copy is
    /// needed (under-replication is not modelled): the caller does. Refused on a follower,
    /// for an unknown container, one that is not CLOSED or QUASI_CLOSED, or a target that
    /// already holds a replica.
    pub fn replicate_container(
        &self,
        container: ContainerId,
        target: DatanodeId,
    ) -> Result<ScmCommand, ScmError> {
        if !self.context().is_leader {
            return Err(ScmError::NotLeader { scm: self.id });
        }
        let (state, sources) = {
            let table = self.table.read();
            let info = table
                .applied
                .containers
                .get(&container)
                .ok_or(ScmError::UnknownContainer { container })?;
            let holders = table.replicas.get(&container);
            (
                info.state,
                holders.map(|r| r.keys().copied().collect::<Vec<_>>()),
            )
        };
        let sources = sources.unwrap_or_default();
        if !matches!(state, LifeCycleState::Closed | LifeCycleState::QuasiClosed)
            || sources.contains(&target)
        {
            return Err(ScmError::NotEligibleForReplication {
                container,
                state,
                target,
            });
        }
        let replicate = CommandKind::ReplicateContainer { container, sources };
        self.send_datanode_command(container, target, replicate)
    }

    /// `ReconcileContainerEventHandler` after `ReconciliationEligibilityHandler`: a
    /// container CLOSED or QUASI_CLOSED whose replicas are all CLOSED, QUASI_CLOSED or
    /// UNHEALTHY gets a reconcile command, stamped with this term, for each datanode that
    /// reported a replica, naming the other holders as its peers. Only the leader sends; a
    /// container with fewer than two replicas has nothing to reconcile with. Returns the
    /// commands queued.
    pub fn reconcile_container(&self, container: ContainerId) -> Result<usize, ScmError> {
        if !self.context().is_leader {
            return Err(ScmError::NotLeader { scm: self.id });
        }
        let (state, replicas) = {
            let table = self.table.read();
            let info = table
                .applied
                .containers
                .get(&container)
                .ok_or(ScmError::UnknownContainer { container })?;
            (
                info.state,
                table.replicas.get(&container).cloned().unwrap_or_default(),
            )
        };
        let eligible = matches!(state, LifeCycleState::Closed | LifeCycleState::QuasiClosed)
            && replicas.values().all(|r| {
                matches!(
                    r.state,
                    ContainerState::Closed
                        | ContainerState::QuasiClosed
                        | ContainerState::Unhealthy
                )
            });
        if !eligible {
            return Err(ScmError::NotEligibleForReconciliation { container, state });
        }
        if replicas.len() < 2 {
            return Ok(0);
        }
        for &datanode in replicas.keys() {
            let peers = replicas
                .keys()
                .copied()
                .filter(|&p| p != datanode)
                .collect();
            self.send_command(
                datanode,
                CommandKind::ReconcileContainer { container, peers },
            )?;
        }
        Ok(replicas.len())
    }
}
