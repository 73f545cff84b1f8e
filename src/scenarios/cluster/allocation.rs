//! Keys granted while SCM leadership moves, judged by the datanodes' own reports:
//! HDDS-16891's lost pending allocations, with real replicas reserving their space.
//!
//! **The race.** The old leader granted a container whose replicas are not written yet;
//! only its pending allocations remember the slot. The new leader starts with none, reads
//! node reports that do not show the container, and grants the slot again: once the
//! writes land, a datanode holds more OPEN containers than its volume has room for.
//! **The fix** rebuilds the pending allocations from the OPEN containers no datanode
//! reported yet before the new leader grants anything.

use super::explorable::{DriverStep, Explorable};
use super::invariants::no_datanode_granted_past_its_room;
use super::liveness::pending_allocations_roll_out;
use super::setup::{run_on_threads, setup};

use crate::scenarios::Violation;
use crate::scenarios::rng::SeededRng;
use crate::scm::ScmBehavior;
use crate::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};
use crate::sync::{Arc, Mutex, thread};

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
    let cluster = Arc::new(small_cluster(behavior)?);
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
    judge(&cluster)
}

/// [`keys_written_while_leadership_moves`] to explore: the client's script grants the
/// first key and writes it, grants the other two, then writes them (each request
/// refused for want of a leader or of room is skipped); the move of leadership to SCM 2
/// is another, in two steps: Ratis elects SCM 2 and marks its division leader-ready (the
/// RPC layer's leader check opens), then its state machine's `notifyLeaderReady` has the
/// services run the rebuild. A grant between the two is HDDS-16891's window.
pub fn keys_written_while_leadership_moves_explorable(
    behavior: ScmBehavior,
) -> Result<Explorable, Violation> {
    let cluster = small_cluster(behavior)?;
    let granted: Arc<Mutex<Vec<Option<Key>>>> = Arc::new(Mutex::new(vec![None; KEYS]));
    let grant = |index: usize| {
        let granted = Arc::clone(&granted);
        DriverStep::new(format!("grant key {}", index + 1), move |cluster| {
            granted.lock()[index] = grant_key(cluster)?;
            Ok(())
        })
    };
    let write = |index: usize| {
        let granted = Arc::clone(&granted);
        DriverStep::new(format!("write key {}", index + 1), move |cluster| {
            let key = granted.lock()[index].clone();
            key.map_or(Ok(()), |key| cluster.write_blocks(&key).map_err(setup))
        })
    };
    let client = vec![grant(0), write(0), grant(1), grant(2), write(1), write(2)];
    let ratis = vec![
        DriverStep::new(
            "transfer leadership to scm2, its division ready",
            |cluster| {
                cluster
                    .transfer_leadership_to_division_ready(1)
                    .map_err(setup)
            },
        ),
        DriverStep::new("scm2's state machine notified leader-ready", |cluster| {
            cluster.notify_leader_ready(1).map_err(setup)
        }),
    ];
    Ok(Explorable::new(cluster, vec![client, ratis], judge))
}

/// Two SCMs, three datanodes of two slots each.
fn small_cluster(behavior: ScmBehavior) -> Result<MiniOzoneCluster, Violation> {
    MiniOzoneCluster::builder()
        .scms(2)
        .scm_behavior(behavior)
        .slots_per_datanode(2)
        .build()
        .map_err(setup)
}

/// No datanode granted past its room; the pending allocations roll out.
fn judge(cluster: &MiniOzoneCluster) -> Result<(), Violation> {
    no_datanode_granted_past_its_room(cluster)?;
    pending_allocations_roll_out(cluster, 2 * cluster.roll_interval_ms())
}

/// One key asked for: granted, or `None` when refused (no leader, not ready, no room).
fn grant_key(cluster: &MiniOzoneCluster) -> Result<Option<Key>, Violation> {
    match cluster.open_key(1) {
        Ok(key) => Ok(Some(key)),
        Err(ClusterError::NoLeader | ClusterError::Scm(_)) => Ok(None),
        Err(other) => Err(setup(other)),
    }
}

/// The client: each granted key written at once or after the last request.
fn write_keys(cluster: &MiniOzoneCluster, seed: u64) -> Result<Vec<()>, Violation> {
    let mut rng = SeededRng::new(seed);
    let mut later: Vec<Key> = Vec::new();
    for _ in 0..KEYS {
        let Some(key) = grant_key(cluster)? else {
            continue;
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
