//! The SCM's side of its datanodes' reports (`SCMNodeManager`, `ContainerReportHandler`):
//! registration, node reports (the space allocation reads) and container reports (the
//! replicas, which confirm pending allocations away, HDDS-16891).

use std::collections::BTreeSet;

use super::super::datanode_details::{DatanodeDetails, Registration, RegistrationChange};
use super::super::error::ScmError;
use super::{Listed, Slots, StorageContainerManager};
use crate::hdds::container::ContainerReplicaReport;
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
            tracing::debug!(
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
            tracing::debug!(
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
    /// SCM, leader or not): each container reported for the first time by this datanode
    /// gains the replica, and its pending entry on the datanode is removed. Unknown
    /// containers are reported back after the known ones were applied (a lagging follower
    /// may not have applied their add-container yet).
    pub fn process_container_report(
        &self,
        datanode: DatanodeId,
        replicas: &[ContainerReplicaReport],
    ) -> Result<(), ScmError> {
        self.apply_container_report(datanode, replicas, false)
    }

    /// A full container report (`ContainerReportHandler`): as
    /// [`process_container_report`](Self::process_container_report), and a replica this
    /// datanode no longer lists is gone (deleted, or lost with its volume).
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
        let mut unknown = Vec::new();
        let mut confirmed = Vec::new();
        {
            let mut table = self.table.write();
            if full {
                let listed: BTreeSet<ContainerId> = replicas.iter().map(|r| r.container).collect();
                for (container, reported) in table.replicas.iter_mut() {
                    if !listed.contains(container) {
                        reported.remove(&datanode);
                    }
                }
            }
            for report in replicas {
                let container = report.container;
                if !table.applied.containers.contains_key(&container) {
                    unknown.push(container);
                    continue;
                }
                let reported = table.replicas.entry(container).or_default();
                if reported.insert(datanode, *report).is_none() {
                    confirmed.push(container);
                }
            }
        }
        let mut pending_removed = Vec::new();
        for &container in &confirmed {
            if self
                .nodes
                .tracker()
                .remove_pending_allocation(&node, container)
            {
                pending_removed.push(container);
            }
        }
        if !unknown.is_empty() {
            tracing::debug!(
                node = %self.id,
                datanode = %datanode,
                confirmed = %Listed(&confirmed),
                pending_removed = %Listed(&pending_removed),
                unknown = %Listed(&unknown),
                "container report processed"
            );
        } else if !replicas.is_empty() {
            tracing::debug!(
                node = %self.id,
                datanode = %datanode,
                confirmed = %Listed(&confirmed),
                pending_removed = %Listed(&pending_removed),
                "container report processed"
            );
        }
        if unknown.is_empty() {
            Ok(())
        } else {
            Err(ScmError::UnknownContainers {
                datanode,
                containers: unknown,
            })
        }
    }

    /// The pending containers of a datanode (after a roll).
    pub fn pending(&self, datanode: DatanodeId) -> Result<BTreeSet<ContainerId>, ScmError> {
        let node = self.nodes.get(datanode)?;
        Ok(self.nodes.tracker().pending(&node))
    }
}
