//! The SCMs' side of a [`MiniOzoneCluster`](super::MiniOzoneCluster): what one tick of the
//! SCMs does, for the stepped cluster, and each SCM's services on threads of their own,
//! for a started one (`ReplicationManager`'s monitor and its two processors,
//! `SCMBlockDeletingService`), each run once each time the cluster's clock moves.

use super::link::Switchboard;
use crate::clock::{Pace, StopFlag};
use crate::hdds::ids::{DatanodeId, ScmId};
use crate::scm::{ScmError, StorageContainerManager};
use crate::sim::ratis::SimulatedRatis;
use crate::sync::channel::Sender;
use crate::sync::{Arc, thread};

/// The threads of a started cluster and how to stop them: the SCMs' services (stopped
/// through the pace), and, on real threads, the pacer that moves the clock (stopped by
/// dropping its sender). Each datanode stops its own.
#[derive(Debug)]
pub(super) struct Started {
    pub(super) stop: StopFlag,
    pub(super) scm_threads: Vec<thread::JoinHandle<()>>,
    pub(super) pacer: Option<(Sender<()>, thread::JoinHandle<()>)>,
}

/// An SCM service as a started cluster runs it: what it does on each move of the clock.
type ScmService = fn(&ScmServices, &StorageContainerManager);

/// Each SCM's services on a started cluster, with the names of their threads.
const SCM_SERVICES: [(&str, ScmService); 4] = [
    ("replication manager", |services, scm| {
        services.leave_safe_mode_when_ready(scm);
        // A refused pass (deposed, a full command queue) is tried again next move.
        let _ = scm.run_replication_manager();
    }),
    ("over-replicated processor", |_, scm| {
        let _ = scm.run_over_replicated_processor();
    }),
    ("under-replicated processor", |_, scm| {
        let _ = scm.run_under_replicated_processor();
    }),
    ("block deleting service", |_, scm| {
        let _ = scm.run_block_deleting_service();
    }),
];

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

    /// Every SCM's services, each on a thread of its own, running once at start and
    /// again each time `pace` moves, until `stop`. A service runs on whatever SCM holds
    /// its slot then (none while it is crashed, the restarted one after).
    pub(super) fn spawn_threads(
        &self,
        pace: &Pace,
        stop: &StopFlag,
    ) -> Vec<thread::JoinHandle<()>> {
        let mut threads = Vec::new();
        for scm in self.board.ids() {
            for (name, service) in SCM_SERVICES {
                let (services, pace, stop) = (self.clone(), pace.clone(), stop.clone());
                let label = format!("{scm} · {name}");
                threads.push(thread::spawn_named(&label, move || {
                    services.serve(scm, service, &pace, &stop)
                }));
            }
        }
        threads
    }

    /// One SCM service's thread.
    fn serve(&self, scm: ScmId, service: ScmService, pace: &Pace, stop: &StopFlag) {
        let mut seen = pace.moves();
        loop {
            if let Some(running) = self.board.scm(scm) {
                service(self, &running);
            }
            match pace.wait_moved(seen, stop) {
                Some(moves) => seen = moves,
                None => return,
            }
        }
    }

    /// One tick of the SCMs: each SCM in safe mode leaves it if every datanode has
    /// registered with it, then every running SCM runs its replication manager, its
    /// processors and its block deleting service, each deciding by what it believes
    /// (only a serving leader does anything; a deposed leader that has not heard yet
    /// still does, as in Ozone). An SCM deposed during its round skips the rest of it.
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
