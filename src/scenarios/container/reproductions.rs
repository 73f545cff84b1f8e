//! The seed's reproductions (HDDS-16811) as sequential scenarios: MC2, a deleted block
//! copied back by reconciliation, and MC3, a block deleted while reconciliation repairs it
//! (with its MISSING_CHUNK variant). Each runs with the seed's own assertions, which pass
//! while the defect is present, and under the invariants, which fail then.
//!
//! **The race.** A replica that never had a block deletes it without a trace, then copies
//! it back from a peer that has not deleted it yet (MC2); a deletion that lands between a
//! repair's chunk writes and its commit leaves metadata without a file (MC3).
//! **The fix** records the deletion in the tree even without metadata, and commits a
//! repair under the read lock only if the tree does not mark the block deleted.

use std::cell::RefCell;
use std::collections::BTreeSet;

use super::invariants::{
    deleted_blocks_not_live, has_file, has_metadata, no_metadata_without_file, replica_healthy,
};
use super::seed::{BLOCK_X, BLOCK_Y, setup, violation};
use crate::datanode::container::scanner::ScanFailure;
use crate::datanode::container::{
    ContainerBehavior, ContainerConfig, ContainerError, KeyValueContainerApi, ReplicaFactory,
    TreeEntry,
};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{DatanodeId, LocalId};
use crate::scenarios::Violation;
use crate::sim::peers::{PeerFailure, ScriptedPeer};
use crate::sim::replica_node::{ReplicaNode, StoreFactory, transaction};
use crate::sync::Arc;

/// This crate's replicas over the stores a [`StoreFactory`] makes (on disk, say).
struct StoreBacked<'s, 'a> {
    config: ContainerConfig,
    stores: RefCell<&'s mut StoreFactory<'a>>,
}

impl ReplicaFactory for StoreBacked<'_, '_> {
    type Replica = ReplicaNode;

    fn create(
        &self,
        datanode: DatanodeId,
        state: ContainerState,
        blocks: &[(LocalId, usize)],
    ) -> Result<ReplicaNode, ContainerError> {
        let mut stores = self.stores.borrow_mut();
        ReplicaNode::from_factory(*stores, datanode, self.config, state, blocks)
    }
}

/// A tree entry as the seed's assertions read it: `None` absent, else whether deleted.
fn deleted_mark(entry: TreeEntry) -> Option<bool> {
    match entry {
        TreeEntry::Absent => None,
        TreeEntry::Live => Some(false),
        TreeEntry::Deleted => Some(true),
    }
}

// ---------------------------------------------------------------------------------------
// MC2: a deleted block restored
// ---------------------------------------------------------------------------------------

/// What the seed's MC2 reproduction looks at, step by step.
#[derive(Debug, Clone)]
pub struct DeleteThenReconcileRun<R = ReplicaNode> {
    /// After dn1's deleting pass: X's metadata, tree entry (None absent, Some(deleted)),
    /// pending transactions.
    pub after_delete: (bool, Option<bool>, u64),
    /// After dn1 reconciled with dn2: X's metadata, file, tree entry, pending.
    pub after_reconcile: (bool, bool, Option<bool>, u64),
    /// After dn2, dn3 deleted and dn1 reconciled with both, deleted and was scanned: X's
    /// metadata, file, tree entry.
    pub after_second_round: (bool, bool, Option<bool>),
    /// The tree roots of dn1, dn2, dn3 then.
    pub roots: [Option<u64>; 3],
    /// After Y's deletion everywhere: which replicas are marked empty.
    pub empty: [bool; 3],
    /// The replicas, for the invariants.
    pub nodes: [R; 3],
}

/// The seed's MC2: three QUASI_CLOSED replicas, dn1 without block X, X's transaction
/// stored on all three; dn1 deletes, reconciles with dn2 (not yet deleted); dn2 and dn3
/// delete; dn1 reconciles with both, deletes, is scanned; then Y is deleted everywhere.
pub fn delete_then_reconcile(
    behavior: ContainerBehavior,
) -> Result<DeleteThenReconcileRun, ContainerError> {
    delete_then_reconcile_with(&behavior)
}

/// [`delete_then_reconcile`] over the stores `stores` makes.
pub fn delete_then_reconcile_on(
    behavior: ContainerBehavior,
    stores: &mut StoreFactory<'_>,
) -> Result<DeleteThenReconcileRun, ContainerError> {
    delete_then_reconcile_with(&StoreBacked {
        config: ContainerConfig::new(behavior),
        stores: RefCell::new(stores),
    })
}

/// [`delete_then_reconcile`] over the replicas `factory` starts.
pub fn delete_then_reconcile_with<F: ReplicaFactory>(
    factory: &F,
) -> Result<DeleteThenReconcileRun<F::Replica>, ContainerError> {
    let [dn1, dn2, dn3] = three_replicas_dn1_without_x(factory)?;
    dn1.run_block_deleting_pass()?;
    let after_delete = (
        has_metadata(&dn1, BLOCK_X),
        deleted_mark(dn1.tree_entry(BLOCK_X)?),
        dn1.pending_transactions(),
    );
    dn1.reconcile_container(&[dn2.peer()])?;
    let after_reconcile = (
        has_metadata(&dn1, BLOCK_X),
        has_file(&dn1, BLOCK_X),
        deleted_mark(dn1.tree_entry(BLOCK_X)?),
        dn1.pending_transactions(),
    );
    dn2.run_block_deleting_pass()?;
    dn3.run_block_deleting_pass()?;
    dn1.reconcile_container(&[dn2.peer(), dn3.peer()])?;
    dn1.run_block_deleting_pass()?;
    dn1.scan_container()?;
    let after_second_round = (
        has_metadata(&dn1, BLOCK_X),
        has_file(&dn1, BLOCK_X),
        deleted_mark(dn1.tree_entry(BLOCK_X)?),
    );
    let roots = [
        dn1.data_checksum()?,
        dn2.data_checksum()?,
        dn3.data_checksum()?,
    ];
    let empty = delete_block_y_everywhere([&dn1, &dn2, &dn3])?;
    Ok(DeleteThenReconcileRun {
        after_delete,
        after_reconcile,
        after_second_round,
        roots,
        empty,
        nodes: [dn1, dn2, dn3],
    })
}

/// MC2's replicas: dn1 with Y only, dn2 and dn3 with X (two chunks) and Y, X's
/// transaction stored on all three.
fn three_replicas_dn1_without_x<F: ReplicaFactory>(
    factory: &F,
) -> Result<[F::Replica; 3], ContainerError> {
    let qc = ContainerState::QuasiClosed;
    let both: &[(LocalId, usize)] = &[(BLOCK_X, 2), (BLOCK_Y, 1)];
    let dn1 = factory.create(DatanodeId(1), qc, &[(BLOCK_Y, 1)])?;
    let dn2 = factory.create(DatanodeId(2), qc, both)?;
    let dn3 = factory.create(DatanodeId(3), qc, both)?;
    let tx_x = transaction(1, &[BLOCK_X]);
    for node in [&dn1, &dn2, &dn3] {
        node.store_delete_transactions(std::slice::from_ref(&tx_x))?;
    }
    Ok([dn1, dn2, dn3])
}

/// Y's transaction stored and executed on each of `nodes`; then which are marked empty.
fn delete_block_y_everywhere<R: KeyValueContainerApi>(
    nodes: [&R; 3],
) -> Result<[bool; 3], ContainerError> {
    let tx_y = transaction(2, &[BLOCK_Y]);
    for node in nodes {
        node.store_delete_transactions(std::slice::from_ref(&tx_y))?;
        node.run_block_deleting_pass()?;
    }
    Ok([
        nodes[0].is_empty()?,
        nodes[1].is_empty()?,
        nodes[2].is_empty()?,
    ])
}

/// The assertions of the seed's MC2 test, which pass while the defect is present: `Ok`
/// means the deleted block was restored and survives, `Err` names the first that failed.
pub fn deleted_block_restored_as_reported<R>(
    run: &DeleteThenReconcileRun<R>,
) -> Result<(), String> {
    let check = |ok: bool, what: &str| if ok { Ok(()) } else { Err(what.to_owned()) };
    check(
        run.after_delete == (false, None, 0),
        "after dn1's deleting pass: no metadata, no tree entry, no pending deletion",
    )?;
    check(
        run.after_reconcile == (true, true, Some(false), 0),
        "after reconciling with dn2: metadata and file present, tree entry live, no pending deletion",
    )?;
    check(
        run.after_second_round == (true, true, Some(false)),
        "after dn2 and dn3 deleted and dn1 reconciled with both: unchanged",
    )?;
    check(
        run.roots[0] == run.roots[1] && run.roots[1] == run.roots[2],
        "all three replicas report the same data checksum",
    )?;
    check(
        run.empty == [false, true, true],
        "after the remaining block is deleted: dn2 and dn3 empty, dn1 not",
    )
}

/// The seed's MC2 ([`delete_then_reconcile`]) under the invariants: every replica executed
/// both transactions, so neither block may be live anywhere, and every replica must be
/// empty.
pub fn deleted_block_is_not_restored_by_reconciliation(
    behavior: ContainerBehavior,
) -> Result<(), Violation> {
    deleted_block_is_not_restored_by_reconciliation_on(&behavior)
}

/// [`deleted_block_is_not_restored_by_reconciliation`] over the replicas `factory` starts.
pub fn deleted_block_is_not_restored_by_reconciliation_on<F: ReplicaFactory>(
    factory: &F,
) -> Result<(), Violation> {
    let run = delete_then_reconcile_with(factory).map_err(setup)?;
    for node in &run.nodes {
        deleted_blocks_not_live(node, &[BLOCK_X, BLOCK_Y])?;
        no_metadata_without_file(node)?;
    }
    if run.empty != [true; 3] {
        return Err(violation(
            "a replica whose blocks were all deleted is marked empty",
            format!("empty flags of dn1..dn3: {:?}", run.empty),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// MC3: a block deleted during its repair
// ---------------------------------------------------------------------------------------

/// What the seed's MC3 reproduction looks at.
#[derive(Debug, Clone)]
pub struct DeleteMidReconcileRun<R = ReplicaNode> {
    /// X's metadata present afterwards.
    pub metadata: bool,
    /// X's file present afterwards.
    pub file: bool,
    /// The failures the scan after reconciliation found.
    pub scan_failures: BTreeSet<ScanFailure>,
    /// dn1's state afterwards.
    pub state: ContainerState,
    /// dn1, for the invariants.
    pub dn1: Arc<R>,
}

/// The seed's MC3: two replicas, X's transaction pending on dn1, which lacks X (or, with
/// `partial`, has X with only its first chunk); one pass of dn1's deleting service runs
/// in the reconciliation thread when the peer is asked for X's last chunk; then the scan.
pub fn delete_mid_reconcile(
    behavior: ContainerBehavior,
    partial: bool,
) -> Result<DeleteMidReconcileRun, ContainerError> {
    delete_mid_reconcile_with(&behavior, partial)
}

/// [`delete_mid_reconcile`] over the stores `stores` makes.
pub fn delete_mid_reconcile_on(
    behavior: ContainerBehavior,
    partial: bool,
    stores: &mut StoreFactory<'_>,
) -> Result<DeleteMidReconcileRun, ContainerError> {
    let factory = StoreBacked {
        config: ContainerConfig::new(behavior),
        stores: RefCell::new(stores),
    };
    delete_mid_reconcile_with(&factory, partial)
}

/// [`delete_mid_reconcile`] over the replicas `factory` starts.
pub fn delete_mid_reconcile_with<F: ReplicaFactory>(
    factory: &F,
    partial: bool,
) -> Result<DeleteMidReconcileRun<F::Replica>, ContainerError> {
    let qc = ContainerState::QuasiClosed;
    let dn1_blocks: &[(LocalId, usize)] = if partial { &[(BLOCK_X, 1)] } else { &[] };
    let dn1 = Arc::new(factory.create(DatanodeId(1), qc, dn1_blocks)?);
    let dn2 = factory.create(DatanodeId(2), qc, &[(BLOCK_X, 2)])?;
    dn1.store_delete_transactions(&[transaction(1, &[BLOCK_X])])?;
    let hook_target = Arc::clone(&dn1);
    let at = if partial { 0 } else { 1 };
    let peer = ScriptedPeer::hooked(dn2.peer(), at, PeerFailure::None, move || {
        // The deleting pass's own outcome is checked through the replica afterwards.
        let _ = hook_target.run_block_deleting_pass();
    });
    let scan_failures = dn1.reconcile_container(&[peer])?.unwrap_or_default();
    Ok(DeleteMidReconcileRun {
        metadata: has_metadata(&dn1, BLOCK_X),
        file: has_file(&dn1, BLOCK_X) && dn1.block_file_len(BLOCK_X).ok().flatten() != Some(0),
        scan_failures,
        state: dn1.state()?,
        dn1,
    })
}

/// The assertions of the seed's MC3 test (and of its MISSING_CHUNK variant with
/// `partial`), which pass while the defect is present: metadata committed without its
/// file, found by the scan, the replica UNHEALTHY.
pub fn metadata_without_file_as_reported<R>(
    run: &DeleteMidReconcileRun<R>,
    partial: bool,
) -> Result<(), String> {
    let kind = if partial {
        ScanFailure::MissingChunk
    } else {
        ScanFailure::MissingDataFile
    };
    if !run.metadata {
        return Err("block metadata present".into());
    }
    if run.file {
        return Err("block file absent (or empty)".into());
    }
    if !run.scan_failures.contains(&kind) {
        return Err(format!("scan reports {kind:?}"));
    }
    if run.state != ContainerState::Unhealthy {
        return Err("replica UNHEALTHY".into());
    }
    Ok(())
}

/// The seed's MC3 ([`delete_mid_reconcile`]) under the invariants (with
/// [`replica_healthy`]): the block deleted during its repair is neither live nor left as
/// metadata without its file.
pub fn block_deleted_during_reconciliation_is_not_committed(
    behavior: ContainerBehavior,
    partial: bool,
) -> Result<(), Violation> {
    block_deleted_during_reconciliation_is_not_committed_on(&behavior, partial)
}

/// [`block_deleted_during_reconciliation_is_not_committed`] over the replicas `factory`
/// starts.
pub fn block_deleted_during_reconciliation_is_not_committed_on<F: ReplicaFactory>(
    factory: &F,
    partial: bool,
) -> Result<(), Violation> {
    let run = delete_mid_reconcile_with(factory, partial).map_err(setup)?;
    no_metadata_without_file(&run.dn1)?;
    deleted_blocks_not_live(&run.dn1, &[BLOCK_X])?;
    replica_healthy(&run.dn1)
}
