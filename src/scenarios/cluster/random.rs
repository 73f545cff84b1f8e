//! A random cluster run with seeded faults: every Ozone seed's code at once, and every
//! seed's properties judged together at quiescence.
//!
//! **The race.** Keys are written and deleted while SCM leadership moves, SCMs and
//! datanodes restart, links are cut and healed and replicas reconcile: lost pending
//! allocations (HDDS-16891), stale commands (HDDS-17268) and resurrected or half-repaired
//! blocks (HDDS-16811) all have their chance. **What must hold**: once the faults heal
//! and the cluster settles, deleted keys are gone everywhere and stay gone after repair,
//! kept keys are whole, the deleted-block log drains, and no datanode holds more than its
//! room; then every SCM (a restarted one too) leaves safe mode and the pending
//! allocations roll out of their windows.

use super::explorable::{DriverStep, Explorable};
use super::invariants::{
    cluster_settles_after_healing, deleted_keys_are_gone_everywhere, kept_keys_are_whole,
    log_drains, no_datanode_granted_past_its_room, no_deleted_block_back_after_repair,
    replicas_keep_metadata_and_files_together,
};
use super::liveness::{pending_allocations_roll_out, scms_leave_safe_mode};
use super::setup::{ROUNDS, run_on_threads, setup};

use crate::datanode::container::{ContainerBehavior, ContainerConfig};
use crate::datanode::daemon::DatanodeConfig;
use crate::datanode::state_context::StateContextBehavior;
use crate::scenarios::Violation;
use crate::scenarios::rng::SeededRng;
use crate::scm::ScmBehavior;
use crate::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};
use crate::sync::{Arc, Mutex, thread};

/// The code every component of the cluster runs, one choice for all three seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OzoneBehavior {
    /// Every component's `Hardened` variant.
    Hardened,
    /// Every component's `SeedPatch` variant.
    SeedPatch,
    /// Every component's code before its seed: `ScmBehavior::LegacyNoRebuild`,
    /// `StateContextBehavior::Legacy`, `ContainerBehavior::Legacy`.
    Legacy,
}

impl OzoneBehavior {
    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            OzoneBehavior::Hardened => "Hardened",
            OzoneBehavior::SeedPatch => "SeedPatch",
            OzoneBehavior::Legacy => "Legacy",
        }
    }

    /// The SCMs' allocation logic.
    pub fn scm(self) -> ScmBehavior {
        match self {
            OzoneBehavior::Hardened => ScmBehavior::Hardened,
            OzoneBehavior::SeedPatch => ScmBehavior::SeedPatch,
            OzoneBehavior::Legacy => ScmBehavior::LegacyNoRebuild,
        }
    }

    /// The datanodes' settings: their term fencing and their replicas' code.
    pub fn datanode(self) -> DatanodeConfig {
        let (behavior, container) = match self {
            OzoneBehavior::Hardened => {
                (StateContextBehavior::Hardened, ContainerBehavior::Hardened)
            }
            OzoneBehavior::SeedPatch => (
                StateContextBehavior::SeedPatch,
                ContainerBehavior::SeedPatch,
            ),
            OzoneBehavior::Legacy => (StateContextBehavior::Legacy, ContainerBehavior::Legacy),
        };
        DatanodeConfig {
            behavior,
            container: ContainerConfig::new(container),
            ..DatanodeConfig::default()
        }
    }
}

/// What the client did to a key.
#[derive(Debug, Clone)]
enum Written {
    Kept(Key),
    Deleted(Key),
}

/// Three SCMs and three datanodes with room for two containers each, every component
/// on `behavior`, run on its threads for `ROUNDS` (4) moves of its clock. A spawned client
/// writes keys (some with a replica that lacks a block) and deletes some of them; the
/// driver restarts a datanode at one round and injects a fault each round (a leader
/// transfer, an SCM restart, a cut link to an SCM or between peers, a reconcile command).
/// All from `seed`. Checks
/// [`no_datanode_granted_past_its_room`] with every granted key written; then every link
/// heals, every container still OPEN is closed, and the cluster settles. Checks
/// [`deleted_keys_are_gone_everywhere`] and [`log_drains`]; then, after a full repair
/// round of every container, [`no_deleted_block_back_after_repair`],
/// [`kept_keys_are_whole`] and [`replicas_keep_metadata_and_files_together`].
pub fn random_cluster_with_faults(behavior: OzoneBehavior, seed: u64) -> Result<(), Violation> {
    let cluster = Arc::new(random_cluster(behavior, seed)?);
    let mut rng = SeededRng::new(seed);
    let restarting = rng.below(cluster.datanode_count() as u64) as usize;
    let restart_at = rng.below(ROUNDS as u64) as usize;
    let client = Arc::clone(&cluster);
    let mut requests = Client::new(rng.next_u64());
    let others = vec![thread::spawn(move || {
        for _ in 0..ROUNDS {
            requests.request(&client)?;
        }
        requests.finish(&client)
    })];
    let mut faults = SeededRng::new(rng.next_u64());
    let written = run_on_threads(&cluster, others, |round| {
        if round == restart_at {
            cluster.restart_datanode(restarting).map_err(setup)?;
        }
        inject_fault(&cluster, &mut faults);
        Ok(())
    })?;
    judge(&cluster, written)
}

/// [`random_cluster_with_faults`] to explore, its random choices drawn from `seed`: the
/// client's requests (then its last writes) are one script, the datanode's restart
/// another, each fault another.
pub fn random_cluster_with_faults_explorable(
    behavior: OzoneBehavior,
    seed: u64,
) -> Result<Explorable, Violation> {
    let cluster = random_cluster(behavior, seed)?;
    let mut rng = SeededRng::new(seed);
    let restarting = rng.below(cluster.datanode_count() as u64) as usize;
    let _restart_at = rng.below(ROUNDS as u64);
    let client = Arc::new(Mutex::new(Client::new(rng.next_u64())));
    let written: Arc<Mutex<Vec<Written>>> = Arc::new(Mutex::new(Vec::new()));
    let mut requests: Vec<DriverStep> = (0..ROUNDS)
        .map(|round| {
            let client = Arc::clone(&client);
            DriverStep::new(format!("client request {}", round + 1), move |cluster| {
                client.lock().request(cluster)
            })
        })
        .collect();
    let (last, done) = (Arc::clone(&client), Arc::clone(&written));
    requests.push(DriverStep::new("client's last writes", move |cluster| {
        *done.lock() = last.lock().finish(cluster)?;
        Ok(())
    }));
    let faults = Arc::new(Mutex::new(SeededRng::new(rng.next_u64())));
    let mut scripts = vec![
        requests,
        vec![DriverStep::new(
            format!("restart dn{}", restarting + 1),
            move |cluster| cluster.restart_datanode(restarting).map_err(setup),
        )],
    ];
    scripts.extend((0..ROUNDS).map(|round| {
        let faults = Arc::clone(&faults);
        vec![DriverStep::new(
            format!("fault {}", round + 1),
            move |cluster| {
                inject_fault(cluster, &mut faults.lock());
                Ok(())
            },
        )]
    }));
    Ok(Explorable::new(cluster, scripts, move |cluster| {
        judge(cluster, written.lock().clone())
    }))
}

/// Three SCMs and three datanodes of two slots each, every component on `behavior`.
fn random_cluster(behavior: OzoneBehavior, seed: u64) -> Result<MiniOzoneCluster, Violation> {
    MiniOzoneCluster::builder()
        .scm_behavior(behavior.scm())
        .datanode_config(behavior.datanode())
        .slots_per_datanode(2)
        .seed(seed)
        .build()
        .map_err(setup)
}

/// The random cluster's checks once its threads stopped, with what the client `written`.
fn judge(cluster: &MiniOzoneCluster, written: Vec<Written>) -> Result<(), Violation> {
    no_datanode_granted_past_its_room(cluster)?;
    settle(cluster, &written)?;
    let (kept, deleted): (Vec<Key>, Vec<Key>) = split(written);
    deleted_keys_are_gone_everywhere(cluster, &deleted)?;
    log_drains(cluster)?;
    for key in kept.iter().chain(&deleted) {
        cluster.repair_round(key.container).map_err(setup)?;
    }
    no_deleted_block_back_after_repair(cluster, &deleted)?;
    kept_keys_are_whole(cluster, &kept)?;
    replicas_keep_metadata_and_files_together(cluster)?;
    scms_leave_safe_mode(cluster, SAFE_MODE_BOUND_TICKS)?;
    pending_allocations_roll_out(cluster, 2 * cluster.roll_interval_ms())
}

/// Ticks a healed cluster's SCMs get to leave safe mode: a datanode's heartbeat draws the
/// re-register command, the next brings its registration and node report.
const SAFE_MODE_BOUND_TICKS: usize = 5;

fn split(written: Vec<Written>) -> (Vec<Key>, Vec<Key>) {
    let mut kept = Vec::new();
    let mut deleted = Vec::new();
    for key in written {
        match key {
            Written::Kept(key) => kept.push(key),
            Written::Deleted(key) => deleted.push(key),
        }
    }
    (kept, deleted)
}

/// Heals every link, makes sure an SCM leads, closes what is still OPEN, and runs until
/// nothing is in flight.
fn settle(cluster: &MiniOzoneCluster, written: &[Written]) -> Result<(), Violation> {
    cluster.heal_all();
    if cluster.leader().is_err() {
        cluster.transfer_leadership(0).map_err(setup)?;
    }
    for key in written {
        let (Written::Kept(key) | Written::Deleted(key)) = key;
        // Already closed, or closed now: either way the container is CLOSED.
        let _ = cluster.close_key(key);
    }
    cluster_settles_after_healing(cluster, 100)?;
    Ok(())
}

/// The client: each request grants a key, writes a granted key (a replica lacking its last
/// block one time in three) and closes it, or deletes a closed key, as its seed says; what
/// is granted at the end is written then. Refusals (no leader, not ready, no room) are
/// not retried.
#[derive(Debug)]
struct Client {
    rng: SeededRng,
    granted: Vec<Key>,
    kept: Vec<(Key, bool)>,
    deleted: Vec<Key>,
}

impl Client {
    fn new(seed: u64) -> Self {
        Self {
            rng: SeededRng::new(seed),
            granted: Vec::new(),
            kept: Vec::new(),
            deleted: Vec::new(),
        }
    }

    /// One request.
    fn request(&mut self, cluster: &MiniOzoneCluster) -> Result<(), Violation> {
        let closed: Vec<usize> = (0..self.kept.len()).filter(|&i| self.kept[i].1).collect();
        match self.rng.below(3) {
            0 if !self.granted.is_empty() => {
                let key = self.granted.swap_remove(0);
                let written = write_and_close(cluster, key, &mut self.rng)?;
                self.kept.push(written);
            }
            1 if !closed.is_empty() => {
                let index = closed[self.rng.below(closed.len() as u64) as usize];
                match cluster.delete_key(&self.kept[index].0) {
                    Ok(_) => self.deleted.push(self.kept.swap_remove(index).0),
                    Err(refused) => refusal(refused)?,
                }
            }
            _ => match cluster.open_key(2) {
                Ok(key) => self.granted.push(key),
                Err(refused) => refusal(refused)?,
            },
        }
        Ok(())
    }

    /// The granted keys written; every key, kept or deleted.
    fn finish(&mut self, cluster: &MiniOzoneCluster) -> Result<Vec<Written>, Violation> {
        for key in std::mem::take(&mut self.granted) {
            let written = write_and_close(cluster, key, &mut self.rng)?;
            self.kept.push(written);
        }
        let kept = self.kept.iter().map(|(key, _)| Written::Kept(key.clone()));
        Ok(kept
            .chain(self.deleted.iter().cloned().map(Written::Deleted))
            .collect())
    }
}

/// Writes `key` to its datanodes (one of them lacking its last block one time in three)
/// and has the leader close it; returns it with whether the close was accepted.
fn write_and_close(
    cluster: &MiniOzoneCluster,
    key: Key,
    rng: &mut SeededRng,
) -> Result<(Key, bool), Violation> {
    let lagging = rng
        .chance(33)
        .then(|| key.datanodes[rng.below(key.datanodes.len() as u64) as usize]);
    match lagging {
        Some(datanode) => cluster.write_blocks_lagging(&key, datanode),
        None => cluster.write_blocks(&key),
    }
    .map_err(setup)?;
    let closed = match cluster.close_key(&key) {
        Ok(()) => true,
        Err(refused) => refusal(refused).map(|()| false)?,
    };
    Ok((key, closed))
}

/// A refusal the client shrugs off (the SCMs' state said no), or the set-up failure it is.
fn refusal(error: ClusterError) -> Result<(), Violation> {
    match error {
        ClusterError::NoLeader | ClusterError::Scm(_) => Ok(()),
        other => Err(setup(other)),
    }
}

/// One seeded fault: a leader transfer, an SCM restart, a datanode cut from an SCM or
/// from a peer, or a reconcile of a random container. A fault the cluster refuses (no
/// leader to send the reconcile, a node index already down) is a fault not injected.
fn inject_fault(cluster: &MiniOzoneCluster, rng: &mut SeededRng) {
    let scm = rng.below(cluster.scm_count() as u64) as usize;
    let datanodes = cluster.datanode_count();
    let dn = rng.below(datanodes as u64) as usize;
    let _ = match rng.below(6) {
        0 => cluster.transfer_leadership(scm),
        1 => cluster.restart_scm(scm),
        2 => cluster.set_link(dn, scm, false),
        3 => cluster.set_peer_link(dn, (dn + 1) % datanodes, false),
        _ => reconcile_one(cluster, rng),
    };
}

fn reconcile_one(cluster: &MiniOzoneCluster, rng: &mut SeededRng) -> Result<(), ClusterError> {
    let containers = cluster.leader()?.containers();
    if containers.is_empty() {
        return Ok(());
    }
    let container = containers[rng.below(containers.len() as u64) as usize].id;
    cluster.reconcile(container).map(|_| ())
}
