//! [`SlotDatanode`]: a datanode as SCM container allocation sees it (HDDS-16891), for the
//! SCM scenarios of [`super::scm_cluster`].
//!
//! Only what decides whether a grant fits: one volume with room for a number of
//! containers, a container created on its first write (as `HddsDispatcher` creates a
//! missing container for a write), a create refused when no room is left, the node and
//! container reports that tell SCM about it, and the details it registers with (which a
//! restart on a new address, an upgrade or a port change alters). No blocks, no chunks, no
//! heartbeat thread: the cluster harness delivers the registrations and reports. A refused
//! create, the harm of HDDS-16891, is the event `create refused` of its
//! [story](crate::story).

use std::collections::BTreeSet;

use crate::hdds::container::{ContainerReplicaReport, ContainerState};
use crate::hdds::ids::{ContainerId, DatanodeId};
use crate::hdds::report::StorageReport;
use crate::scm::datanode_details::{DatanodeDetails, PortName, RegistrationChange};
use crate::sync::Mutex;

/// A datanode with a number of container slots: containers are created on their first
/// write and a create is refused when no slot is left.
#[derive(Debug)]
pub struct SlotDatanode {
    id: DatanodeId,
    slots: u64,
    container_size: u64,
    details: Mutex<DatanodeDetails>,
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
            details: Mutex::new(DatanodeDetails::new(id)),
            created: Mutex::new(BTreeSet::new()),
            refused: Mutex::new(Vec::new()),
        }
    }

    /// Its id.
    pub fn id(&self) -> DatanodeId {
        self.id
    }

    /// What it registers with now.
    pub fn details(&self) -> DatanodeDetails {
        self.details.lock().clone()
    }

    /// It restarts with `change` to its details (a new address, an upgrade to a new
    /// software version, or a new port) and returns the details it registers with next.
    pub fn change_details(&self, change: RegistrationChange) -> DatanodeDetails {
        let mut details = self.details.lock();
        match change {
            RegistrationChange::Address => {
                let moved = details
                    .ip_address
                    .rsplit('.')
                    .next()
                    .map_or(0, |octet| octet.parse::<u16>().map_or(0, |n| (n + 1) % 256));
                details.ip_address = format!("10.0.1.{moved}");
            }
            RegistrationChange::Version => details.version.push_str("-upgraded"),
            RegistrationChange::Ports => {
                let ratis = details.ports.entry(PortName::Ratis).or_insert(9858);
                *ratis = ratis.wrapping_add(1);
            }
        }
        details.clone()
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
        (
            self.volume_of(&created),
            created
                .iter()
                .map(|&id| ContainerReplicaReport::new(id, ContainerState::Open, self.id()))
                .collect(),
        )
    }

    /// Runs `send` with its storage report while no create can slip in, as its endpoint
    /// sends a registration or a heartbeat: a report sent this way is never older than a
    /// container report the datanode sent before it. Returns what `send` returns.
    pub fn send_storage_report<R>(&self, send: impl FnOnce(StorageReport) -> R) -> R {
        let created = self.created.lock();
        send(self.volume_of(&created))
    }

    /// Committed space grows by a container per created container.
    fn volume_of(&self, created: &BTreeSet<ContainerId>) -> StorageReport {
        let capacity = self
            .slots
            .saturating_mul(self.container_size)
            .saturating_add(self.container_size / 2);
        let committed = (created.len() as u64).saturating_mul(self.container_size);
        StorageReport::new(capacity, committed, 0)
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
            crate::events::debug!(
                node = %self.id,
                container = container.0,
                slots = self.slots,
                holds = created.len(),
                "container created"
            );
            true
        } else {
            self.refused.lock().push(container);
            crate::events::debug!(
                node = %self.id,
                container = container.0,
                slots = self.slots,
                holds = created.len(),
                why = "no slot",
                "create refused"
            );
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
