//! The replication manager's own state (its service status and
//! `ContainerReplicaPendingOps`), never replicated: a leaf the SCM holds and the manager's
//! runs read.

use super::super::pending_ops::ContainerReplicaPendingOps;
use crate::hdds::term::Term;

/// The replication manager's own state (`ReplicationManager`'s service status and
/// `ContainerReplicaPendingOps`), never replicated.
#[derive(Debug, Default)]
pub(super) struct ReplicationManagerState {
    /// The leader term it last became RUNNING in.
    pub(super) running_for_term: Option<Term>,
    /// When it became RUNNING (`lastTimeToBeReadyInMillis`).
    pub(super) ready_since_ms: u64,
    /// When its last pass ran.
    pub(super) last_pass_ms: Option<u64>,
    /// Ops sent and not yet seen done.
    pub(super) pending: ContainerReplicaPendingOps,
}
