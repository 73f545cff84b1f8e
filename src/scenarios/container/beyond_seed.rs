//! Races this crate found beyond the seed's patch (HDDS-16811 with HDDS-16808), each a
//! scenario where [`ContainerBehavior::SeedPatch`] is caught and
//! [`ContainerBehavior::Hardened`] holds.
//!
//! **The races.** HDDS-16808's refresh in Ozone's order lets a deleting round's tree write
//! and a reconciliation's (which takes no container lock), each moving the root,
//! interleave and leave the data checksum on the older root; a deleting round whose tree write fails unlinks a file and records
//! nothing, so the seed's tree check lets a repair commit metadata without its file.
//! **The fixes**: the refresh inside the tree write's critical section
//! (`refresh_checksum_in_tree_write`); the commit also checks the block file
//! (`commit_requires_block_file`). The other races beyond the seed need two
//! reconciliations of one container at once, which the handler (as Ozone's replication
//! supervisor) never runs: the seed's partial commit losing a block's chunks, and the
//! hardened cleanup under the read lock unlinking a committed block; both are
//! [`concurrent_reconciliations_with`](super::repair_races::concurrent_reconciliations_with)
//! around the handler.

use super::invariants::{
    data_checksum_follows_the_tree, deleted_blocks_not_live, no_metadata_without_file,
};
use super::seed::{BLOCK_X, BLOCK_Y, setup, violation};
use crate::datanode::container::store::{ContainerStore, MemoryStore};
use crate::datanode::container::{ContainerBehavior, ContainerConfig};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::DatanodeId;
use crate::scenarios::{Violation, join_all};
use crate::sim::faulty_store::{FaultyStore, StoreOp};
use crate::sim::replica_node::{CONTAINER, ReplicaNode, transaction};
use crate::sync::thread;

/// dn2 held block Y and executed its deletion, so its tree marks Y deleted; dn1 lacks Y,
/// and X's delete transaction is pending on dn1, where X has no metadata (a block no
/// replica holds, as the unused blocks of a committed key are deleted). dn1 reconciles
/// with dn2 (without the scan that follows) while its deleting service runs a pass. Two
/// spawned threads, both writing dn1's tree with a new root: the round records X as
/// deleted (the seed's part 1), the reconciliation adopts Y's deleted entry, with no
/// container lock.
///
/// Checks [`data_checksum_follows_the_tree`] on dn1: each write's refresh must leave the
/// value in memory and in the database on the tree file's root. In Ozone's order (the
/// seed's patch: each write compares its new root with the value read before the write,
/// and sets it after the write) the later tree write's refresh can run first, and the
/// earlier write's then sets the older root.
pub fn data_checksum_follows_concurrent_tree_writes(
    behavior: ContainerBehavior,
) -> Result<(), Violation> {
    data_checksum_follows_concurrent_tree_writes_with(ContainerConfig::new(behavior))
}

/// [`data_checksum_follows_concurrent_tree_writes`] with a configuration of its own.
pub fn data_checksum_follows_concurrent_tree_writes_with(
    config: ContainerConfig,
) -> Result<(), Violation> {
    let qc = ContainerState::QuasiClosed;
    let dn1 = ReplicaNode::new(DatanodeId(1), config, qc, &[]).map_err(setup)?;
    let dn2 = ReplicaNode::new(DatanodeId(2), config, qc, &[(BLOCK_Y, 2)]).map_err(setup)?;
    dn2.store_transactions(&[transaction(2, &[BLOCK_Y])])
        .map_err(setup)?;
    dn2.delete_blocks().map_err(setup)?;
    dn1.store_transactions(&[transaction(1, &[BLOCK_X])])
        .map_err(setup)?;
    let repair = {
        let (dn1, peer) = (dn1.clone(), dn2.peer());
        thread::spawn_named("reconciler", move || {
            dn1.handler
                .reconcile_without_scan(CONTAINER, &[peer])
                .map_err(setup)?;
            Ok(Vec::<()>::new())
        })
    };
    let deleting = {
        let dn1 = dn1.clone();
        thread::spawn_named("deleting service", move || {
            dn1.delete_blocks().map_err(setup)?;
            Ok(Vec::new())
        })
    };
    join_all(vec![repair, deleting])?;
    let adopted = dn1.tree_entry_deleted(BLOCK_Y).map_err(setup)? == Some(true);
    if dn1.pending_transactions() != 0 || !adopted {
        return Err(violation(
            "scenario setup",
            "the deleting pass or the adoption of Y's deletion did not happen".into(),
        ));
    }
    data_checksum_follows_the_tree(&dn1)
}

/// dn1 lacks X, which dn2 has with two chunks; X's transaction is pending on dn1, whose
/// store fails every tree write while X has no metadata there, so a deleting round that
/// finds X unreferenced unlinks its file (none, or the repair's) and then fails before it
/// records anything; the transaction stays pending. dn1 reconciles with dn2 while its
/// deleting service runs a pass. Two spawned threads.
///
/// Checks [`no_metadata_without_file`] on dn1 once both ended: a round that found X
/// without metadata ran before the repair's commit (the round holds the write lock, the
/// commit the read lock), so metadata without its file there was committed by the
/// repair after the round unlinked the file. (A round that finds X's metadata unlinks the
/// file and writes the tree with X's metadata still present, so that round's write does
/// not fail.) Then, with the faults gone, a deleting pass executes the transaction:
/// [`deleted_blocks_not_live`] and [`no_metadata_without_file`].
pub fn failed_deletion_tree_write_never_orphans_a_repair(
    behavior: ContainerBehavior,
) -> Result<(), Violation> {
    let config = ContainerConfig::new(behavior);
    let qc = ContainerState::QuasiClosed;
    let memory = MemoryStore::new(qc);
    let faulty = FaultyStore::new(memory.shared());
    let dn1 =
        ReplicaNode::with_store(DatanodeId(1), config, faulty.shared(), &[]).map_err(setup)?;
    let dn2 = ReplicaNode::new(DatanodeId(2), config, qc, &[(BLOCK_X, 2)]).map_err(setup)?;
    dn1.store_transactions(&[transaction(1, &[BLOCK_X])])
        .map_err(setup)?;
    faulty.fail_when(StoreOp::WriteTreeFile, move |_| {
        matches!(memory.get_block(BLOCK_X), Ok(None))
    });
    let repair = {
        let (dn1, peer) = (dn1.clone(), dn2.peer());
        thread::spawn_named("reconciler", move || {
            // A failed block or peer round is an outcome, not a violation.
            let _ = dn1.handler.reconcile_without_scan(CONTAINER, &[peer]);
            Ok(Vec::<()>::new())
        })
    };
    let deleting = {
        let dn1 = dn1.clone();
        thread::spawn_named("deleting service", move || {
            // The round fails when it found X unreferenced: an outcome of the fault.
            let _ = dn1.delete_blocks();
            Ok(Vec::new())
        })
    };
    join_all(vec![repair, deleting])?;
    faulty.clear();
    no_metadata_without_file(&dn1)?;
    dn1.delete_blocks().map_err(setup)?;
    if dn1.pending_transactions() != 0 {
        return Err(violation(
            "scenario setup",
            "the deleting pass left the transaction pending".into(),
        ));
    }
    deleted_blocks_not_live(&dn1, &[BLOCK_X])?;
    no_metadata_without_file(&dn1)
}
