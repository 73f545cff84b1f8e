//! [`SlotDatanode`]: a datanode as SCM container allocation sees it (HDDS-16891), for the
//! SCM scenarios of [`super::scm_cluster`].
//!
//! Only what decides whether a grant fits: one volume with room for a number of
//! containers, a container created on its first write (as `HddsDispatcher` creates a
//! missing container for a write), a create refused when no room is left, and the node
//! and container reports that tell SCM about it. No blocks, no chunks, no heartbeat thread: the cluster harness
//! delivers the reports.

use std::collections::BTreeSet;

use crate::hdds::container::{ContainerReplicaReport, ContainerState};
use crate::hdds::ids::{ContainerId, DatanodeId};
use crate::hdds::report::StorageReport;
use crate::sync::Mutex;

/// A datanode with a number of container slots: containers are created on their first
/// write and a create is refused when no slot is left.
#[derive(Debug)]
pub struct SlotDatanode {
    id: DatanodeId,
    slots: u64,
    container_size: u64,
    created: Mutex<BTreeSet<ContainerId>>,
    refused: Mutex<Vec<ContainerId>>,
}

impl SlotDatanode {
    /// A datanode with room for `slots` containers of `container_size` bytes (and half a
    /// container more, so the space check's rounding never decides a scenario).
    pub fn new(id: DatanodeId, slots: u64, container_size: u64) -> Self {
        Self {
            id,
            slots,
            container_size,
            created: Mutex::new(BTreeSet::new()),
            refused: Mutex::new(Vec::new()),
        }
    }

    /// Its id.
    pub fn id(&self) -> DatanodeId {
        self.id
    }

    /// How many containers it has room for.
    pub fn slots(&self) -> u64 {
        self.slots
    }

    /// Its single volume: committed space grows by a container per created container.
    pub fn storage_report(&self) -> StorageReport {
        self.full_report().0
    }

    /// The volume and the containers it holds, read together: what the datanode reports
    /// when it (re)registers.
    pub fn full_report(&self) -> (StorageReport, Vec<ContainerReplicaReport>) {
        let created = self.created.lock();
        let capacity = self
            .slots
            .saturating_mul(self.container_size)
            .saturating_add(self.container_size / 2);
        let committed = (created.len() as u64).saturating_mul(self.container_size);
        (
            StorageReport::new(capacity, committed, 0),
            created
                .iter()
                .map(|&id| ContainerReplicaReport::new(id, ContainerState::Open))
                .collect(),
        )
    }

    /// The first write of `container`: creates it if a slot is left, else refuses it.
    /// Returns whether the container exists afterwards.
    pub fn create_on_first_write(&self, container: ContainerId) -> bool {
        let mut created = self.created.lock();
        if created.contains(&container) {
            return true;
        }
        if (created.len() as u64) < self.slots {
            created.insert(container);
            true
        } else {
            self.refused.lock().push(container);
            false
        }
    }

    /// Containers it holds.
    pub fn created(&self) -> BTreeSet<ContainerId> {
        self.created.lock().clone()
    }

    /// Creates it refused for lack of space.
    pub fn refused(&self) -> Vec<ContainerId> {
        self.refused.lock().clone()
    }
}
