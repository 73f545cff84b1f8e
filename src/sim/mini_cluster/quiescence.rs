//! When the cluster is settled: nothing in flight between its SCMs and datanodes, and
//! what is when it is not ([`InFlight`], the story of what never happened when a cluster
//! fails to settle).

use std::fmt;

use super::cluster::{ClusterError, MiniOzoneCluster};
use crate::datanode::DatanodeError;
use crate::datanode::container::{ContainerController, ContainerError};
use crate::datanode::daemon::Datanode;
use crate::hdds::container::ContainerReplicaReport;
use crate::hdds::ids::{ContainerId, DatanodeId, ScmId};
use crate::scm::StorageContainerManager;

/// What a cluster still has in flight ([`MiniOzoneCluster::in_flight`]); empty when it is
/// quiescent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InFlight {
    /// Transactions in the leader's deleted-block log, by id.
    pub delete_transactions: Vec<u64>,
    /// Commands an SCM holds for a datanode's next heartbeat, counted.
    pub queued_at_scms: Vec<(ScmId, DatanodeId, usize)>,
    /// Commands a datanode took (or its executors hold) and has not run yet, and scans it
    /// has queued, counted.
    pub queued_at_datanodes: Vec<(DatanodeId, usize)>,
    /// Datanodes with a replica holding a delete transaction its deleting service has not
    /// run.
    pub pending_deletions: Vec<DatanodeId>,
    /// Replicas the leader does not hold as their datanode (one it reaches) reports them.
    pub unreported: Vec<(DatanodeId, ContainerId)>,
}

impl InFlight {
    /// Nothing in flight.
    pub fn is_empty(&self) -> bool {
        self.delete_transactions.is_empty()
            && self.queued_at_scms.is_empty()
            && self.queued_at_datanodes.is_empty()
            && self.pending_deletions.is_empty()
            && self.unreported.is_empty()
    }
}

impl fmt::Display for InFlight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return write!(f, "nothing in flight");
        }
        let mut parts = Vec::new();
        if !self.delete_transactions.is_empty() {
            parts.push(format!(
                "delete transactions {:?} in the log",
                self.delete_transactions
            ));
        }
        for (scm, dn, n) in &self.queued_at_scms {
            parts.push(format!("{n} command(s) for {dn} queued at {scm}"));
        }
        for (dn, n) in &self.queued_at_datanodes {
            parts.push(format!("{n} command(s) not yet run on {dn}"));
        }
        for dn in &self.pending_deletions {
            parts.push(format!("delete transactions not yet run on {dn}"));
        }
        for (dn, container) in &self.unreported {
            parts.push(format!(
                "{dn}'s replica of {container} not as the leader holds it"
            ));
        }
        write!(f, "{}", parts.join("; "))
    }
}

impl MiniOzoneCluster {
    /// Ticks until nothing is in flight (see [`is_quiescent`](Self::is_quiescent)) both
    /// before and after a tick, at most `max_ticks` ticks: the tick between shows that the
    /// SCMs' services (a replication manager pass, a block deleting round) had nothing
    /// left to send either. Returns the ticks run. With a replication manager interval
    /// longer than a tick, leave the ticks to cover it.
    pub fn run_until_quiescent(&self, max_ticks: usize) -> Result<usize, ClusterError> {
        let mut was_quiescent = false;
        for ticks in 0..max_ticks {
            let quiescent = self.is_quiescent()?;
            if quiescent && was_quiescent {
                return Ok(ticks);
            }
            was_quiescent = quiescent;
            self.tick()?;
        }
        if was_quiescent && self.is_quiescent()? {
            return Ok(max_ticks);
        }
        Err(ClusterError::NotQuiescent { ticks: max_ticks })
    }

    /// Nothing in flight: the leader's deleted-block log is empty, no SCM holds a command
    /// for any datanode, no datanode holds a command or a delete transaction to execute,
    /// and the leader holds each replica as the datanode would report it now (for every
    /// datanode it reaches), so no state change waits in a report.
    pub fn is_quiescent(&self) -> Result<bool, ClusterError> {
        let leader = self.leader()?;
        if !leader.deleted_block_log().is_empty() {
            return Ok(false);
        }
        for dn in &self.datanodes {
            let id = dn.id();
            if self
                .scms
                .board
                .running()
                .iter()
                .any(|scm| scm.queued_for(id) > 0)
                || dn.context().queue_len() + dn.executor_backlog() > 0
                || self.pending_deletions(dn)?
            {
                return Ok(false);
            }
        }
        // The dearest check last: every report the leader would take now.
        Ok(self.datanodes.iter().all(|dn| {
            self.scms.board.is_cut(dn.id(), leader.id())
                || self.leader_knows_replicas_of(&leader, dn)
        }))
    }

    /// Whether `leader` holds every replica of `dn` as `dn` reports it now (the first
    /// replica it does not ends the check).
    fn leader_knows_replicas_of(&self, leader: &StorageContainerManager, dn: &Datanode) -> bool {
        dn.replicas()
            .container_report()
            .iter()
            .all(|report| holds_as_reported(leader, dn.id(), report))
    }

    /// Whether a replica of the datanode at `index` holds a delete transaction its block
    /// deleting service has not run.
    pub fn has_pending_deletions(&self, index: usize) -> Result<bool, ClusterError> {
        self.pending_deletions(self.datanode(index)?)
    }

    /// Whether a replica of `dn` still holds a delete transaction to execute.
    fn pending_deletions(&self, dn: &Datanode) -> Result<bool, ClusterError> {
        let replicas = dn.replicas();
        for id in replicas.container_ids() {
            let container = replicas.container(id).map_err(DatanodeError::from)?;
            let pending = container
                .store()
                .pending_transactions(1)
                .map_err(|e| DatanodeError::from(ContainerError::store(id)(e)))?;
            if !pending.is_empty() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Everything in flight now (see [`InFlight`]): what [`is_quiescent`](Self::is_quiescent)
    /// looks for, all of it listed rather than the first found. For the story of a cluster
    /// that does not settle.
    pub fn in_flight(&self) -> Result<InFlight, ClusterError> {
        let leader = self.leader()?;
        let mut in_flight = InFlight {
            delete_transactions: leader
                .deleted_block_log()
                .iter()
                .map(|tx| tx.tx_id)
                .collect(),
            ..InFlight::default()
        };
        let scms = self.scms.board.running();
        for dn in &self.datanodes {
            let id = dn.id();
            for scm in &scms {
                let queued = scm.queued_for(id);
                if queued > 0 {
                    in_flight.queued_at_scms.push((scm.id(), id, queued));
                }
            }
            let queued = dn.context().queue_len() + dn.executor_backlog();
            if queued > 0 {
                in_flight.queued_at_datanodes.push((id, queued));
            }
            if self.pending_deletions(dn)? {
                in_flight.pending_deletions.push(id);
            }
            if !self.scms.board.is_cut(id, leader.id()) {
                in_flight.unreported.extend(
                    self.replicas_unknown_to(&leader, dn)
                        .into_iter()
                        .map(|container| (id, container)),
                );
            }
        }
        Ok(in_flight)
    }

    /// The replicas of `dn` that `leader` does not hold as `dn` reports them now.
    fn replicas_unknown_to(
        &self,
        leader: &StorageContainerManager,
        dn: &Datanode,
    ) -> Vec<ContainerId> {
        dn.replicas()
            .container_report()
            .iter()
            .filter(|report| !holds_as_reported(leader, dn.id(), report))
            .map(|report| report.container)
            .collect()
    }
}

/// Whether `leader` holds `datanode`'s replica as `report` has it.
fn holds_as_reported(
    leader: &StorageContainerManager,
    datanode: DatanodeId,
    report: &ContainerReplicaReport,
) -> bool {
    leader
        .replica_reports(report.container)
        .get(&datanode)
        .is_some_and(|known| known == report)
}
