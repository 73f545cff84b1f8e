//! A container copied to a new datanode while keys are granted, judged by the datanodes'
//! own node reports: HDDS-14924's pending allocation on a replicate's target, and what a
//! leader change does to it (HDDS-16891's lost pending allocations, once more).
//!
//! **The race.** The replication manager sends a CLOSED container's copy to a target; its
//! node reports show the copy only once it has landed, so allocation counts that space
//! free and grants it to new containers. The record that covers it lives in the leader's
//! memory: a new leader forgets it, and the seed's rebuild reserves for OPEN containers
//! only, so it grants the target's room again while the copy (taken by the target before
//! it heard the new term, so not fenced) lands. **The fixes**: HDDS-14924 records a
//! pending allocation on the target with the replicate's pending add; this crate's
//! `ScmHardening::rebuild_reserves_replication_targets` has the rebuild keep a slot for
//! each under-replicated closed container on every datanode without a replica of it.

use super::invariants::no_datanode_granted_past_its_room;
use super::liveness::pending_allocations_roll_out;
use super::setup::{run_on_threads, setup};

use super::invariants::container_keeps_its_replication_factor;
use crate::hdds::ids::ContainerId;
use crate::scenarios::Violation;
use crate::scm::{
    LifeCycleState, PendingOpsOnNewTerm, ReplicationSpaceAccounting, ScmBehavior, ScmHardening,
};
use crate::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};
use crate::sync::{Arc, thread};

/// The container the set-up copies: the first one granted.
const COPIED: ContainerId = ContainerId(1);
/// Replicas each container needs (pipelines of two datanodes).
const FACTOR: usize = 2;
/// Blocks of the copied key: with one chunk of 8 bytes each, they fill its container.
const BLOCKS: usize = 8;
/// The container size: what [`BLOCKS`] blocks hold, so the copy takes a whole slot.
const CONTAINER_BYTES: u64 = 64;
/// Keys the client asks for while the copy is made: one more than the target has room
/// for beside it.
const KEYS: usize = 3;
/// Ticks the set-up may take for the container to close, and the cluster to settle.
const SETUP_TICKS: usize = 10;
/// Ticks the cluster may take to settle after its threads stop: the copy lands (or is
/// sent again by the new leader and lands), the excess replica goes.
const SETTLE_TICKS: usize = 30;

/// The code under test, each variant one change from this crate's reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplicationTargetBehavior {
    /// [`ScmBehavior::Hardened`] with every addition, HDDS-14924 in: the rebuild keeps a
    /// slot for replicates it cannot see.
    Hardened,
    /// [`ScmBehavior::Hardened`] without
    /// [`ScmHardening::rebuild_reserves_replication_targets`]: Ozone master's replication
    /// manager (HDDS-14924) beside the seed's rebuild, which a leader change empties of
    /// the target's record.
    HardenedWithoutTargetRebuild,
    /// [`ScmBehavior::Hardened`]'s allocation with the replication manager before
    /// HDDS-14924: a replicate records nothing on its target.
    LegacyUnaccounted,
    /// [`ScmBehavior::Hardened`] with the replication manager before HDDS-8473: its
    /// pending ops survive a lost and regained leadership.
    LegacyPendingOpsKept,
}

impl ReplicationTargetBehavior {
    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            ReplicationTargetBehavior::Hardened => "Hardened",
            ReplicationTargetBehavior::HardenedWithoutTargetRebuild => {
                "HardenedWithoutTargetRebuild"
            }
            ReplicationTargetBehavior::LegacyUnaccounted => "LegacyUnaccounted",
            ReplicationTargetBehavior::LegacyPendingOpsKept => "LegacyPendingOpsKept",
        }
    }

    /// The SCMs' additions.
    pub fn hardening(self) -> ScmHardening {
        match self {
            ReplicationTargetBehavior::HardenedWithoutTargetRebuild => ScmHardening {
                rebuild_reserves_replication_targets: false,
                ..ScmHardening::ALL
            },
            _ => ScmHardening::ALL,
        }
    }

    /// Whether a replicate's target keeps a pending allocation.
    pub fn accounting(self) -> ReplicationSpaceAccounting {
        match self {
            ReplicationTargetBehavior::LegacyUnaccounted => {
                ReplicationSpaceAccounting::LegacyUnaccounted
            }
            _ => ReplicationSpaceAccounting::PendingAllocationOnTarget,
        }
    }

    /// What the replication managers do with their pending ops on a new term.
    pub fn pending_ops(self) -> PendingOpsOnNewTerm {
        match self {
            ReplicationTargetBehavior::LegacyPendingOpsKept => PendingOpsOnNewTerm::LegacyKeep,
            _ => PendingOpsOnNewTerm::Clear,
        }
    }
}

/// [`under_replicated_container`]'s cluster run on its threads for `ROUNDS` (4) moves of
/// its clock: the target takes the replicate and copies the container while a client
/// asks for `KEYS` (3) keys of one block, writing each at once (a request refused is not
/// retried). Checks [`no_datanode_granted_past_its_room`] with every granted key written;
/// then, once every deadline has passed and the cluster has settled (the copy landed and
/// its report confirmed its pending allocation), [`pending_allocations_roll_out`].
pub fn replica_copied_while_keys_are_granted(
    behavior: ReplicationTargetBehavior,
    seed: u64,
) -> Result<(), Violation> {
    copied_while(behavior, seed, false)
}

/// [`replica_copied_while_keys_are_granted`] while another thread moves leadership to
/// SCM 2, which knows nothing of the replicate SCM 1 sent.
pub fn replica_copied_while_leadership_moves(
    behavior: ReplicationTargetBehavior,
    seed: u64,
) -> Result<(), Violation> {
    copied_while(behavior, seed, true)
}

/// [`under_replicated_container`]'s cluster run on its threads for `ROUNDS` (4) moves of
/// its clock while another thread moves leadership to SCM 2 and back to SCM 1 (HDDS-8473):
/// the target may hear SCM 2's term before it takes SCM 1's replicate, and drop it as
/// stale. Once the threads stop, the cluster settles within `SETTLE_TICKS` (30) ticks, far
/// inside a replicate's deadline; checks [`container_keeps_its_replication_factor`]: SCM 1,
/// leading again, sent the copy again rather than wait for an op of its earlier term.
pub fn replica_copied_across_a_reelection(
    behavior: ReplicationTargetBehavior,
    seed: u64,
) -> Result<(), Violation> {
    let cluster = Arc::new(under_replicated_container(behavior, seed)?);
    let ratis = Arc::clone(&cluster);
    let others = vec![thread::spawn(move || {
        ratis.transfer_leadership(1).map_err(setup)?;
        ratis.transfer_leadership(0).map_err(setup)?;
        Ok(Vec::<()>::new())
    })];
    run_on_threads(&cluster, others, |_| Ok(()))?;
    cluster.run_until_quiescent(SETTLE_TICKS).map_err(setup)?;
    crate::events::debug!(
        why = "settled: nothing in flight, well inside a replicate's deadline",
        "cluster quiescent"
    );
    container_keeps_its_replication_factor(&cluster, COPIED, FACTOR)
}

fn copied_while(
    behavior: ReplicationTargetBehavior,
    seed: u64,
    moves_leadership: bool,
) -> Result<(), Violation> {
    let cluster = Arc::new(under_replicated_container(behavior, seed)?);
    let client = Arc::clone(&cluster);
    let mut others = vec![thread::spawn(move || write_keys(&client))];
    if moves_leadership {
        let ratis = Arc::clone(&cluster);
        others.push(thread::spawn(move || {
            ratis.transfer_leadership(1).map_err(setup)?;
            Ok(Vec::new())
        }));
    }
    run_on_threads(&cluster, others, |_| Ok(()))?;
    no_datanode_granted_past_its_room(&cluster)?;
    // A replicate the target dropped (fenced by the new term) or never got is sent again
    // once its deadline passes, by when the keys' grants have aged out too (they may
    // have left no room for the copy); the settled cluster has no copy in flight.
    cluster.clock().advance_ms(cluster.resend_timeout_ms());
    cluster.run_until_quiescent(SETTLE_TICKS).map_err(setup)?;
    pending_allocations_roll_out(&cluster, 2 * cluster.roll_interval_ms())
}

/// Two SCMs (`behavior`, [`ScmBehavior::Hardened`] allocation), three datanodes with room for three containers of
/// `CONTAINER_BYTES` (64) each, replication two (pipelines of two datanodes), the
/// pipeline choice drawn from `seed`. SCM 1 grants a key of `BLOCKS` (8) blocks that fill
/// its container; the client's write reaches the pipeline's second datanode only (the
/// first missed it); the container is closed with that one replica, and SCM 1's
/// replication manager queues a replicate to a datanode without one (the stepped cluster,
/// before the threads start).
pub fn under_replicated_container(
    behavior: ReplicationTargetBehavior,
    seed: u64,
) -> Result<MiniOzoneCluster, Violation> {
    let cluster = MiniOzoneCluster::builder()
        .scms(2)
        .datanodes(3)
        .replication(FACTOR)
        .slots_per_datanode(3)
        .container_size_bytes(CONTAINER_BYTES)
        .scm_behavior(ScmBehavior::Hardened)
        .scm_hardening(behavior.hardening())
        .replication_space_accounting(behavior.accounting())
        .pending_ops_on_new_term(behavior.pending_ops())
        .seed(seed)
        .build()
        .map_err(setup)?;
    let key = cluster.open_key(BLOCKS).map_err(setup)?;
    let holder = key.datanodes[1];
    cluster
        .write_replica(&key, holder, &key.blocks)
        .map_err(setup)?;
    cluster.close_key(&key).map_err(setup)?;
    for _ in 0..SETUP_TICKS {
        if is_closed(&cluster, &key)? {
            break;
        }
        cluster.tick().map_err(setup)?;
    }
    if !is_closed(&cluster, &key)? {
        return Err(setup(ClusterError::NotQuiescent { ticks: SETUP_TICKS }));
    }
    // The replication manager's pass that finds the container under-replicated.
    cluster.tick_scms().map_err(setup)?;
    Ok(cluster)
}

fn is_closed(cluster: &MiniOzoneCluster, key: &Key) -> Result<bool, Violation> {
    let leader = cluster.leader().map_err(setup)?;
    Ok(leader
        .container(key.container)
        .is_some_and(|info| info.state == LifeCycleState::Closed))
}

/// The client: `KEYS` keys of one block asked for, each written at once when granted.
fn write_keys(cluster: &MiniOzoneCluster) -> Result<Vec<()>, Violation> {
    for _ in 0..KEYS {
        match cluster.open_key(1) {
            Ok(key) => cluster.write_blocks(&key).map_err(setup)?,
            Err(ClusterError::NoLeader | ClusterError::Scm(_)) => {}
            Err(other) => return Err(setup(other)),
        }
    }
    Ok(Vec::new())
}
