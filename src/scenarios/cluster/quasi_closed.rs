//! HDDS-16811's trigger as the seed tells it, on a whole cluster: a QUASI_CLOSED container
//! with a lagging replica, a key deleted, and `ozone admin container reconcile`.
//!
//! **The race.** Every datanode left the container's Ratis pipeline, so the close
//! quasi-closes each replica and the container goes QUASI_CLOSED from their reports; one
//! replica lacks the doomed key's last block. All-QUASI_CLOSED replicas are HEALTHY
//! whatever their sequence ids, so the deleted-block log sends the key's transaction to
//! every replica, the lagging one included; before the replication manager's next pass
//! (300 s, after a 5 min start delay) nothing closes them. The lagging replica runs the
//! transaction, keeps no trace of the block it never had, and a reconcile command copies
//! it back from a peer that has not deleted it yet. **The fix** records every deleted
//! block in the replica's tree, which reconciliation reads before it commits a block.

use super::explorable::{DriverStep, Explorable};
use super::invariants::{SEED_KEY, settled_deletion_survives_repair};
use super::setup::{CUT_OFF, ROUNDS, run_on_threads, setup, write_kept_and_lagging};

use crate::datanode::container::{ContainerBehavior, ContainerConfig};
use crate::datanode::daemon::DatanodeConfig;
use crate::scenarios::Violation;
use crate::scenarios::rng::SeededRng;
use crate::scm::{LifeCycleState, ReplicationManagerConfig};
use crate::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};

/// One SCM with Ozone's replication manager timing and three datanodes (replica code
/// `behavior`) hold one QUASI_CLOSED container with a kept key and a doomed key whose
/// replica on datanode 3 lacks its last block; datanode 1 is cut off from the SCM. The
/// doomed key is deleted, and the cluster runs on its threads for `ROUNDS` (4) moves of
/// its clock (each datanode's block deleting service beside its replication supervisor,
/// so a deletion can land during a reconciliation of the replica) while the driver runs
/// `ozone admin container reconcile` at a round the seed picks. Then datanode 1 is healed,
/// and [`settled_deletion_survives_repair`] judges the cluster.
pub fn key_deleted_from_a_quasi_closed_container_during_reconcile(
    behavior: ContainerBehavior,
    seed: u64,
) -> Result<(), Violation> {
    let (cluster, kept, doomed) = quasi_closed_cluster(behavior)?;
    let reconcile_at = 1 + SeededRng::new(seed).below(ROUNDS as u64 - 1) as usize;
    cluster.delete_key(&doomed).map_err(setup)?;
    run_on_threads::<()>(&cluster, Vec::new(), |round| {
        if round == reconcile_at {
            cluster.reconcile(doomed.container).map_err(setup)?;
        }
        Ok(())
    })?;
    judge(&cluster, &kept, &doomed)
}

/// [`key_deleted_from_a_quasi_closed_container_during_reconcile`] to explore, the key
/// deleted: the operator's reconcile is the driver's step.
pub fn key_deleted_from_a_quasi_closed_container_during_reconcile_explorable(
    behavior: ContainerBehavior,
) -> Result<Explorable, Violation> {
    let (cluster, kept, doomed) = quasi_closed_cluster(behavior)?;
    cluster.delete_key(&doomed).map_err(setup)?;
    let container = doomed.container;
    let scripts = vec![vec![DriverStep::new(
        "ozone admin container reconcile",
        move |cluster| cluster.reconcile(container).map(drop).map_err(setup),
    )]];
    Ok(Explorable::new(cluster, scripts, move |cluster| {
        judge(cluster, &kept, &doomed)
    }))
}

/// Datanode 1 healed; [`settled_deletion_survives_repair`].
fn judge(cluster: &MiniOzoneCluster, kept: &Key, doomed: &Key) -> Result<(), Violation> {
    cluster.set_link(CUT_OFF, 0, true).map_err(setup)?;
    settled_deletion_survives_repair(cluster, kept, doomed)
}

/// The cluster of the scenario: the two keys written into one container (the doomed one
/// lagging on [`LAGGING`](super::setup::LAGGING)), every datanode out of the container's pipeline, the container
/// closed and settled QUASI_CLOSED, [`CUT_OFF`] cut from the SCM. Returns the kept and the
/// doomed key.
fn quasi_closed_cluster(
    behavior: ContainerBehavior,
) -> Result<(MiniOzoneCluster, Key, Key), Violation> {
    let (cluster, kept, doomed) = write_and_quasi_close(behavior).map_err(setup)?;
    let state = cluster
        .leader()
        .map_err(setup)?
        .container(kept.container)
        .map(|c| c.state);
    if state != Some(LifeCycleState::QuasiClosed) {
        return Err(Violation {
            seed: SEED_KEY,
            property: "scenario setup",
            detail: format!("the container settled {state:?}, not QUASI_CLOSED"),
        });
    }
    cluster.set_link(CUT_OFF, 0, false).map_err(setup)?;
    Ok((cluster, kept, doomed))
}

/// Writes both keys, takes every datanode out of the container's pipeline, closes the
/// container and settles.
fn write_and_quasi_close(
    behavior: ContainerBehavior,
) -> Result<(MiniOzoneCluster, Key, Key), ClusterError> {
    let cluster = MiniOzoneCluster::builder()
        .scms(1)
        .replication_manager(ReplicationManagerConfig::default())
        .datanode_config(DatanodeConfig {
            container: ContainerConfig::new(behavior),
            ..DatanodeConfig::default()
        })
        .build()?;
    let (kept, doomed) = write_kept_and_lagging(&cluster)?;
    let pipeline = cluster
        .leader()?
        .container(kept.container)
        .map(|info| info.pipeline)
        .ok_or(ClusterError::NoLeader)?;
    for dn in 0..cluster.datanode_count() {
        cluster.leave_pipeline(dn, pipeline)?;
    }
    cluster.close_key(&kept)?;
    cluster.run_until_quiescent(10)?;
    Ok((cluster, kept, doomed))
}
