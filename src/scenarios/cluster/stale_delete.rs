//! A deposed leader's force delete reaching a datanode while it repairs the same
//! container: HDDS-17268's stale command meets HDDS-16811's reconciliation in one replica.
//!
//! **The race.** The old SCM leader queued a force delete of the container at its term
//! and stepped down; the restarted datanode heard the new leader's term, then takes the
//! old leader's queue while a reconciliation pulls a block into the same replica and the
//! new leader's heartbeats go on. Before the patch the term heard before init is dropped,
//! the stale delete runs and the repaired replica is gone. **What must hold**: no command
//! below a term already taken is dispatched, and the replica keeps every block of a live
//! key, the repaired one included.

use crate::clock::ManualClock;
use crate::datanode::container::{ContainerBehavior, ContainerConfig};
use crate::datanode::state_context::StateContextBehavior;
use crate::hdds::command::CommandKind;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, DatanodeId, LocalId, ScmId};
use crate::scenarios::container::invariants::live_blocks_present;
use crate::scenarios::term_fencing::no_command_below_heard_term;
use crate::scenarios::{Violation, join_all};
use crate::scm::LifeCycleState;
use crate::sim::fencing_datanode::{FencingDatanode, Observed};
use crate::sim::replica_node::{CONTAINER, ReplicaNode};
use crate::sim::scm_endpoint::InProcessScm;
use crate::sync::{Arc, thread};

use super::explorable::{DriverStep, Explorable};
use super::invariants::{SEED_KEY, cluster_settles_after_healing, kept_keys_are_whole};
use super::setup::{ROUNDS, run_on_threads, setup as cluster_setup};
use crate::datanode::daemon::DatanodeConfig;
use crate::scenarios::rng::SeededRng;
use crate::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};

/// On both replicas.
const LIVE: LocalId = 1;
/// Only on the peer: the repair pulls it.
const REPAIRED: LocalId = 2;

fn setup(error: impl std::fmt::Display) -> Violation {
    Violation {
        seed: SEED_KEY,
        property: "scenario setup",
        detail: error.to_string(),
    }
}

/// SCM 1 queued a force delete of the container at term 1 and stepped down; SCM 2 leads
/// at term 2, and its first heartbeat response reached datanode 1 (restarted, term not
/// initialised). Three spawned threads: SCM 1's heartbeat then the command processor; a
/// reconciliation of the container with datanode 2; SCM 2's next heartbeat. Checks
/// [`no_command_below_heard_term`] and [`live_blocks_present`] for both blocks.
pub fn stale_force_delete_during_repair(behavior: StateContextBehavior) -> Result<(), Violation> {
    let config = ContainerConfig::new(ContainerBehavior::Hardened);
    let dn1 = ReplicaNode::new(DatanodeId(1), config, ContainerState::Closed, &[(LIVE, 1)])
        .map_err(setup)?;
    let dn2 = ReplicaNode::new(
        DatanodeId(2),
        config,
        ContainerState::Closed,
        &[(LIVE, 1), (REPAIRED, 1)],
    )
    .map_err(setup)?;
    let scms = [InProcessScm::new(ScmId(1)), InProcessScm::new(ScmId(2))];
    let clock = ManualClock::new(0).shared();
    let datanode = FencingDatanode::over(
        dn1.handler.datanode(),
        behavior,
        &scms,
        Arc::clone(&dn1.handler),
        clock,
    )
    .map_err(setup)?;
    datanode.register_all().map_err(setup)?;
    scms[0].become_leader(1);
    let delete = CommandKind::DeleteContainer {
        container: CONTAINER,
        force: true,
    };
    scms[0]
        .queue_command(datanode.id, delete, 0)
        .map_err(setup)?;
    scms[0].step_down();
    scms[1].become_leader(2);
    datanode.heartbeat(1).map_err(setup)?;

    let datanode = Arc::new(datanode);
    let stale = Arc::clone(&datanode);
    let heartbeats = Arc::clone(&datanode);
    let peer = dn2.peer();
    let handler = Arc::clone(&dn1.handler);
    let handles = vec![
        thread::spawn(move || -> Result<Vec<Observed>, Violation> {
            stale.heartbeat(0).map_err(setup)?;
            Ok(stale.process().into_iter().collect())
        }),
        thread::spawn(move || -> Result<Vec<Observed>, Violation> {
            // A failed repair (the replica deleted under it) is judged by the blocks.
            let _ = handler.reconcile_with(CONTAINER, &[peer]);
            Ok(Vec::new())
        }),
        thread::spawn(move || -> Result<Vec<Observed>, Violation> {
            heartbeats.heartbeat(1).map_err(setup)?;
            Ok(Vec::new())
        }),
    ];
    let mut dispatches = join_all(handles)?;
    dispatches.extend(datanode.drain());
    no_command_below_heard_term(&dispatches)?;
    live_blocks_present(std::slice::from_ref(&dn1), &[(LIVE, 1), (REPAIRED, 1)])
}

/// The same race through the whole [`MiniOzoneCluster`]: two SCMs, three datanodes
/// (term fencing `behavior`), a closed key whose replica on datanode 1 lacks a block. SCM
/// 1 leads and queues a force delete of that replica, then leadership moves to SCM 2
/// while datanode 1 is cut off from SCM 1, and datanode 1 restarts and hears SCM 2 first.
/// The cluster runs on its threads for `ROUNDS` (4) moves of its clock, with a spawned
/// reconcile of datanode 1's replica from the other two beside them, while the driver
/// heals the link to SCM 1 at a round the seed picks. The cluster then settles
/// and a full repair round runs. Checks [`kept_keys_are_whole`]: the replica was not
/// deleted.
pub fn deposed_leaders_force_delete_through_the_cluster(
    behavior: StateContextBehavior,
    seed: u64,
) -> Result<(), Violation> {
    let (cluster, key) = stale_delete_in_flight(behavior).map_err(cluster_setup)?;
    let cluster = Arc::new(cluster);
    let repairer = Arc::clone(&cluster);
    let container = key.container;
    let heal_at = SeededRng::new(seed).below(ROUNDS as u64) as usize;
    let others: Vec<thread::JoinHandle<Result<Vec<()>, Violation>>> =
        vec![thread::spawn(move || {
            repair(&repairer, container)?;
            Ok(Vec::new())
        })];
    run_on_threads(&cluster, others, |round| {
        if round == heal_at {
            heal(&cluster)?;
        }
        Ok(())
    })?;
    judge(&cluster, &key)
}

/// [`deposed_leaders_force_delete_through_the_cluster`] stepped, small enough for loom:
/// three spawned threads, datanode 1 ticking `ROUNDS` (4) times (its heartbeats, its
/// commands run to their end, its deleting service), its reconcile of the replica, and the
/// SCMs' driver running their services each round and healing the link to SCM 1 at a
/// round the seed picks. Judged as the threaded case is.
pub fn deposed_leaders_force_delete_through_the_stepped_cluster(
    behavior: StateContextBehavior,
    seed: u64,
) -> Result<(), Violation> {
    let (cluster, key) = stale_delete_in_flight(behavior).map_err(cluster_setup)?;
    let cluster = Arc::new(cluster);
    let (ticker, repairer, driver) = (
        Arc::clone(&cluster),
        Arc::clone(&cluster),
        Arc::clone(&cluster),
    );
    let container = key.container;
    let heal_at = SeededRng::new(seed).below(ROUNDS as u64) as usize;
    let handles: Vec<thread::JoinHandle<Result<Vec<()>, Violation>>> = vec![
        thread::spawn(move || {
            for _ in 0..ROUNDS {
                ticker.tick_datanode(0).map_err(cluster_setup)?;
            }
            Ok(Vec::new())
        }),
        thread::spawn(move || {
            repair(&repairer, container)?;
            Ok(Vec::new())
        }),
        thread::spawn(move || {
            for round in 0..ROUNDS {
                if round == heal_at {
                    heal(&driver)?;
                }
                driver.tick_scms().map_err(cluster_setup)?;
            }
            Ok(Vec::new())
        }),
    ];
    join_all(handles)?;
    judge(&cluster, &key)
}

/// [`deposed_leaders_force_delete_through_the_cluster`] to explore: the heal of datanode
/// 1's link to SCM 1 and the reconcile of its replica (a whole reconciliation, one step)
/// are the driver's steps.
pub fn deposed_leaders_force_delete_through_the_cluster_explorable(
    behavior: StateContextBehavior,
) -> Result<Explorable, Violation> {
    let (cluster, key) = stale_delete_in_flight(behavior).map_err(cluster_setup)?;
    let container = key.container;
    let scripts = vec![
        vec![DriverStep::new("heal dn1's link to scm1", heal)],
        vec![DriverStep::new(
            "dn1 reconciles its replica",
            move |cluster| repair(cluster, container),
        )],
    ];
    Ok(Explorable::new(cluster, scripts, move |cluster| {
        judge(cluster, &key)
    }))
}

fn heal(cluster: &MiniOzoneCluster) -> Result<(), Violation> {
    cluster.set_link(0, 0, true).map_err(cluster_setup)
}

/// Datanode 1's reconciliation of its replica with the others; a refusal (the replica
/// deleted, not closed) is the race's outcome, not a failure of the run.
fn repair(cluster: &MiniOzoneCluster, container: ContainerId) -> Result<(), Violation> {
    let _ = cluster.reconcile_on(0, container);
    Ok(())
}

/// Healed and settled, a full repair round: the key whole on every datanode.
fn judge(cluster: &MiniOzoneCluster, key: &Key) -> Result<(), Violation> {
    heal(cluster)?;
    cluster_settles_after_healing(cluster, 50)?;
    cluster.repair_round(key.container).map_err(cluster_setup)?;
    kept_keys_are_whole(cluster, std::slice::from_ref(key))
}

/// The cluster with SCM 1's force delete of datanode 1's lagging replica queued and
/// undelivered, SCM 2 leading, and datanode 1 restarted, having heard SCM 2 only.
fn stale_delete_in_flight(
    behavior: StateContextBehavior,
) -> Result<(MiniOzoneCluster, Key), ClusterError> {
    let cluster = MiniOzoneCluster::builder()
        .scms(2)
        .datanode_config(DatanodeConfig {
            behavior,
            ..DatanodeConfig::default()
        })
        .build()?;
    let key = cluster.open_key(2)?;
    let lagging = cluster.datanode(0)?.id();
    cluster.write_blocks_lagging(&key, lagging)?;
    cluster.close_key(&key)?;
    // Ticks until the leader holds the container CLOSED and every replica is: what the
    // race needs, in fewer ticks than a full settle (the loom model runs this set-up in
    // every execution).
    for _ in 0..10 {
        if closed_everywhere(&cluster, key.container)? {
            break;
        }
        cluster.tick()?;
    }
    let delete = CommandKind::DeleteContainer {
        container: key.container,
        force: true,
    };
    cluster.leader()?.send_command(lagging, delete)?;
    cluster.set_link(0, 0, false)?;
    cluster.transfer_leadership(1)?;
    cluster.restart_datanode(0)?;
    cluster.tick_datanode(0)?;
    Ok((cluster, key))
}

/// The leader holds `container` CLOSED, and every datanode's replica of it is CLOSED.
fn closed_everywhere(
    cluster: &MiniOzoneCluster,
    container: ContainerId,
) -> Result<bool, ClusterError> {
    let closed =
        cluster.leader()?.container(container).map(|c| c.state) == Some(LifeCycleState::Closed);
    Ok(closed
        && (0..cluster.datanode_count()).all(|dn| {
            cluster.datanode(dn).is_ok_and(|d| {
                d.replicas()
                    .container(container)
                    .is_ok_and(|r| r.state() == ContainerState::Closed)
            })
        }))
}
