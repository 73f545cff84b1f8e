//! The replication manager's under-replication handler (`RatisUnderReplicationHandler`):
//! a container with fewer healthy replicas than its factor gets replicate commands, from
//! its best replicas to datanodes that hold none, by the under-replicated processor after
//! the pass queued it.
//!
//! **What it meets (HDDS-16891).** Each replicate's pending add records a pending
//! allocation on its target (`SCMNodeManager.opAdded`, HDDS-14924): the target's space is
//! taken before any report shows the copy, so a grant does not count it free; like any
//! pending allocation it lives in the leader's memory only: a new leader forgets it, which
//! `ScmHardening::rebuild_reserves_replication_targets` makes up for.
//!
//! Placement is not modelled (targets are the datanodes with room, by id), nor are
//! vulnerable UNHEALTHY replicas, throttling and push replication: the command goes to
//! the target, which pulls from the sources (`FIDELITY.md`).

use super::super::container_info::LifeCycleState;
use super::super::error::ScmError;
use super::super::node::DatanodeInfo;
use super::super::pending_ops::{PendingOp, PendingOpKind};
use super::super::replica_count::RatisContainerReplicaCount;
use super::StorageContainerManager;
use super::replication_manager::ContainerSnapshot;
use crate::hdds::command::CommandKind;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, DatanodeId};

impl StorageContainerManager {
    /// `processAndSendCommands` for an under-replicated container, with its replicas and
    /// `pending` ops as read now: nothing for an empty QUASI_CLOSED container
    /// (HDDS-14684), or when its pending adds already make up for what is missing; else a
    /// replicate command to each target needed, naming the sources. Returns the commands
    /// queued.
    pub(super) fn handle_under_replicated(
        &self,
        container: &ContainerSnapshot,
        pending: &[PendingOp],
    ) -> Result<usize, ScmError> {
        let info = &container.info;
        let replicas = &container.replicas;
        if info.state == LifeCycleState::QuasiClosed && replicas.values().all(|r| r.is_empty) {
            return Ok(0);
        }
        let count = |consider| {
            RatisContainerReplicaCount::new(
                info.state,
                info.sequence_id,
                container.required,
                replicas,
                pending,
                consider,
            )
        };
        let (without, with) = (count(false), count(true));
        if without.is_sufficiently_replicated(true)
            || replicas.is_empty()
            || (without.healthy == 0 && with.is_sufficiently_replicated(true))
        {
            return Ok(0);
        }
        let basis = if without.healthy > 0 { without } else { with };
        let sources = self.replication_sources(container, pending, without.healthy == 0);
        if sources.is_empty() {
            return Ok(0);
        }
        let targets = self.replication_targets(container, pending, basis.missing());
        for &target in &targets {
            self.send_replicate(container, target, sources.clone())?;
        }
        Ok(targets.len())
    }

    /// `getSources`: the CLOSED replicas (and the QUASI_CLOSED ones when none is CLOSED or
    /// the container is QUASI_CLOSED, the UNHEALTHY ones when none is healthy), without a
    /// pending delete, those with the highest sequence id.
    fn replication_sources(
        &self,
        container: &ContainerSnapshot,
        pending: &[PendingOp],
        none_healthy: bool,
    ) -> Vec<DatanodeId> {
        let replicas = &container.replicas;
        let any_closed = replicas.values().any(|r| r.state == ContainerState::Closed);
        let quasi_closed = !any_closed || container.info.state == LifeCycleState::QuasiClosed;
        let usable: Vec<(DatanodeId, u64)> = replicas
            .iter()
            .filter(|(dn, _)| !pending.iter().any(|op| op.is_delete_of(**dn)))
            .filter(|(_, r)| match r.state {
                ContainerState::Closed => true,
                ContainerState::QuasiClosed => quasi_closed,
                ContainerState::Unhealthy => none_healthy,
                _ => false,
            })
            .map(|(&dn, r)| (dn, r.sequence_id))
            .collect();
        let best = usable.iter().map(|(_, seq)| *seq).max();
        usable
            .into_iter()
            .filter(|(_, seq)| Some(*seq) == best)
            .map(|(dn, _)| dn)
            .collect()
    }

    /// Up to `wanted` datanodes to copy `container` to (`getTargetDatanodes`, placement
    /// aside): registered, holding no replica, no add or delete of it pending there, with
    /// room for a container, or a slot already kept for this one (by
    /// [`ScmHardening::rebuild_reserves_replication_targets`], which would otherwise stand
    /// in its own copy's way); by id.
    ///
    /// [`ScmHardening::rebuild_reserves_replication_targets`]:
    /// crate::scm::ScmHardening::rebuild_reserves_replication_targets
    pub(super) fn replication_targets(
        &self,
        container: &ContainerSnapshot,
        pending: &[PendingOp],
        wanted: usize,
    ) -> Vec<DatanodeId> {
        let busy = |dn: DatanodeId| {
            container.replicas.contains_key(&dn) || pending.iter().any(|op| op.target == dn)
        };
        let mut nodes = self.nodes.all();
        nodes.sort_by_key(|node| node.id());
        nodes
            .into_iter()
            .filter(|node| !busy(node.id()) && self.has_room_for(node, container.info.id))
            .map(|node| node.id())
            .take(wanted)
            .collect()
    }

    /// Whether `node` has room for a copy of `container`: a free slot, or one the
    /// rebuild kept for it.
    fn has_room_for(&self, node: &DatanodeInfo, container: ContainerId) -> bool {
        let tracker = self.nodes.tracker();
        tracker.has_available_space(node)
            || (self.hardening.rebuild_reserves_replication_targets
                && tracker.pending(node).contains(&container))
    }

    /// A replicate command for `target`, naming `sources` (pull mode), with its pending
    /// add.
    pub(super) fn send_replicate(
        &self,
        container: &ContainerSnapshot,
        target: DatanodeId,
        sources: Vec<DatanodeId>,
    ) -> Result<(), ScmError> {
        let id = container.info.id;
        let replicate = CommandKind::ReplicateContainer {
            container: id,
            sources,
        };
        self.send_datanode_command(id, target, replicate)?;
        crate::events::debug!(
            node = %self.id,
            container = id.0,
            datanode = %target,
            "under-replicated replica added"
        );
        Ok(())
    }
}

/// Whether `op` is an add.
pub(super) fn is_add(op: &PendingOp) -> bool {
    op.kind == PendingOpKind::Add
}
