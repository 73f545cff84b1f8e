//! A container whose last key is deleted while a reconciliation copies a block back:
//! HDDS-16811's restored block meets the SCM's container deletion (HDDS-14416).
//!
//! **The race.** The lagging replica ran the key's transaction, kept no trace of the block
//! it never had and marked itself empty (a sticky flag); an operator's reconcile copies
//! that block back from a peer that has not deleted it yet. Every replica then reports
//! empty, the container goes DELETING, and the replica with the block refuses its
//! non-forced delete. **The fixes**: the replica records every deleted block, so the
//! repair brings nothing back (HDDS-16811's patch); and the SCM force-deletes a replica
//! that reports while its container is DELETING (HDDS-14416), so even a restored block
//! goes with its replica. Before both, the container stays DELETING and the block lives.

use super::explorable::{DriverStep, Explorable};
use super::invariants::{
    SEED_KEY, cluster_settles_after_healing, deleted_keys_are_gone_everywhere, log_drains,
    replicas_keep_metadata_and_files_together,
};
use super::setup::{CUT_OFF, LAGGING, ROUNDS, run_on_threads, setup};

use crate::datanode::container::{ContainerBehavior, ContainerConfig};
use crate::datanode::daemon::DatanodeConfig;
use crate::scenarios::Violation;
use crate::scenarios::rng::SeededRng;
use crate::scm::{DeletingReplicaRule, ScmError};
use crate::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};

/// Ticks the set-up may take for the deletion to reach the replicas the SCM reaches.
const SETUP_TICKS: usize = 10;

/// The code under test: the replicas' and the SCM's report handler's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeletingContainerBehavior {
    /// The replicas' `SeedPatch`, the SCM as Ozone master (HDDS-14416, HDDS-14684).
    SeedPatch,
    /// The replicas' `Hardened`, the SCM as Ozone master.
    Hardened,
    /// The replicas before HDDS-16811's patch (`Legacy`), the SCM as Ozone master: the
    /// block comes back, and the force delete removes it with its replica.
    LegacyReplica,
    /// The replicas' `Legacy`, the SCM with HDDS-14416 and without HDDS-14684: the
    /// container is CLOSED, so the CLOSED replica with the block is force-deleted all the
    /// same (only a QUASI_CLOSED one would bring the container back).
    LegacyClosedOnlyRule,
    /// Both before their fix: the replicas' `Legacy`, the SCM before HDDS-14416 (the
    /// replica brings the container back to CLOSED).
    Legacy,
}

impl DeletingContainerBehavior {
    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            DeletingContainerBehavior::SeedPatch => "SeedPatch",
            DeletingContainerBehavior::Hardened => "Hardened",
            DeletingContainerBehavior::LegacyReplica => "LegacyReplica",
            DeletingContainerBehavior::LegacyClosedOnlyRule => "LegacyClosedOnlyRule",
            DeletingContainerBehavior::Legacy => "Legacy",
        }
    }

    /// The replicas' code.
    pub fn replica(self) -> ContainerBehavior {
        match self {
            DeletingContainerBehavior::SeedPatch => ContainerBehavior::SeedPatch,
            DeletingContainerBehavior::Hardened => ContainerBehavior::Hardened,
            _ => ContainerBehavior::Legacy,
        }
    }

    /// The SCM's rule for a replica of a DELETING container.
    pub fn rule(self) -> DeletingReplicaRule {
        match self {
            DeletingContainerBehavior::Legacy => DeletingReplicaRule::LegacyComeBackToClosed,
            DeletingContainerBehavior::LegacyClosedOnlyRule => {
                DeletingReplicaRule::LegacyForceDeleteClosedOnly
            }
            _ => DeletingReplicaRule::ForceDeleteClosedOrQuasiClosed,
        }
    }
}

/// One SCM and three datanodes (`behavior`) hold one CLOSED container with a single key
/// whose replica on datanode 3 lacks its last block. Datanode 1 is cut off from the SCM,
/// the key is deleted, and the cluster steps until the other two replicas ran the
/// transaction and marked themselves empty. The cluster then runs on its threads for
/// `ROUNDS` (4) moves of its clock while the driver heals datanode 1's link and runs
/// `ozone admin container reconcile` at rounds the seed picks (refused once the container
/// is DELETING). The cluster then settles; checks
/// [`deleted_keys_are_gone_everywhere`], [`log_drains`] and
/// [`replicas_keep_metadata_and_files_together`].
pub fn emptied_container_deleted_despite_a_restored_block(
    behavior: DeletingContainerBehavior,
    seed: u64,
) -> Result<(), Violation> {
    let (cluster, key) = emptied_but_one(behavior)?;
    let mut rng = SeededRng::new(seed);
    let heal_at = rng.below(ROUNDS as u64) as usize;
    let reconcile_at = rng.below(ROUNDS as u64) as usize;
    run_on_threads::<()>(&cluster, Vec::new(), |round| {
        if round == heal_at {
            heal(&cluster)?;
        }
        if round == reconcile_at {
            reconcile(&cluster, &key)?;
        }
        Ok(())
    })?;
    judge(&cluster, &key)
}

/// [`emptied_container_deleted_despite_a_restored_block`] to explore: datanode 1's heal
/// and the operator's reconcile are the driver's steps.
pub fn emptied_container_deleted_despite_a_restored_block_explorable(
    behavior: DeletingContainerBehavior,
) -> Result<Explorable, Violation> {
    let (cluster, key) = emptied_but_one(behavior)?;
    let doomed = key.clone();
    let scripts = vec![
        vec![DriverStep::new("heal dn1's link to scm1", heal)],
        vec![DriverStep::new(
            "ozone admin container reconcile",
            move |cluster| reconcile(cluster, &doomed),
        )],
    ];
    Ok(Explorable::new(cluster, scripts, move |cluster| {
        judge(cluster, &key)
    }))
}

/// Datanode 1's link to the SCM healed.
fn heal(cluster: &MiniOzoneCluster) -> Result<(), Violation> {
    cluster.set_link(CUT_OFF, 0, true).map_err(setup)
}

/// The operator's reconcile of the key's container, refused once it is DELETING.
fn reconcile(cluster: &MiniOzoneCluster, key: &Key) -> Result<(), Violation> {
    match cluster.reconcile(key.container) {
        Ok(_) | Err(ClusterError::Scm(ScmError::NotEligibleForReconciliation { .. })) => Ok(()),
        Err(other) => Err(setup(other)),
    }
}

/// Healed and settled: the key gone everywhere, the log empty, no metadata without file.
fn judge(cluster: &MiniOzoneCluster, key: &Key) -> Result<(), Violation> {
    heal(cluster)?;
    cluster_settles_after_healing(cluster, 50)?;
    deleted_keys_are_gone_everywhere(cluster, std::slice::from_ref(key))?;
    log_drains(cluster)?;
    replicas_keep_metadata_and_files_together(cluster)
}

/// The set-up of [`emptied_container_deleted_despite_a_restored_block`], stepped: the
/// key written (its replica on datanode 3 lacking its last block), closed and settled;
/// datanode 1 cut from the SCM; the key deleted and the two other replicas emptied and
/// marked so. Returns the cluster and the key.
pub fn emptied_but_one(
    behavior: DeletingContainerBehavior,
) -> Result<(MiniOzoneCluster, Key), Violation> {
    let cluster = MiniOzoneCluster::builder()
        .scms(1)
        .deleting_replica_rule(behavior.rule())
        .datanode_config(DatanodeConfig {
            container: ContainerConfig::new(behavior.replica()),
            ..DatanodeConfig::default()
        })
        .build()
        .map_err(setup)?;
    let key = write_lagging_key(&cluster).map_err(setup)?;
    cluster.set_link(CUT_OFF, 0, false).map_err(setup)?;
    cluster.delete_key(&key).map_err(setup)?;
    for _ in 0..SETUP_TICKS {
        if others_marked_empty(&cluster, &key)? {
            return Ok((cluster, key));
        }
        cluster.tick().map_err(setup)?;
    }
    Err(Violation {
        seed: SEED_KEY,
        property: "scenario setup",
        detail: "the replicas the SCM reaches were not emptied".into(),
    })
}

/// A key of two blocks whose replica on [`LAGGING`] lacks the last, closed and settled.
fn write_lagging_key(cluster: &MiniOzoneCluster) -> Result<Key, ClusterError> {
    let key = cluster.open_key(2)?;
    cluster.write_blocks_lagging(&key, cluster.datanode(LAGGING)?.id())?;
    cluster.close_key(&key)?;
    cluster.run_until_quiescent(10)?;
    Ok(key)
}

/// Every replica of `key`'s container but [`CUT_OFF`]'s is marked empty.
fn others_marked_empty(cluster: &MiniOzoneCluster, key: &Key) -> Result<bool, Violation> {
    for dn in (0..cluster.datanode_count()).filter(|&dn| dn != CUT_OFF) {
        let replicas = cluster.datanode(dn).map_err(setup)?.replicas();
        let empty = replicas
            .container(key.container)
            .is_ok_and(|replica| replica.is_empty());
        if !empty {
            return Ok(false);
        }
    }
    Ok(true)
}
