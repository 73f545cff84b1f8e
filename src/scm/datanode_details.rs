//! What a datanode tells SCM about itself when it registers (`DatanodeDetails`, the fields
//! `SCMNodeManager.register` compares), and what a registration did ([`Registration`]).
//!
//! A datanode that is registered already and registers again with a changed address
//! (IP or host name), software version or port set gets a fresh `DatanodeInfo` in Ozone
//! (`NodeStateManager.updateNode`): with it an empty pending bucket (HDDS-16891).

use std::collections::BTreeMap;

use crate::hdds::ids::DatanodeId;

/// A port a datanode exposes (`DatanodeDetails.Port.Name`, the ones used here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PortName {
    /// The standalone (gRPC) port, 9859 by default.
    Standalone,
    /// The Ratis port, 9858 by default.
    Ratis,
    /// The replication port, 9886 by default.
    Replication,
}

/// A datanode's registration details (`DatanodeDetails`, the fields SCM's registration
/// compares; the id is its UUID).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DatanodeDetails {
    /// The datanode.
    pub id: DatanodeId,
    /// Its IP address.
    pub ip_address: String,
    /// Its host name.
    pub host_name: String,
    /// Its software version (`DatanodeDetails.getVersion`).
    pub version: String,
    /// Its ports by name, compared by name and value (`DatanodeDetails.portsChanged`).
    pub ports: BTreeMap<PortName, u16>,
}

impl DatanodeDetails {
    /// Datanode `id` at `10.0.0.<id>`, host `dn<id>`, version `2.2.0`, Ozone's default
    /// ports.
    pub fn new(id: DatanodeId) -> Self {
        Self {
            id,
            ip_address: format!("10.0.0.{}", id.0),
            host_name: format!("dn{}", id.0),
            version: "2.2.0".into(),
            ports: BTreeMap::from([
                (PortName::Standalone, 9859),
                (PortName::Ratis, 9858),
                (PortName::Replication, 9886),
            ]),
        }
    }

    /// What changed from `self` (the registered details) to `new`, in the order
    /// `SCMNodeManager.register` tests it: address (IP or host name), then version, then
    /// ports. `None` when nothing it compares changed.
    pub fn change_to(&self, new: &DatanodeDetails) -> Option<RegistrationChange> {
        if self.ip_address != new.ip_address || self.host_name != new.host_name {
            Some(RegistrationChange::Address)
        } else if self.version != new.version {
            Some(RegistrationChange::Version)
        } else if self.ports != new.ports {
            Some(RegistrationChange::Ports)
        } else {
            None
        }
    }
}

/// Why a registered datanode's `DatanodeInfo` is replaced when it registers again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RegistrationChange {
    /// Its IP address or host name changed: the registration's node report is processed
    /// right after the replacement.
    Address,
    /// Its software version changed: no node report is processed, so the new
    /// `DatanodeInfo` has no storage report until the next heartbeat's.
    Version,
    /// Its port set changed: as for a version change.
    Ports,
}

/// What a registration did (`SCMNodeManager.register`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Registration {
    /// A datanode new to this SCM: a fresh `DatanodeInfo`, the node report processed.
    New,
    /// A registered datanode with changed details: its `DatanodeInfo` was replaced.
    Updated(RegistrationChange),
    /// A registered datanode with the same details: nothing changed (the node report of
    /// the registration is not processed).
    Unchanged,
}
