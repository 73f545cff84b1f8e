//! Deletions the SCMs drive into the replicas while leadership moves.

use super::invariants::{
    cluster_settles_after_healing, deleted_keys_are_gone_everywhere, kept_keys_are_whole,
    log_drains,
};
use super::setup::{ROUNDS, setup, spawn_datanodes};

use crate::datanode::daemon::DatanodeConfig;
use crate::datanode::state_context::StateContextBehavior;
use crate::scenarios::rng::SeededRng;
use crate::scenarios::{Violation, join_all};
use crate::sim::mini_cluster::{Key, MiniOzoneCluster};
use crate::sync::{Arc, thread};

/// Three SCMs and three datanodes (term fencing `behavior`) hold a kept and a deleted
/// key. One thread per datanode ticks it `ROUNDS` (4) times while a fourth runs the SCMs'
/// services as many times, deleting the key and moving leadership to another SCM at
/// rounds the seed picks (the move right after a round of the block deleting service, so
/// the old leader's commands wait in its queue). The cluster then settles; checks
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
    let cluster = Arc::new(cluster);
    let mut handles = spawn_datanodes(&cluster, None);
    let scm_side = Arc::clone(&cluster);
    let doomed = deleted.clone();
    handles.push(thread::spawn(move || drive_scms(&scm_side, &doomed, seed)));
    join_all(handles)?;
    cluster_settles_after_healing(&cluster, 50)?;
    deleted_keys_are_gone_everywhere(&cluster, &[deleted])?;
    kept_keys_are_whole(&cluster, &[kept])?;
    log_drains(&cluster)
}

fn drive_scms(cluster: &MiniOzoneCluster, key: &Key, seed: u64) -> Result<Vec<()>, Violation> {
    let mut rng = SeededRng::new(seed);
    let delete_at = rng.below(ROUNDS as u64) as usize;
    let transfer_at = rng.below(ROUNDS as u64) as usize;
    for round in 0..ROUNDS {
        if round == delete_at {
            cluster.delete_key(key).map_err(setup)?;
        }
        cluster.tick_scms().map_err(setup)?;
        if round == transfer_at {
            let next = 1 + rng.below(2) as usize;
            cluster.transfer_leadership(next).map_err(setup)?;
        }
        cluster.clock().advance_ms(1_000);
    }
    Ok(Vec::new())
}
