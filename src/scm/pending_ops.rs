//! The replica additions and deletions the replication manager has asked for and not yet
//! seen in a report (`ContainerReplicaPendingOps`), in the leader's memory only.
//!
//! **The race it meets (HDDS-17268, HDDS-16449).** A pending delete keeps the replication
//! manager from deleting a second replica of an over-replicated container while the first
//! delete is in flight. The ops are not replicated, and a new serving leader clears them
//! ([`clear`](ContainerReplicaPendingOps::clear)) on the word of a comment that datanodes
//! discard the old term's commands: **only the datanode's term fence** keeps the deposed
//! leader's delete and the new leader's from both running.

use std::collections::BTreeMap;

use crate::hdds::command::ScmCommand;
use crate::hdds::ids::{ContainerId, DatanodeId};

/// What a pending operation waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PendingOpKind {
    /// A replica to appear on the target (a replicate command).
    Add,
    /// The target's replica to go (a delete command).
    Delete,
}

/// One pending operation (`ContainerReplicaOp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingOp {
    /// What it waits for.
    pub kind: PendingOpKind,
    /// The datanode whose replica it adds or deletes.
    pub target: DatanodeId,
    /// The command sent for it.
    pub command: ScmCommand,
    /// The SCM deadline, ms since the epoch: past it the op has expired.
    pub deadline_ms: u64,
}

impl PendingOp {
    /// Whether it is a delete of `target`'s replica.
    pub fn is_delete_of(&self, target: DatanodeId) -> bool {
        self.kind == PendingOpKind::Delete && self.target == target
    }
}

/// Every pending operation, by container (`ContainerReplicaPendingOps`). Bounded by the
/// commands the SCM's queues hold: one op per command the replication manager queued.
#[derive(Debug, Default)]
pub struct ContainerReplicaPendingOps {
    ops: BTreeMap<ContainerId, Vec<PendingOp>>,
}

impl ContainerReplicaPendingOps {
    /// No operation pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// `addReplica`/`deleteReplica` (`scheduleAddReplica`, `scheduleDeleteReplica`): an op
    /// of the same kind on the same target is replaced. Returns whether one was (upstream
    /// tells its subscribers of a new add only when none was).
    pub fn schedule(&mut self, container: ContainerId, op: PendingOp) -> bool {
        let ops = self.ops.entry(container).or_default();
        let before = ops.len();
        ops.retain(|o| !(o.kind == op.kind && o.target == op.target));
        let replaced = ops.len() < before;
        ops.push(op);
        replaced
    }

    /// `completeAddReplica`/`completeDeleteReplica`: a report shows the op done. Returns
    /// whether one was pending.
    pub fn complete(
        &mut self,
        container: ContainerId,
        kind: PendingOpKind,
        target: DatanodeId,
    ) -> bool {
        let Some(ops) = self.ops.get_mut(&container) else {
            return false;
        };
        let before = ops.len();
        ops.retain(|o| !(o.kind == kind && o.target == target));
        let completed = ops.len() < before;
        if ops.is_empty() {
            self.ops.remove(&container);
        }
        completed
    }

    /// The ops pending on `container`.
    pub fn get(&self, container: ContainerId) -> &[PendingOp] {
        self.ops.get(&container).map_or(&[], Vec::as_slice)
    }

    /// Whether a delete of `target`'s replica of `container` is pending.
    pub fn has_delete(&self, container: ContainerId, target: DatanodeId) -> bool {
        self.get(container)
            .iter()
            .any(|o| o.kind == PendingOpKind::Delete && o.target == target)
    }

    /// `removeExpiredEntries`: ops whose SCM deadline passed (`now > deadline`). Expired
    /// adds are dropped; expired deletes are returned, still pending, for the replication
    /// manager to send again with a new deadline (`ReplicationManager.opCompleted` with
    /// `timedOut`).
    pub fn expired_deletes(&mut self, now_ms: u64) -> Vec<(ContainerId, PendingOp)> {
        let mut deletes = Vec::new();
        for (&container, ops) in &mut self.ops {
            ops.retain(|o| !(o.kind == PendingOpKind::Add && now_ms > o.deadline_ms));
            deletes.extend(
                ops.iter()
                    .filter(|o| now_ms > o.deadline_ms)
                    .map(|o| (container, o.clone())),
            );
        }
        self.ops.retain(|_, ops| !ops.is_empty());
        deletes
    }

    /// Feeds `state` every pending op: its container, kind, target, command and deadline.
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        for (container, ops) in &self.ops {
            container.hash(state);
            for op in ops {
                (op.kind, op.target, op.deadline_ms).hash(state);
                op.command.digest(state);
            }
        }
    }

    /// `clear`: every op forgotten (a new serving leader).
    pub fn clear(&mut self) {
        self.ops.clear();
    }

    /// Ops pending in all.
    pub fn len(&self) -> usize {
        self.ops.values().map(Vec::len).sum()
    }

    /// No op pending.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}
