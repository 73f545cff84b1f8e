//! The SCM's side of its datanodes' reports (`SCMNodeManager`, `ContainerReportHandler`):
//! registration, node reports (the space allocation reads) and container reports (the
//! replicas, which confirm pending allocations away, HDDS-16891, and drive the
//! container's lifecycle: `report_decision`).

use std::collections::BTreeSet;

use super::super::datanode_details::{DatanodeDetails, Registration, RegistrationChange};
use super::super::error::ScmError;
use super::super::ha::LogEntry;
use super::super::pending_ops::PendingOpKind;
use super::report_decision::{ReportAction, decide, raise_sequence_id};
use super::{ContainerTable, Listed, Slots, StorageContainerManager};
use crate::hdds::command::CommandKind;
use crate::hdds::container::{ContainerReplicaReport, ContainerState};
use crate::hdds::ids::{ContainerId, DatanodeId};
use crate::hdds::report::StorageReport;

impl StorageContainerManager {
    /// A datanode registers with its details and a node report (`SCMNodeManager.register`;
    /// see [`NodeManager::register`] for when its `DatanodeInfo` and bucket are replaced).
    ///
    /// [`NodeManager::register`]: super::super::node::NodeManager::register
    pub fn register_datanode(
        &self,
        details: &DatanodeDetails,
        node_report: Vec<StorageReport>,
    ) -> Registration {
        let slots = Slots::of(&node_report, self.config.container_size);
        let registration = self.nodes.register(details, node_report);
        if let Registration::Updated(change) = registration {
            let bucket = if self.hardening.keep_space_on_reregistration {
                "kept"
            } else {
                "empty"
            };
            // Only an address change has the registration's node report processed; otherwise
            // SCM holds no storage report of the datanode until its next one.
            let slots = if change == RegistrationChange::Address {
                slots
            } else {
                Slots(None)
            };
            crate::events::debug!(
                node = %self.id,
                datanode = %details.id,
                change = ?change,
                bucket,
                slots = %slots,
                "datanode re-registered"
            );
        }
        registration
    }

    /// A node report: the datanode's volumes.
    pub fn process_node_report(
        &self,
        datanode: DatanodeId,
        reports: Vec<StorageReport>,
    ) -> Result<(), ScmError> {
        let size = self.config.container_size;
        let slots = Slots::of(&reports, size);
        let replaced = self.nodes.process_node_report(datanode, reports)?;
        // A report that leaves the slots as they were tells no story: it is not logged.
        let was = Slots::of(&replaced, size);
        if was.0 != slots.0 {
            crate::events::debug!(
                node = %self.id,
                datanode = %datanode,
                slots = %slots,
                was = %was,
                "storage report processed"
            );
        }
        Ok(())
    }

    /// An incremental container report (`IncrementalContainerReportHandler`, run on every
    /// SCM, leader or not): each replica is processed as
    /// `AbstractContainerReportHandler.processContainerReplica`
    /// does (the container's sequence id raised, its state moved, the replica recorded or
    /// ignored, a delete sent), and a container reported for the first time by this
    /// datanode has its pending entry on the datanode removed. Unknown containers are
    /// reported back after the known ones were applied (a lagging follower may not have
    /// applied their add-container yet).
    pub fn process_container_report(
        &self,
        datanode: DatanodeId,
        replicas: &[ContainerReplicaReport],
    ) -> Result<(), ScmError> {
        self.apply_container_report(datanode, replicas, false)
    }

    /// A full container report (`ContainerReportHandler`): as
    /// [`process_container_report`](Self::process_container_report), then a replica this
    /// datanode no longer lists is gone (deleted, or lost with its volume:
    /// `processMissingReplicas`).
    pub fn process_full_container_report(
        &self,
        datanode: DatanodeId,
        replicas: &[ContainerReplicaReport],
    ) -> Result<(), ScmError> {
        self.apply_container_report(datanode, replicas, true)
    }

    fn apply_container_report(
        &self,
        datanode: DatanodeId,
        replicas: &[ContainerReplicaReport],
        full: bool,
    ) -> Result<(), ScmError> {
        let node = self.nodes.get(datanode)?;
        let mut processed = ProcessedReport::default();
        {
            let mut table = self.table.write();
            for report in replicas {
                self.process_replica(&mut table, datanode, report, &mut processed);
            }
            if full {
                let listed: BTreeSet<ContainerId> = replicas.iter().map(|r| r.container).collect();
                for (container, reported) in table.replicas.iter_mut() {
                    if !listed.contains(container) && reported.remove(&datanode).is_some() {
                        processed.gone.push(*container);
                    }
                }
            }
        }
        let mut pending_removed = Vec::new();
        for &container in &processed.confirmed {
            if self
                .nodes
                .tracker()
                .remove_pending_allocation(&node, container)
            {
                pending_removed.push(container);
            }
        }
        self.complete_pending_ops(datanode, &processed);
        self.log_report(datanode, replicas, &processed, &pending_removed);
        self.carry_out(datanode, &processed.actions);
        if processed.unknown.is_empty() {
            Ok(())
        } else {
            Err(ScmError::UnknownContainers {
                datanode,
                containers: processed.unknown,
            })
        }
    }

    /// `processContainerReplica` for one replica, under the table lock: the actions it
    /// calls for are carried out after the lock is released.
    fn process_replica(
        &self,
        table: &mut ContainerTable,
        datanode: DatanodeId,
        report: &ContainerReplicaReport,
        processed: &mut ProcessedReport,
    ) {
        let container = report.container;
        let Some(info) = table.applied.containers.get_mut(&container) else {
            processed.unknown.push(container);
            return;
        };
        raise_sequence_id(info, report);
        let decision = decide(info, report, self.config.deleting_replica_rule);
        if matches!(decision.action, Some(ReportAction::ComeBack(_))) && !self.context().is_leader {
            // On a follower `transitionDeletingOrDeletedToTargetState` (not behind the
            // leader-only wrapper of HDDS-14989) fails SCM_NOT_LEADER, which ends
            // `processContainerReplica` before the replica is recorded.
            return;
        }
        if let Some(action) = decision.action {
            processed.actions.push((container, action));
        }
        if decision.ignore {
            return;
        }
        let reported = table.replicas.entry(container).or_default();
        if report.state == ContainerState::Deleted {
            if reported.remove(&datanode).is_some() {
                processed.gone.push(container);
            }
        } else if reported.insert(datanode, *report).is_none() {
            processed.confirmed.push(container);
        }
    }

    /// The report's ops done: a replica that appeared completes a pending add, one that
    /// went a pending delete (`completeAddReplica`, `completeDeleteReplica`).
    fn complete_pending_ops(&self, datanode: DatanodeId, processed: &ProcessedReport) {
        if processed.confirmed.is_empty() && processed.gone.is_empty() {
            return;
        }
        let mut rm = self.replication.lock();
        for &container in &processed.confirmed {
            rm.pending.complete(container, PendingOpKind::Add, datanode);
        }
        for &container in &processed.gone {
            rm.pending
                .complete(container, PendingOpKind::Delete, datanode);
        }
    }

    /// The state changes and deletes the replicas called for, on the leader only (a
    /// follower's report handler records the replicas and changes nothing, except a
    /// replica that would bring its container back, which it does not record). A change
    /// the log refuses is left for the next report.
    fn carry_out(&self, datanode: DatanodeId, actions: &[(ContainerId, ReportAction)]) {
        if actions.is_empty() || !self.context().is_leader {
            return;
        }
        for &(container, action) in actions {
            match action {
                ReportAction::Move(to) => {
                    self.update_state(container, LogEntry::UpdateContainerState(container, to));
                }
                ReportAction::ComeBack(to) => {
                    let entry = LogEntry::TransitionDeletingOrDeleted(container, to);
                    self.update_state(container, entry);
                }
                ReportAction::DeleteReplica { force } => {
                    let delete = CommandKind::DeleteContainer { container, force };
                    // One at a time: a delete already queued for the replica is enough.
                    if !self.commands.contains(datanode, &delete) {
                        let _ = self.send_command(datanode, delete);
                    }
                }
            }
        }
    }

    fn log_report(
        &self,
        datanode: DatanodeId,
        replicas: &[ContainerReplicaReport],
        processed: &ProcessedReport,
        pending_removed: &[ContainerId],
    ) {
        if !processed.unknown.is_empty() {
            crate::events::debug!(
                node = %self.id,
                datanode = %datanode,
                confirmed = %Listed(&processed.confirmed),
                pending_removed = %Listed(pending_removed),
                unknown = %Listed(&processed.unknown),
                "container report processed"
            );
        } else if !replicas.is_empty() {
            crate::events::debug!(
                node = %self.id,
                datanode = %datanode,
                confirmed = %Listed(&processed.confirmed),
                pending_removed = %Listed(pending_removed),
                "container report processed"
            );
        }
    }

    /// The pending containers of a datanode (after a roll), stated in an event for the
    /// reservations monitor (HDDS-16891).
    pub fn pending(&self, datanode: DatanodeId) -> Result<BTreeSet<ContainerId>, ScmError> {
        let node = self.nodes.get(datanode)?;
        let pending = self.nodes.tracker().pending(&node);
        crate::events::debug!(
            node = %self.id,
            datanode = %datanode,
            pending = %Listed(&pending.iter().copied().collect::<Vec<_>>()),
            "pending allocations read"
        );
        Ok(pending)
    }
}

/// What a container report did, gathered under the table lock.
#[derive(Debug, Default)]
struct ProcessedReport {
    /// Containers this datanode reported for the first time.
    confirmed: Vec<ContainerId>,
    /// Containers whose replica on this datanode is gone (reported DELETED, or no longer
    /// listed by a full report).
    gone: Vec<ContainerId>,
    /// Containers the SCM has not applied.
    unknown: Vec<ContainerId>,
    /// What the replicas called for.
    actions: Vec<(ContainerId, ReportAction)>,
}
