//! An over-replicated container across an SCM failover: the deposed leader's and the new
//! leader's replication managers both delete an excess replica (HDDS-16449, cited by
//! HDDS-17268; HDDS-4589).
//!
//! **The race.** The old leader's over-replication handler queued a force delete of one
//! replica; leadership moves, and the new leader, its pending ops cleared, picks an excess
//! replica of its own while the old leader's delete still waits in its queue for a
//! datanode that restarted. Before HDDS-4589 the two SCMs may order the replicas
//! differently, so the picks differ; before HDDS-17268 the restarted datanode runs the old
//! term's delete. With both, two replicas go and the container is left below its factor.
//! **Each fence alone holds**: the same order makes the second delete repeat the first
//! (HDDS-16449's redundant delete), and the term heard before init drops the stale one.

use super::explorable::{DriverStep, Explorable};
use super::invariants::{
    SEED_KEY, cluster_settles_after_healing, container_keeps_its_replication_factor,
};
use super::setup::{ROUNDS, run_on_threads, setup};

use crate::datanode::daemon::DatanodeConfig;
use crate::datanode::state_context::StateContextBehavior;
use crate::hdds::command::CommandKind;
use crate::hdds::ids::ContainerId;
use crate::scenarios::Violation;
use crate::scenarios::rng::SeededRng;
use crate::scm::ExcessReplicaOrder;
use crate::sim::mini_cluster::{ClusterError, MiniOzoneCluster};

/// Replicas a container should have.
const FACTOR: usize = 3;
/// The SCM that leads first, and whose delete goes stale.
const OLD_LEADER: usize = 0;
/// The SCM leadership moves to.
const NEW_LEADER: usize = 1;
/// Ticks the set-up may take to see the old leader pick its excess replica.
const SETUP_TICKS: usize = 10;

/// The code under test: the SCMs' order of excess replicas and the datanodes' term
/// fencing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailoverDeleteBehavior {
    /// Ozone with HDDS-17268's patch: the sorted order (HDDS-4589) and the datanode's
    /// `SeedPatch`.
    SeedPatch,
    /// The sorted order and the datanode's `Hardened`.
    Hardened,
    /// The sorted order, the datanode before HDDS-17268 (`Legacy`): the stale delete runs
    /// and the new leader's repeats it on the same replica, HDDS-16449's redundant delete.
    LegacyTermFence,
    /// Each SCM's own order (before HDDS-4589), the datanode's `SeedPatch`: the picks
    /// differ, but the restarted datanode drops the stale delete.
    LegacyExcessOrder,
    /// Both before their fix: the double delete.
    Legacy,
}

impl FailoverDeleteBehavior {
    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            FailoverDeleteBehavior::SeedPatch => "SeedPatch",
            FailoverDeleteBehavior::Hardened => "Hardened",
            FailoverDeleteBehavior::LegacyTermFence => "LegacyTermFence",
            FailoverDeleteBehavior::LegacyExcessOrder => "LegacyExcessOrder",
            FailoverDeleteBehavior::Legacy => "Legacy",
        }
    }

    /// The SCMs' order of excess replicas.
    pub fn order(self) -> ExcessReplicaOrder {
        match self {
            FailoverDeleteBehavior::LegacyExcessOrder | FailoverDeleteBehavior::Legacy => {
                ExcessReplicaOrder::LegacyPerScm
            }
            _ => ExcessReplicaOrder::Sorted,
        }
    }

    /// The datanodes' term fencing.
    pub fn term_fencing(self) -> StateContextBehavior {
        match self {
            FailoverDeleteBehavior::Hardened => StateContextBehavior::Hardened,
            FailoverDeleteBehavior::LegacyTermFence | FailoverDeleteBehavior::Legacy => {
                StateContextBehavior::Legacy
            }
            _ => StateContextBehavior::SeedPatch,
        }
    }
}

/// Two SCMs and four datanodes (`behavior`) hold one CLOSED container on three of them;
/// the old leader sends a replicate command to the fourth, sees four replicas and queues a
/// force delete of one. That datanode is cut off from it, leadership moves, and the
/// datanode restarts and hears the new leader first. The cluster then runs on its threads
/// for `ROUNDS` (4) moves of its clock (the new leader's replication manager queues the
/// container, its processor picks its own excess) while the driver heals the cut link at
/// a round the seed picks. The cluster then settles; checks
/// [`container_keeps_its_replication_factor`].
pub fn over_replicated_container_across_a_leader_change(
    behavior: FailoverDeleteBehavior,
    seed: u64,
) -> Result<(), Violation> {
    let (cluster, container, stale_target) = stale_excess_delete_in_flight(behavior)?;
    let heal_at = SeededRng::new(seed).below(ROUNDS as u64) as usize;
    run_on_threads::<()>(&cluster, Vec::new(), |round| {
        if round == heal_at {
            heal(&cluster, stale_target)?;
        }
        Ok(())
    })?;
    judge(&cluster, container, stale_target)
}

/// [`over_replicated_container_across_a_leader_change`] to explore: the heal of the stale
/// target's link to the old leader is the driver's step.
pub fn over_replicated_container_across_a_leader_change_explorable(
    behavior: FailoverDeleteBehavior,
) -> Result<Explorable, Violation> {
    let (cluster, container, stale_target) = stale_excess_delete_in_flight(behavior)?;
    let scripts = vec![vec![DriverStep::new(
        "heal the stale target's link to scm1",
        move |cluster| heal(cluster, stale_target),
    )]];
    Ok(Explorable::new(cluster, scripts, move |cluster| {
        judge(cluster, container, stale_target)
    }))
}

/// The stale target's link to the old leader healed.
fn heal(cluster: &MiniOzoneCluster, stale_target: usize) -> Result<(), Violation> {
    cluster
        .set_link(stale_target, OLD_LEADER, true)
        .map_err(setup)
}

/// Healed and settled: the container at its factor.
fn judge(
    cluster: &MiniOzoneCluster,
    container: ContainerId,
    stale_target: usize,
) -> Result<(), Violation> {
    heal(cluster, stale_target)?;
    cluster_settles_after_healing(cluster, 50)?;
    crate::events::debug!(
        why = "healed and settled: every link up, every command delivered",
        "cluster quiescent"
    );
    container_keeps_its_replication_factor(cluster, container, FACTOR)
}

/// The set-up of [`over_replicated_container_across_a_leader_change`], stepped: the
/// cluster with the old leader's force delete of an excess replica queued and undelivered
/// (its datanode cut off from it), the new leader serving, and the delete's datanode
/// restarted, having heard the new leader only. Returns the cluster, the container and
/// that datanode's index.
pub fn stale_excess_delete_in_flight(
    behavior: FailoverDeleteBehavior,
) -> Result<(MiniOzoneCluster, ContainerId, usize), Violation> {
    let cluster = MiniOzoneCluster::builder()
        .scms(2)
        .datanodes(FACTOR + 1)
        .replication(FACTOR)
        .excess_replica_order(behavior.order())
        .datanode_config(DatanodeConfig {
            behavior: behavior.term_fencing(),
            ..DatanodeConfig::default()
        })
        .build()
        .map_err(setup)?;
    let key = cluster.write_key(1).map_err(setup)?;
    cluster.run_until_quiescent(10).map_err(setup)?;
    let spare = (0..cluster.datanode_count())
        .find(|&dn| {
            cluster
                .datanode(dn)
                .is_ok_and(|d| !key.datanodes.contains(&d.id()))
        })
        .ok_or_else(|| unexpected("every datanode holds the container"))?;
    cluster.replicate(key.container, spare).map_err(setup)?;
    // The new leader-to-be applies the container, so it records the replicas each
    // datanode reports, as a follower that kept up does (one that lagged would learn
    // them only from the reports after its election, and judge the container by the
    // replicas it heard of so far).
    cluster.catch_up_scm(NEW_LEADER).map_err(setup)?;
    let target = tick_until_excess_delete_queued(&cluster, key.container)
        .map_err(setup)?
        .ok_or_else(|| unexpected("the old leader queued no delete of an excess replica"))?;
    cluster.set_link(target, OLD_LEADER, false).map_err(setup)?;
    cluster.transfer_leadership(NEW_LEADER).map_err(setup)?;
    cluster.restart_datanode(target).map_err(setup)?;
    cluster.tick_datanode(target).map_err(setup)?;
    Ok((cluster, key.container, target))
}

/// Steps the cluster (the SCMs' services, then each datanode) until the leader's
/// replication manager has queued a force delete of a replica of `container`; returns
/// the index of the datanode it is queued for, leaving that datanode's tick undone.
fn tick_until_excess_delete_queued(
    cluster: &MiniOzoneCluster,
    container: ContainerId,
) -> Result<Option<usize>, ClusterError> {
    for _ in 0..SETUP_TICKS {
        cluster.tick_scms()?;
        let leader = cluster.leader()?;
        for dn in 0..cluster.datanode_count() {
            let id = cluster.datanode(dn)?.id();
            let queued = leader.queued_commands(id).iter().any(|c| {
                matches!(c.kind, CommandKind::DeleteContainer { container: c, force: true }
                    if c == container)
            });
            if queued {
                return Ok(Some(dn));
            }
        }
        for dn in 0..cluster.datanode_count() {
            cluster.tick_datanode(dn)?;
        }
        cluster.clock().advance_ms(1_000);
    }
    Ok(None)
}

fn unexpected(detail: &str) -> Violation {
    Violation {
        seed: SEED_KEY,
        property: "scenario setup",
        detail: detail.to_owned(),
    }
}
