//! The race itself under a checker (HDDS-16811): a reconciliation against a deleting pass
//! on one replica, and two reconciliations of one container at once.
//!
//! **The race.** Reconciliation pulls a block's chunks from a peer and commits its
//! metadata with no container lock while the block deleting service deletes the block
//! under the write lock: the block is restored, or its metadata is left without its file.
//! **The fix** records every deleted block in the tree and commits under the read lock
//! only if the tree does not mark the block deleted; the seed's patch and the hardened
//! code both hold. The hardened removal of what a failed repair pulled never cuts below
//! what is committed.

use super::invariants::{
    deleted_blocks_not_live, live_blocks_present, no_metadata_without_file,
    replicas_agree_on_the_data_checksum,
};
use super::seed::{BLOCK_X, setup, violation};
use crate::datanode::container::reconcile::{self, PeerDatanode};
use crate::datanode::container::{
    ContainerBehavior, ContainerConfig, KeyValueContainerApi, ReplicaFactory,
};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{DatanodeId, LocalId};
use crate::scenarios::{Violation, join_all};
use crate::sim::peers::{PeerFailure, ScriptedPeer};
use crate::sim::replica_node::transaction;
use crate::sync::{Arc, thread};

/// The loom race: dn1 lacks block X, which dn2 has with two chunks; X's delete transaction
/// is pending on dn1. dn1 reconciles with dn2 (without the scan that follows) while its
/// block deleting service runs a pass. Two spawned threads.
///
/// Checks [`deleted_blocks_not_live`] and [`no_metadata_without_file`]: the harm, not the
/// mechanism (a legacy deletion that leaves no tree entry is only harmful once a
/// reconciliation copies the block back, which the seed's MC2 and the cluster scenario
/// show). The data checksum's agreement with the tree while a deletion and a
/// reconciliation both write the tree is
/// [`data_checksum_follows_concurrent_tree_writes`](super::beyond_seed::data_checksum_follows_concurrent_tree_writes),
/// a race of HDDS-16808's refresh beyond this seed.
pub fn delete_during_repair(behavior: ContainerBehavior) -> Result<(), Violation> {
    delete_during_repair_with(ContainerConfig::new(behavior), 0)
}

/// [`delete_during_repair`] where dn1 has X with its first chunk only, so the deletion
/// finds metadata (the seed's MISSING_CHUNK variant of MC3): reconciliation pulls the
/// second chunk only.
pub fn delete_during_partial_repair(behavior: ContainerBehavior) -> Result<(), Violation> {
    delete_during_repair_with(ContainerConfig::new(behavior), 1)
}

/// [`delete_during_repair`] with a configuration of its own (e.g. the hardened behavior
/// with one addition switched off), dn1 holding the first `local_chunks` chunks of X.
pub fn delete_during_repair_with(
    config: ContainerConfig,
    local_chunks: usize,
) -> Result<(), Violation> {
    delete_during_repair_on(&config, local_chunks)
}

/// [`delete_during_repair_with`] over the replicas `factory` starts (dn1 and its peer dn2):
/// the race against any implementation of the boundary.
pub fn delete_during_repair_on<F: ReplicaFactory>(
    factory: &F,
    local_chunks: usize,
) -> Result<(), Violation> {
    let dn1 = run_delete_during_repair(factory, local_chunks)?;
    deleted_blocks_not_live(&dn1, &[BLOCK_X])?;
    no_metadata_without_file(&dn1)
}

/// Runs the race of [`delete_during_repair_on`] and returns dn1 once both threads ended
/// and the deleting pass executed X's transaction.
fn run_delete_during_repair<F: ReplicaFactory>(
    factory: &F,
    local_chunks: usize,
) -> Result<Arc<F::Replica>, Violation> {
    let local: &[(LocalId, usize)] = if local_chunks == 0 {
        &[]
    } else {
        &[(BLOCK_X, local_chunks)]
    };
    let qc = ContainerState::QuasiClosed;
    let dn1 = Arc::new(factory.create(DatanodeId(1), qc, local).map_err(setup)?);
    let dn2 = factory
        .create(DatanodeId(2), qc, &[(BLOCK_X, 2)])
        .map_err(setup)?;
    dn1.store_delete_transactions(&[transaction(1, &[BLOCK_X])])
        .map_err(setup)?;

    let repair = {
        let (dn1, peer) = (Arc::clone(&dn1), dn2.peer());
        thread::spawn_named("reconciler", move || {
            // A failed block or peer round is an outcome, not a violation.
            let _ = dn1.reconcile_without_scan(&[peer]);
            Ok(Vec::<()>::new())
        })
    };
    let deleting = {
        let dn1 = Arc::clone(&dn1);
        thread::spawn_named("deleting service", move || {
            dn1.run_block_deleting_pass().map_err(setup)?;
            Ok(Vec::new())
        })
    };
    join_all(vec![repair, deleting])?;
    if dn1.pending_transactions() != 0 {
        return Err(violation(
            "scenario setup",
            "the deleting pass left the transaction pending".into(),
        ));
    }
    Ok(dn1)
}

/// Two reconciliations of [`CONTAINER`](crate::sim::replica_node::CONTAINER) on dn1, which lacks X (dn2 has it with two
/// chunks): one with dn2, one with dn2 behind a connection that drops at X's second chunk.
/// With `guarded` both go through the handler, which refuses the second while the first
/// runs (as Ozone's replication supervisor does); without, they call reconciliation
/// directly and may run at once. The seed's patch then commits the failed one's first
/// chunk, a partial block: landing after the other's whole commit, with the whole block
/// in the last tree write, it leaves the block's metadata without its second chunk, and
/// no later reconciliation sees a difference. The hardened code fails it whole, and only
/// its removal of the pulled chunk under the write lock, never below what is committed,
/// keeps it from unlinking the block the other commits. Two spawned threads; then dn1
/// reconciles with dn2 alone.
///
/// Checks [`no_metadata_without_file`] on dn1 after the two (the harm: the failed repair
/// unlinking the block the other committed); after the last reconciliation
/// [`live_blocks_present`], [`no_metadata_without_file`] and [`replicas_agree_on_the_data_checksum`]
/// for dn1 and dn2.
pub fn concurrent_reconciliations(
    behavior: ContainerBehavior,
    guarded: bool,
) -> Result<(), Violation> {
    concurrent_reconciliations_with(ContainerConfig::new(behavior), guarded)
}

/// [`concurrent_reconciliations`] with a configuration of its own (e.g. the hardened
/// behavior removing a failed repair's chunks under the read lock).
pub fn concurrent_reconciliations_with(
    config: ContainerConfig,
    guarded: bool,
) -> Result<(), Violation> {
    if guarded {
        return concurrent_reconciliations_on(&config);
    }
    concurrent_reconciliations_by(&config, |node, peer| {
        let container = node.container().map_err(setup)?;
        // Failed or repaired: an outcome, not a violation.
        let _ = reconcile::reconcile_container(&container, &[peer]);
        Ok(())
    })
}

/// [`concurrent_reconciliations`] through the replica's own entry point (`guarded`) over
/// the replicas `factory` starts: an implementation must refuse, or otherwise order, a
/// second reconciliation of the container while one runs.
pub fn concurrent_reconciliations_on<F: ReplicaFactory>(factory: &F) -> Result<(), Violation> {
    concurrent_reconciliations_by(factory, |node, peer| {
        // Refused, failed or repaired: an outcome, not a violation.
        let _ = node.reconcile_without_scan(&[peer]);
        Ok(())
    })
}

/// How one of the two threads reconciles dn1 with a peer.
type Reconcile<R> = fn(&R, Arc<dyn PeerDatanode>) -> Result<(), Violation>;

fn concurrent_reconciliations_by<F: ReplicaFactory>(
    factory: &F,
    reconcile: Reconcile<F::Replica>,
) -> Result<(), Violation> {
    let qc = ContainerState::QuasiClosed;
    let dn1 = Arc::new(factory.create(DatanodeId(1), qc, &[]).map_err(setup)?);
    let dn2 = factory
        .create(DatanodeId(2), qc, &[(BLOCK_X, 2)])
        .map_err(setup)?;
    let spawn = move |name: &str, node: Arc<F::Replica>, peer: Arc<dyn PeerDatanode>| {
        thread::spawn_named(name, move || {
            reconcile(&node, peer)?;
            Ok(Vec::<()>::new())
        })
    };
    let whole = spawn("reconciler", Arc::clone(&dn1), dn2.peer());
    let failing = spawn(
        "reconciler, failing peer",
        Arc::clone(&dn1),
        ScriptedPeer::failing(dn2.peer(), 1, PeerFailure::FromThenOn),
    );
    join_all(vec![whole, failing])?;
    no_metadata_without_file(&dn1)?;
    dn1.reconcile_without_scan(&[dn2.peer()]).map_err(setup)?;
    no_metadata_without_file(&dn1)?;
    let nodes = [dn1, Arc::new(dn2)];
    live_blocks_present(&nodes, &[(BLOCK_X, 2)])?;
    replicas_agree_on_the_data_checksum(&nodes)
}
