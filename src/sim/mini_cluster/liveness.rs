//! What a cluster's SCMs still wait for once it has settled: an SCM still in safe mode and
//! the datanodes it waits for, and the pending allocations (HDDS-16891's `TwoWindowBucket`
//! entries) that have not rolled out. The liveness properties of
//! [`crate::scenarios::cluster`] read these, and print them when the bound passes.

use std::collections::BTreeSet;
use std::fmt;

use super::cluster::MiniOzoneCluster;
use crate::hdds::ids::{ContainerId, DatanodeId, ScmId};

/// A running SCM still in safe mode, and the datanodes of the cluster that have not
/// registered with it and sent it a node report (what its safe-mode rule waits for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InSafeMode {
    /// The SCM.
    pub scm: ScmId,
    /// The datanodes it still waits for.
    pub waiting_for: Vec<DatanodeId>,
}

impl fmt::Display for InSafeMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} in safe mode, never heard a node report from",
            self.scm
        )?;
        if self.waiting_for.is_empty() {
            return write!(f, " nobody it waits for (its rule was never run)");
        }
        for dn in &self.waiting_for {
            write!(f, " {dn}")?;
        }
        Ok(())
    }
}

/// Containers a running SCM holds as pending allocations on a datanode (its bucket after a
/// roll on read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingOn {
    /// The SCM.
    pub scm: ScmId,
    /// The datanode.
    pub datanode: DatanodeId,
    /// The pending containers.
    pub containers: BTreeSet<ContainerId>,
}

impl fmt::Display for PendingOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} still reserves", self.scm)?;
        for container in &self.containers {
            write!(f, " {container}")?;
        }
        write!(f, " on {}", self.datanode)
    }
}

impl MiniOzoneCluster {
    /// The running SCMs in safe mode, each with the datanodes it waits for.
    pub fn scms_in_safe_mode(&self) -> Vec<InSafeMode> {
        self.scms
            .board
            .running()
            .iter()
            .filter(|scm| scm.context().in_safe_mode)
            .map(|scm| InSafeMode {
                scm: scm.id(),
                waiting_for: self
                    .scms
                    .datanodes
                    .iter()
                    .copied()
                    .filter(|&dn| {
                        scm.nodes()
                            .get(dn)
                            .map_or(true, |node| node.storage_reports().is_empty())
                    })
                    .collect(),
            })
            .collect()
    }

    /// Every non-empty pending-allocation bucket of every running SCM, each read after its
    /// roll (`rollIfNeeded` on access).
    pub fn pending_allocations(&self) -> Vec<PendingOn> {
        let mut pending = Vec::new();
        for scm in self.scms.board.running() {
            let nodes = scm.nodes();
            for node in nodes.all() {
                let containers = nodes.tracker().pending(&node);
                if !containers.is_empty() {
                    pending.push(PendingOn {
                        scm: scm.id(),
                        datanode: node.id(),
                        containers,
                    });
                }
            }
        }
        pending
    }

    /// The SCMs' bucket roll interval (`ozone.scm.pending.container.roll.interval`).
    pub fn roll_interval_ms(&self) -> u64 {
        self.config.roll_interval_ms
    }

    /// How long an SCM waits before it sends again what a datanode was handed and lost
    /// (a restart loses its queues): the longer of the block deleting service's command
    /// timeout (`scmCommandTimeoutMs`) and the replication manager's event timeout
    /// (`hdds.scm.replication.event.timeout`).
    pub fn resend_timeout_ms(&self) -> u64 {
        self.config
            .block_deletion
            .command_timeout_ms
            .max(self.config.replication.event_timeout_ms)
    }
}
