//! An over-replicated container while leadership moves without the old leader hearing
//! it: both SCMs' replication managers queue the container, and both processors delete an
//! excess replica, the deposed one at its old term (HDDS-16449 through the replication
//! manager's queue; HDDS-17268's fence; HDDS-4589's order).
//!
//! **The race.** A pass queues the over-replicated container for the over-replicated
//! processor, which acts later. Ratis moves leadership while the old leader has not heard
//! (`notifyNotLeader` late): its processor still runs and sends its delete stamped with
//! its old term, while the new leader, its pending ops cleared, queues and deletes too.
//! With each SCM's own order of the replicas (before HDDS-4589) the two picks differ.
//! **The order is the fence that holds**: a datanode that runs the deposed leader's delete
//! before it heard the new term runs it rightly, whatever its term fencing (HDDS-17268's
//! fix drops it only once the new term arrived), so without HDDS-4589 two replicas go
//! even on fixed datanodes; with it the two deletes fall on one replica.

use super::explorable::{DriverStep, Explorable};
use super::invariants::{cluster_settles_after_healing, container_keeps_its_replication_factor};
use super::over_replicated::FailoverDeleteBehavior;
use super::setup::{ROUNDS, run_on_threads, setup};

use crate::datanode::daemon::DatanodeConfig;
use crate::scenarios::Violation;
use crate::scenarios::rng::SeededRng;
use crate::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};

/// Replicas a container should have.
const FACTOR: usize = 3;
/// The SCM that leads first and is deposed without hearing it.
const OLD_LEADER: usize = 0;
/// The SCM leadership moves to.
const NEW_LEADER: usize = 1;

/// Two SCMs and four datanodes (`behavior`) hold one CLOSED container on three of them,
/// and a replicate command to the fourth is run, so the container is over-replicated. The
/// cluster runs on its threads for `ROUNDS` (4) moves of its clock while the driver moves
/// leadership to SCM 2 without SCM 1 hearing it, and tells SCM 1 a round later, at rounds
/// the seed picks. The cluster then settles; checks
/// [`container_keeps_its_replication_factor`].
pub fn over_replicated_container_while_the_deposed_leader_processes(
    behavior: FailoverDeleteBehavior,
    seed: u64,
) -> Result<(), Violation> {
    let (cluster, key) = over_replicated(behavior).map_err(setup)?;
    let transfer_at = SeededRng::new(seed).below(ROUNDS as u64 - 1) as usize;
    run_on_threads::<()>(&cluster, Vec::new(), |round| {
        if round == transfer_at {
            transfer_unheard(&cluster)?;
        }
        if round == transfer_at + 1 {
            notify_deposed(&cluster)?;
        }
        Ok(())
    })?;
    judge(&cluster, &key)
}

/// [`over_replicated_container_while_the_deposed_leader_processes`] to explore: the
/// unheard transfer, then the old leader hearing it, are the driver's script.
pub fn over_replicated_container_while_the_deposed_leader_processes_explorable(
    behavior: FailoverDeleteBehavior,
) -> Result<Explorable, Violation> {
    let (cluster, key) = over_replicated(behavior).map_err(setup)?;
    let scripts = vec![vec![
        DriverStep::new("transfer leadership to scm2, unheard", transfer_unheard),
        DriverStep::new("scm1 hears it was deposed", notify_deposed),
    ]];
    Ok(Explorable::new(cluster, scripts, move |cluster| {
        judge(cluster, &key)
    }))
}

fn transfer_unheard(cluster: &MiniOzoneCluster) -> Result<(), Violation> {
    cluster
        .transfer_leadership_unheard(NEW_LEADER)
        .map_err(setup)
}

fn notify_deposed(cluster: &MiniOzoneCluster) -> Result<(), Violation> {
    cluster.notify_deposed(OLD_LEADER).map_err(setup)
}

/// Settled: the container at its factor.
fn judge(cluster: &MiniOzoneCluster, key: &Key) -> Result<(), Violation> {
    cluster_settles_after_healing(cluster, 50)?;
    crate::events::debug!(
        why = "settled: every command delivered",
        "cluster quiescent"
    );
    container_keeps_its_replication_factor(cluster, key.container, FACTOR)
}

/// The cluster with a container on four datanodes, every replica reported to the leader,
/// nothing queued yet for the excess, SCM 2 holding every replica as SCM 1 does.
fn over_replicated(
    behavior: FailoverDeleteBehavior,
) -> Result<(MiniOzoneCluster, Key), ClusterError> {
    let cluster = MiniOzoneCluster::builder()
        .scms(2)
        .datanodes(FACTOR + 1)
        .replication(FACTOR)
        .excess_replica_order(behavior.order())
        .datanode_config(DatanodeConfig {
            behavior: behavior.term_fencing(),
            ..DatanodeConfig::default()
        })
        .build()?;
    let key = cluster.write_key(1)?;
    cluster.run_until_quiescent(10)?;
    let spare = (0..cluster.datanode_count())
        .find(|&dn| {
            cluster
                .datanode(dn)
                .is_ok_and(|d| !key.datanodes.contains(&d.id()))
        })
        .ok_or(ClusterError::NoSuchNode {
            what: "datanode",
            index: FACTOR,
        })?;
    cluster.replicate(key.container, spare)?;
    // SCM 2 applies the container, so it records the replicas every datanode reports
    // (it judges replicas it has heard of, as a follower that kept up does).
    cluster.catch_up_scm(NEW_LEADER)?;
    for dn in 0..cluster.datanode_count() {
        cluster.tick_datanode(dn)?;
    }
    // The copy made and reported, before any pass sees four replicas.
    cluster.tick_datanode(spare)?;
    Ok((cluster, key))
}
