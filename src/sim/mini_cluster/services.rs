//! The SCMs' side of a [`MiniOzoneCluster`](super::MiniOzoneCluster): what one tick of the
//! SCMs does, shared by the stepped cluster and the service thread of a started one.

use super::link::Switchboard;
use crate::hdds::ids::DatanodeId;
use crate::scm::{ScmError, StorageContainerManager};
use crate::sim::ratis::SimulatedRatis;
use crate::sync::channel::Sender;
use crate::sync::{Arc, thread};

/// The SCMs' service thread of a started cluster, and how to stop it (dropping `stop`).
#[derive(Debug)]
pub(super) struct ServiceThread {
    pub(super) stop: Sender<()>,
    pub(super) thread: thread::JoinHandle<()>,
}

/// The SCMs as the cluster runs them: their slots, their Ratis ring, and the datanodes
/// their safe mode waits for.
#[derive(Debug, Clone)]
pub(super) struct ScmServices {
    pub(super) board: Arc<Switchboard>,
    pub(super) ring: SimulatedRatis,
    pub(super) datanodes: Vec<DatanodeId>,
}

impl ScmServices {
    /// The SCM the ring says leads, if it runs.
    pub(super) fn leader(&self) -> Option<Arc<StorageContainerManager>> {
        let (_, leader) = self.ring.leadership();
        leader.and_then(|id| self.board.scm(id))
    }

    /// One tick of the SCMs: each SCM in safe mode leaves it if every datanode has
    /// registered with it, then every running SCM runs its replication manager and block
    /// deleting service, each deciding by what it believes (only a serving leader does
    /// anything; a deposed leader that has not heard yet still does, as in Ozone). An SCM
    /// deposed during its round skips the rest of it.
    pub(super) fn tick(&self) -> Result<(), ScmError> {
        let running = self.board.running();
        for scm in &running {
            self.leave_safe_mode_when_ready(scm);
        }
        for scm in &running {
            skip_if_deposed(scm.run_replication_manager())?;
            skip_if_deposed(scm.run_over_replicated_processor())?;
            skip_if_deposed(scm.run_under_replicated_processor())?;
            skip_if_deposed(scm.run_block_deleting_service())?;
        }
        Ok(())
    }

    /// `SCMSafeModeManager` as the cluster runs it: `scm` leaves safe mode once every
    /// datanode of the cluster has registered with it and sent a node report (the
    /// datanode rule with its minimum at the cluster's size; every container then has a
    /// replica on a reporting datanode, which meets the container rule). The rebuild of
    /// the pending allocations (HDDS-16891) relies on this: it reserves only on datanodes
    /// it knows.
    pub(super) fn leave_safe_mode_when_ready(&self, scm: &StorageContainerManager) {
        if !scm.context().in_safe_mode {
            return;
        }
        let all_reported = self.datanodes.iter().all(|&dn| {
            scm.nodes()
                .get(dn)
                .is_ok_and(|node| !node.storage_reports().is_empty())
        });
        if all_reported {
            scm.exit_safe_mode();
        }
    }
}

/// A service's result, with a not-leader refusal taken as the end of the SCM's round: the
/// SCM was deposed while it ran, as a real service finds out and stops.
fn skip_if_deposed(result: Result<usize, ScmError>) -> Result<(), ScmError> {
    match result {
        Ok(_) | Err(ScmError::NotLeader { .. }) => Ok(()),
        Err(other) => Err(other),
    }
}
