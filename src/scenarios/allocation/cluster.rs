//! The random allocation cluster of HDDS-16891, for shuttle and the soak tool: clients
//! allocate (each on one OPEN pipeline chosen at random), a writer writes what they were
//! granted, and a controller moves leadership, restarts SCMs, installs snapshots, injects
//! unconfirmed submits, has datanodes register again with changed details and ticks the
//! clock, all at once and from a seed.

use super::invariants::{leader_reserves_unwritten_containers, no_datanode_over_granted};
use super::seed::{pipeline, scenario_config, scm_cluster_with, setup};
use crate::hdds::ids::ContainerId;
use crate::scenarios::rng::SeededRng;
use crate::scenarios::{Violation, join_all};
use crate::scm::{PendingContainerTrackerApi, RegistrationChange, ScmFactory, ScmHardening};
use crate::sim::ratis::SubmitFault;
use crate::sim::scm_cluster::ScmCluster;
use crate::sync::atomic::{AtomicBool, Ordering};
use crate::sync::{Arc, Mutex, thread};

/// Size of a [`random_failovers_never_over_grant`] run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocationClusterShape {
    /// Allocation attempts per client thread.
    pub allocations_per_client: usize,
    /// Client threads.
    pub clients: usize,
    /// Controller steps.
    pub controller_steps: usize,
}

impl Default for AllocationClusterShape {
    fn default() -> Self {
        Self {
            allocations_per_client: 4,
            clients: 2,
            controller_steps: 6,
        }
    }
}

/// Clock ticks stay within one roll interval over a whole run, so no reservation ages
/// out (aging out is by design, and would over-grant with any behavior).
const MAX_TICK_MS: u64 = 30_000;

/// Mixed into the scenario seed for the SCMs' pipeline choice.
const PIPELINE_CHOICE_STREAM: u64 = 0x5C3C_0016_891F_EED5;

/// Containers granted so far, in grant order; the writer writes them in that order.
type Granted = Arc<Mutex<Vec<ContainerId>>>;

/// The cluster the scenario's threads share.
type Shared<F> = Arc<ScmCluster<F>>;

/// No datanode is granted more than it has room for, and the serving leader reserves every
/// unwritten container, whatever leadership changes, restarts, unconfirmed submits and
/// re-registrations happen while clients allocate and containers are written. Three SCMs,
/// four datanodes near their last slots (1, 1, 2, 2) on three pipelines; client threads
/// allocate (the SCMs choose the pipeline from `seed`), a writer writes granted containers
/// (the datanodes create them and report), and a controller transfers leadership, restarts
/// SCMs (the leader included), installs a snapshot on a follower, injects a submit that
/// times out or answers not-leader after committing, has a datanode register again with a
/// changed address, version or port, and ticks the clock, all from `seed`. Checks
/// [`no_datanode_over_granted`] and, at quiescence, [`leader_reserves_unwritten_containers`].
pub fn random_failovers_never_over_grant<F: ScmFactory>(
    factory: F,
    seed: u64,
    shape: AllocationClusterShape,
) -> Result<(), Violation> {
    random_failovers_never_over_grant_with(factory, ScmHardening::ALL, seed, shape)
}

/// [`random_failovers_never_over_grant`] with the given switches of `ScmBehavior::Hardened`.
pub fn random_failovers_never_over_grant_with<F: ScmFactory>(
    factory: F,
    hardening: ScmHardening,
    seed: u64,
    shape: AllocationClusterShape,
) -> Result<(), Violation> {
    let pipelines = vec![
        pipeline(1, &[1, 2, 3]),
        pipeline(2, &[2, 3, 4]),
        pipeline(3, &[4]),
    ];
    // The pipeline choice draws from its own stream of the seed, not the controller's.
    let choice_seed = SeededRng::new(seed ^ PIPELINE_CHOICE_STREAM).next_u64();
    let config = scenario_config(pipelines, hardening, choice_seed);
    let cluster = Arc::new(scm_cluster_with(factory, config, 3, &[1, 1, 2, 2])?);
    cluster.elect(0);
    let granted: Granted = Arc::new(Mutex::new(Vec::new()));
    let done = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    for client in 1..=shape.clients {
        handles.push(spawn_client(client, &cluster, &granted, shape));
    }
    handles.push(spawn_writer(&cluster, &granted, &done, shape));
    handles.push(spawn_controller(&cluster, &done, seed, shape));
    join_all::<()>(handles)?;
    cluster.catch_up_all();
    no_datanode_over_granted(cluster.datanodes())?;
    match cluster.serving_leader() {
        Some(leader) => leader_reserves_unwritten_containers(&*leader, cluster.pipelines()),
        None => Ok(()),
    }
}

type Worker = thread::JoinHandle<Result<Vec<()>, Violation>>;

/// Client number `client`: allocates `shape.allocations_per_client` times, recording each
/// grant.
fn spawn_client<F: ScmFactory>(
    client: usize,
    cluster: &Shared<F>,
    granted: &Granted,
    shape: AllocationClusterShape,
) -> Worker {
    let cluster = Arc::clone(cluster);
    let granted = Arc::clone(granted);
    thread::spawn_named(&format!("allocator {client}"), move || {
        for _ in 0..shape.allocations_per_client {
            if let Ok(container) = cluster.allocate() {
                granted.lock().push(container);
            }
            thread::yield_now();
        }
        Ok(Vec::new())
    })
}

/// The writer: writes each granted container once, in grant order, until the controller
/// is done and nothing is left.
fn spawn_writer<F: ScmFactory>(
    cluster: &Shared<F>,
    granted: &Granted,
    done: &Arc<AtomicBool>,
    shape: AllocationClusterShape,
) -> Worker {
    let cluster = Arc::clone(cluster);
    let granted = Arc::clone(granted);
    let done = Arc::clone(done);
    thread::spawn_named("writer", move || {
        let mut written = 0;
        // Bounded: every round writes one container or yields; the tail drains.
        for _ in 0..shape.clients * shape.allocations_per_client * 4 + 16 {
            let next = granted.lock().get(written).copied();
            match next {
                Some(container) => {
                    cluster.write_first_block(container);
                    written += 1;
                }
                None if done.load(Ordering::Acquire) => break,
                None => thread::yield_now(),
            }
        }
        Ok(Vec::new())
    })
}

/// The controller: `shape.controller_steps` random steps from `seed`, then done.
fn spawn_controller<F: ScmFactory>(
    cluster: &Shared<F>,
    done: &Arc<AtomicBool>,
    seed: u64,
    shape: AllocationClusterShape,
) -> Worker {
    let cluster = Arc::clone(cluster);
    let done = Arc::clone(done);
    thread::spawn_named("controller", move || {
        let mut rng = SeededRng::new(seed);
        let mut ticked_ms = 0;
        let mut result = Ok(Vec::new());
        for _ in 0..shape.controller_steps {
            if let Err(error) = controller_step(&cluster, &mut rng, &mut ticked_ms) {
                result = Err(error);
                break;
            }
            thread::yield_now();
        }
        done.store(true, Ordering::Release);
        result
    })
}

/// One controller step: an election (35 %), a restart (15 %, the leader's followed by an
/// election), a snapshot install (10 %), an injected unconfirmed submit (15 %), a datanode
/// registering again with changed details, then heartbeating (12 %), or a clock tick
/// (13 %).
fn controller_step<F: ScmFactory>(
    cluster: &ScmCluster<F>,
    rng: &mut SeededRng,
    ticked_ms: &mut u64,
) -> Result<(), Violation> {
    let scm_count = cluster.scm_count() as u64;
    match rng.below(100) {
        0..=34 => cluster.elect(rng.below(scm_count) as usize),
        35..=49 => {
            let index = rng.below(scm_count) as usize;
            let was_leader = cluster.ring().leadership().1 == Some(cluster.scm(index).id());
            cluster.restart_scm(index).map_err(setup)?;
            if was_leader {
                cluster.elect(rng.below(scm_count) as usize);
            }
        }
        50..=59 => cluster.install_snapshot(rng.below(scm_count) as usize),
        60..=74 => cluster.ring().inject(if rng.chance(50) {
            SubmitFault::TimeoutAfterCommit
        } else {
            SubmitFault::NotLeaderAfterCommit
        }),
        75..=86 => {
            let index = rng.below(cluster.datanodes().len() as u64) as usize;
            let change = match rng.below(3) {
                0 => RegistrationChange::Address,
                1 => RegistrationChange::Version,
                _ => RegistrationChange::Ports,
            };
            cluster.reregister(index, change);
            cluster.heartbeat(index);
        }
        _ => {
            let tick = (1 + rng.below(MAX_TICK_MS)).min(MAX_TICK_MS.saturating_sub(*ticked_ms));
            *ticked_ms += tick;
            cluster.clock().advance_ms(tick);
        }
    }
    Ok(())
}
