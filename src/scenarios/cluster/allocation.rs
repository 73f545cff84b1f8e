//! Keys granted while SCM leadership moves, judged by the datanodes' own reports:
//! HDDS-16891's lost pending allocations, with real replicas reserving their space.
//!
//! **The race.** The old leader granted a container whose replicas are not written yet;
//! only its pending allocations remember the slot. The new leader starts with none, reads
//! node reports that do not show the container, and grants the slot again: once the
//! writes land, a datanode holds more OPEN containers than its volume has room for.
//! **The fix** rebuilds the pending allocations from the OPEN containers no datanode
//! reported yet before the new leader grants anything.

use super::invariants::no_datanode_granted_past_its_room;
use super::liveness::pending_allocations_roll_out;
use super::setup::{run_on_threads, setup};

use crate::scenarios::Violation;
use crate::scenarios::rng::SeededRng;
use crate::scm::ScmBehavior;
use crate::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};
use crate::sync::{Arc, thread};

/// Keys the client asks for: one more than a datanode has room for.
const KEYS: usize = 3;

/// Two SCMs (allocation logic `behavior`), three datanodes with room for two containers
/// each, one pipeline shape (every container on all three), run on its threads for
/// `ROUNDS` (4) moves of its clock. A spawned client asks for `KEYS` (3) keys, writing
/// each at once or at the end as the seed says; another moves leadership to SCM 2. A request
/// refused (no leader, not ready, no room) is not retried. Checks
/// [`no_datanode_granted_past_its_room`] with every granted key written, then
/// [`pending_allocations_roll_out`](super::liveness::pending_allocations_roll_out).
pub fn keys_written_while_leadership_moves(
    behavior: ScmBehavior,
    seed: u64,
) -> Result<(), Violation> {
    let cluster = MiniOzoneCluster::builder()
        .scms(2)
        .scm_behavior(behavior)
        .slots_per_datanode(2)
        .build()
        .map_err(setup)?;
    let cluster = Arc::new(cluster);
    let client = Arc::clone(&cluster);
    let ratis = Arc::clone(&cluster);
    let others = vec![
        thread::spawn(move || write_keys(&client, seed)),
        thread::spawn(move || {
            ratis.transfer_leadership(1).map_err(setup)?;
            Ok(Vec::new())
        }),
    ];
    run_on_threads(&cluster, others, |_| Ok(()))?;
    no_datanode_granted_past_its_room(&cluster)?;
    pending_allocations_roll_out(&cluster, 2 * cluster.roll_interval_ms())
}

/// The client: each granted key written at once or after the last request.
fn write_keys(cluster: &MiniOzoneCluster, seed: u64) -> Result<Vec<()>, Violation> {
    let mut rng = SeededRng::new(seed);
    let mut later: Vec<Key> = Vec::new();
    for _ in 0..KEYS {
        let key = match cluster.open_key(1) {
            Ok(key) => key,
            Err(ClusterError::NoLeader | ClusterError::Scm(_)) => continue,
            Err(other) => return Err(setup(other)),
        };
        if rng.chance(50) {
            cluster.write_blocks(&key).map_err(setup)?;
        } else {
            later.push(key);
        }
    }
    for key in &later {
        cluster.write_blocks(key).map_err(setup)?;
    }
    Ok(Vec::new())
}
