//! Deletions the SCMs drive into the replicas while leadership moves.

use super::explorable::{DriverStep, Explorable};
use super::invariants::{
    cluster_settles_after_healing, deleted_keys_are_gone_everywhere, kept_keys_are_whole,
    log_drains,
};
use super::setup::{ROUNDS, run_on_threads, setup};

use crate::datanode::daemon::DatanodeConfig;
use crate::datanode::state_context::StateContextBehavior;
use crate::scenarios::Violation;
use crate::scenarios::rng::SeededRng;
use crate::sim::mini_cluster::{Key, MiniOzoneCluster};

/// Three SCMs and three datanodes (term fencing `behavior`) hold a kept and a deleted
/// key, their containers closed (the set-up settles the writes, so the commands that race
/// the leader's move are the deletion's; a close racing a move is the random cluster's).
/// The cluster runs on its threads for `ROUNDS` (4) moves of its clock while the driver
/// deletes the key and moves leadership to another SCM at rounds the seed picks, so the
/// old leader's commands may wait in its queue. The cluster then settles; checks
/// [`deleted_keys_are_gone_everywhere`], [`kept_keys_are_whole`] and [`log_drains`].
pub fn keys_deleted_while_leadership_moves(
    behavior: StateContextBehavior,
    seed: u64,
) -> Result<(), Violation> {
    let (cluster, kept, deleted) = two_keys(behavior)?;
    let mut rng = SeededRng::new(seed);
    let delete_at = rng.below(ROUNDS as u64) as usize;
    let transfer_at = rng.below(ROUNDS as u64) as usize;
    let next = 1 + rng.below(2) as usize;
    run_on_threads::<()>(&cluster, Vec::new(), |round| {
        if round == delete_at {
            cluster.delete_key(&deleted).map_err(setup)?;
        }
        if round == transfer_at {
            cluster.transfer_leadership(next).map_err(setup)?;
        }
        Ok(())
    })?;
    judge(&cluster, &kept, &deleted)
}

/// [`keys_deleted_while_leadership_moves`] to explore: the key's deletion and the move of
/// leadership to SCM 2 are the driver's steps.
pub fn keys_deleted_while_leadership_moves_explorable(
    behavior: StateContextBehavior,
) -> Result<Explorable, Violation> {
    let (cluster, kept, deleted) = two_keys(behavior)?;
    let doomed = deleted.clone();
    let scripts = vec![
        vec![DriverStep::new("delete the key", move |cluster| {
            cluster.delete_key(&doomed).map(drop).map_err(setup)
        })],
        vec![DriverStep::new("transfer leadership to scm2", |cluster| {
            cluster.transfer_leadership(1).map_err(setup)
        })],
    ];
    Ok(Explorable::new(cluster, scripts, move |cluster| {
        judge(cluster, &kept, &deleted)
    }))
}

/// Ticks the set-up may take to close the keys' containers (it takes three).
const SETUP_TICKS: usize = 10;

/// The cluster of the case with its kept and its doomed key written, and settled: their
/// containers closed on every datanode and in the leader's tables.
fn two_keys(behavior: StateContextBehavior) -> Result<(MiniOzoneCluster, Key, Key), Violation> {
    let cluster = MiniOzoneCluster::builder()
        .datanode_config(DatanodeConfig {
            behavior,
            ..DatanodeConfig::default()
        })
        .build()
        .map_err(setup)?;
    let kept = cluster.write_key(2).map_err(setup)?;
    let deleted = cluster.write_key(2).map_err(setup)?;
    cluster.run_until_quiescent(SETUP_TICKS).map_err(setup)?;
    Ok((cluster, kept, deleted))
}

/// The cluster settles; the deleted key is gone everywhere, the kept one whole, the log
/// empty.
fn judge(cluster: &MiniOzoneCluster, kept: &Key, deleted: &Key) -> Result<(), Violation> {
    cluster_settles_after_healing(cluster, 50)?;
    deleted_keys_are_gone_everywhere(cluster, std::slice::from_ref(deleted))?;
    kept_keys_are_whole(cluster, std::slice::from_ref(kept))?;
    log_drains(cluster)
}
