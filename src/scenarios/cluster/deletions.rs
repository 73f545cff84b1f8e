//! Deletions the SCMs drive into the replicas while leadership moves.

use super::invariants::{
    cluster_settles_after_healing, deleted_keys_are_gone_everywhere, kept_keys_are_whole,
    log_drains,
};
use super::setup::{ROUNDS, run_on_threads, setup};

use crate::datanode::daemon::DatanodeConfig;
use crate::datanode::state_context::StateContextBehavior;
use crate::scenarios::Violation;
use crate::scenarios::rng::SeededRng;
use crate::sim::mini_cluster::MiniOzoneCluster;

/// Three SCMs and three datanodes (term fencing `behavior`) hold a kept and a deleted
/// key. The cluster runs on its threads for `ROUNDS` (4) moves of its clock while the
/// driver deletes the key and moves leadership to another SCM at rounds the seed picks,
/// so the old leader's commands may wait in its queue. The cluster then settles; checks
/// [`deleted_keys_are_gone_everywhere`], [`kept_keys_are_whole`] and [`log_drains`].
pub fn keys_deleted_while_leadership_moves(
    behavior: StateContextBehavior,
    seed: u64,
) -> Result<(), Violation> {
    let cluster = MiniOzoneCluster::builder()
        .datanode_config(DatanodeConfig {
            behavior,
            ..DatanodeConfig::default()
        })
        .build()
        .map_err(setup)?;
    let kept = cluster.write_key(2).map_err(setup)?;
    let deleted = cluster.write_key(2).map_err(setup)?;
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
    cluster_settles_after_healing(&cluster, 50)?;
    deleted_keys_are_gone_everywhere(&cluster, &[deleted])?;
    kept_keys_are_whole(&cluster, &[kept])?;
    log_drains(&cluster)
}
