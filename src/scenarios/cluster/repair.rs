//! Delete transactions in flight across a leader transfer and a datanode restart, while
//! the replicas reconcile: HDDS-16811's repair meets the SCM's block deletion.
//!
//! **The race.** A lagging replica never had one of the key's blocks. Its datanode runs
//! the delete transaction first and, before the patch, keeps no trace of a block it had
//! no metadata for; a reconcile command then copies the block back from a peer that has
//! not run the transaction yet (here: one cut off from the SCMs). The transaction is
//! acknowledged everywhere, and the block lives on. **The fix** records every deleted
//! block in the replica's tree, which reconciliation consults before it commits a block.

use super::explorable::{DriverStep, Explorable};
use super::invariants::settled_deletion_survives_repair;
use super::setup::{CUT_OFF, LAGGING, ROUNDS, run_on_threads, setup, write_kept_and_lagging};

use crate::datanode::container::{ContainerBehavior, ContainerConfig};
use crate::datanode::daemon::DatanodeConfig;
use crate::scenarios::Violation;
use crate::scenarios::rng::SeededRng;
use crate::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};

/// The SCMs of the cluster.
const SCMS: usize = 2;

/// Two SCMs and three datanodes (replica code `behavior`) hold one container with a kept
/// key and a key whose replica on datanode 3 lacks its last block; datanode 1 is cut off
/// from both SCMs. The key is deleted, and the cluster runs on its threads for `ROUNDS`
/// (4) moves of its clock while the driver, at rounds the seed picks, restarts a datanode
/// from its volume, has the leader send reconcile commands for the key's container, and
/// moves leadership to the other SCM (whose own deleting service sends the transactions
/// again). Then datanode 1 is healed, and [`settled_deletion_survives_repair`] judges the
/// cluster.
pub fn deletions_across_transfer_restart_and_repair(
    behavior: ContainerBehavior,
    seed: u64,
) -> Result<(), Violation> {
    let cluster = lagging_cluster(behavior).map_err(setup)?;
    let (kept, doomed) = (cluster.kept.clone(), cluster.doomed.clone());
    let cluster = cluster.cluster;
    let mut rng = SeededRng::new(seed);
    let restarting = rng.below(cluster.datanode_count() as u64) as usize;
    let restart_at = rng.below(ROUNDS as u64) as usize;
    let reconcile_at = 1 + rng.below(ROUNDS as u64 - 1) as usize;
    let transfer_at = rng.below(ROUNDS as u64) as usize;
    cluster.delete_key(&doomed).map_err(setup)?;
    run_on_threads::<()>(&cluster, Vec::new(), |round| {
        if round == restart_at {
            cluster.restart_datanode(restarting).map_err(setup)?;
        }
        if round == reconcile_at {
            cluster.reconcile(doomed.container).map_err(setup)?;
        }
        if round == transfer_at {
            let next = cluster.leader_index().map_or(0, |i| (i + 1) % SCMS);
            cluster.transfer_leadership(next).map_err(setup)?;
        }
        Ok(())
    })?;
    judge(&cluster, &kept, &doomed)
}

/// [`deletions_across_transfer_restart_and_repair`] to explore, the key deleted: the
/// lagging datanode's restart, the leader's reconcile commands and the move of leadership
/// to the other SCM are the driver's steps.
pub fn deletions_across_transfer_restart_and_repair_explorable(
    behavior: ContainerBehavior,
) -> Result<Explorable, Violation> {
    let LaggingCluster {
        cluster,
        kept,
        doomed,
    } = lagging_cluster(behavior).map_err(setup)?;
    cluster.delete_key(&doomed).map_err(setup)?;
    let container = doomed.container;
    let scripts = vec![
        vec![DriverStep::new("restart dn3", |cluster| {
            cluster.restart_datanode(LAGGING).map_err(setup)
        })],
        vec![DriverStep::new(
            "the leader's reconcile commands",
            move |cluster| cluster.reconcile(container).map(drop).map_err(setup),
        )],
        vec![DriverStep::new("transfer leadership", |cluster| {
            let next = cluster.leader_index().map_or(0, |i| (i + 1) % SCMS);
            cluster.transfer_leadership(next).map_err(setup)
        })],
    ];
    Ok(Explorable::new(cluster, scripts, move |cluster| {
        judge(cluster, &kept, &doomed)
    }))
}

/// Datanode 1 healed; [`settled_deletion_survives_repair`].
fn judge(cluster: &MiniOzoneCluster, kept: &Key, doomed: &Key) -> Result<(), Violation> {
    for scm in 0..SCMS {
        cluster.set_link(CUT_OFF, scm, true).map_err(setup)?;
    }
    settled_deletion_survives_repair(cluster, kept, doomed)
}

/// The cluster of the scenario, settled, with its two keys.
struct LaggingCluster {
    cluster: MiniOzoneCluster,
    kept: Key,
    doomed: Key,
}

/// Writes a whole kept key and a key lagging on [`LAGGING`](super::setup::LAGGING) into one container, closes it,
/// settles, and cuts [`CUT_OFF`] from every SCM.
fn lagging_cluster(behavior: ContainerBehavior) -> Result<LaggingCluster, ClusterError> {
    let cluster = MiniOzoneCluster::builder()
        .scms(SCMS)
        .datanode_config(DatanodeConfig {
            container: ContainerConfig::new(behavior),
            ..DatanodeConfig::default()
        })
        .build()?;
    let (kept, doomed) = write_kept_and_lagging(&cluster)?;
    cluster.close_key(&doomed)?;
    cluster.run_until_quiescent(10)?;
    for scm in 0..SCMS {
        cluster.set_link(CUT_OFF, scm, false)?;
    }
    Ok(LaggingCluster {
        cluster,
        kept,
        doomed,
    })
}
