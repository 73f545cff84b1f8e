//! Scenarios and invariants of container reconciliation against block deletion
//! (HDDS-16811, with HDDS-16808), shared by the loom and shuttle tests, the soak tool and
//! the tests.
//!
//! **The race.** A replica's block deleting service and its reconciliation work on the
//! same block: deleted before its repair, the block is copied back; deleted during it, its
//! metadata is committed without its file.
//!
//! **What is checked.** Real [`KeyValueHandler`]s over [`MemoryStore`]s, peers answered in
//! process. [`deleted_blocks_not_live`] is I-C1, [`deletions_witnessed`] I-C3,
//! [`no_metadata_without_file`] I-C2,
//! [`live_blocks_present`] says no data of a live key is lost, and
//! [`data_checksums_agree`] is I-C5 plus convergence after a full reconcile round.
//! [`concurrent_reconciliations`] runs two reconciliations of one container, one of them
//! failing mid-block, through the handler and around it.

use std::collections::BTreeSet;

use super::rng::SeededRng;
use super::{Violation, join_all};
use crate::datanode::container::handler::KeyValueHandler;
use crate::datanode::container::reconcile::PeerDatanode;
use crate::datanode::container::replica::KeyValueContainer;
use crate::datanode::container::scanner::{ScanFailure, ScanReport};
use crate::datanode::container::store::{
    BYTES_PER_CHECKSUM, BlockData, ChunkInfo, ContainerStore, MemoryStore, MetadataBatch,
};
use crate::datanode::container::{ContainerBehavior, ContainerConfig, ContainerError};
use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, DatanodeId, LocalId};
use crate::sim::peers::{InProcessPeer, PeerFailure, ScriptedPeer};
use crate::sync::{Arc, thread};

/// The seed every violation of this module names.
pub const SEED_KEY: &str = "HDDS-16811";

/// The container of every scenario.
pub const CONTAINER: ContainerId = ContainerId(1);

/// Bytes per chunk in the scenarios (several checksum windows each).
pub const CHUNK_LEN_BYTES: usize = 8;

fn violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: SEED_KEY,
        property,
        detail,
    }
}

fn setup(error: ContainerError) -> Violation {
    violation("scenario setup", error.to_string())
}

/// The bytes of chunk `index` of `block`: distinct per block and chunk.
pub fn chunk_bytes(block: LocalId, index: usize) -> Vec<u8> {
    (0..CHUNK_LEN_BYTES)
        .map(|i| (block as u8).wrapping_mul(31) ^ (index as u8).wrapping_mul(7) ^ i as u8)
        .collect()
}

/// The metadata of `block` with `chunks` chunks of [`chunk_bytes`].
pub fn block_data(block: LocalId, chunks: usize) -> BlockData {
    BlockData::new(
        block,
        (0..chunks).map(|i| {
            ChunkInfo::for_data(
                (i * CHUNK_LEN_BYTES) as u64,
                &chunk_bytes(block, i),
                BYTES_PER_CHECKSUM,
            )
        }),
    )
}

/// A datanode of the scenarios: its handler and a handle on its storage of [`CONTAINER`].
#[derive(Debug, Clone)]
pub struct ReplicaNode {
    /// The datanode's replicas.
    pub handler: Arc<KeyValueHandler>,
    /// Its storage of [`CONTAINER`].
    pub store: Arc<dyn ContainerStore>,
    memory: Option<MemoryStore>,
}

/// Makes the storage of a datanode's replica in a given state: in memory for the
/// checkers, on disk for the integration tests.
pub type StoreFactory<'a> =
    dyn FnMut(DatanodeId, ContainerState) -> Result<Arc<dyn ContainerStore>, ContainerError> + 'a;

/// The factory of in-memory stores.
pub fn memory_stores(
    _datanode: DatanodeId,
    state: ContainerState,
) -> Result<Arc<dyn ContainerStore>, ContainerError> {
    Ok(MemoryStore::new(state).shared())
}

impl ReplicaNode {
    /// A datanode holding a replica of [`CONTAINER`] in memory, in `state`, with `blocks`
    /// (id, chunk count) written as a client would have written them before the close,
    /// and its tree built from metadata (as a quasi-close does).
    pub fn new(
        datanode: DatanodeId,
        config: ContainerConfig,
        state: ContainerState,
        blocks: &[(LocalId, usize)],
    ) -> Result<Self, ContainerError> {
        let memory = MemoryStore::new(state);
        let mut node = Self::with_store(datanode, config, memory.shared(), blocks)?;
        node.memory = Some(memory);
        Ok(node)
    }

    /// As [`ReplicaNode::new`], over `store` (whose persisted state is the replica's).
    pub fn with_store(
        datanode: DatanodeId,
        config: ContainerConfig,
        store: Arc<dyn ContainerStore>,
        blocks: &[(LocalId, usize)],
    ) -> Result<Self, ContainerError> {
        for &(block, chunks) in blocks {
            write_block(&*store, block, chunks).map_err(ContainerError::store(CONTAINER))?;
        }
        let handler = Arc::new(KeyValueHandler::new(datanode, config));
        let container = handler.add_container(CONTAINER, Arc::clone(&store))?;
        container.update_checksum_from_metadata()?;
        Ok(Self {
            handler,
            store,
            memory: None,
        })
    }

    /// As [`ReplicaNode::with_store`], with a store from `stores`.
    pub fn from_factory(
        stores: &mut StoreFactory<'_>,
        datanode: DatanodeId,
        config: ContainerConfig,
        state: ContainerState,
        blocks: &[(LocalId, usize)],
    ) -> Result<Self, ContainerError> {
        let store = stores(datanode, state)?;
        Self::with_store(datanode, config, store, blocks)
    }

    /// The in-memory store, for fault injection; `None` for another store.
    pub fn memory(&self) -> Option<&MemoryStore> {
        self.memory.as_ref()
    }

    /// The datanode's id.
    pub fn id(&self) -> DatanodeId {
        self.handler.datanode()
    }

    /// Its replica of [`CONTAINER`].
    pub fn container(&self) -> Result<Arc<KeyValueContainer>, ContainerError> {
        self.handler.container(CONTAINER)
    }

    /// The datanode as a peer of reconciliation.
    pub fn peer(&self) -> Arc<dyn PeerDatanode> {
        InProcessPeer::shared(&self.handler)
    }

    /// Stores the delete transactions (the delete-blocks command).
    pub fn store_transactions(
        &self,
        txs: &[DeletedBlocksTransaction],
    ) -> Result<(), ContainerError> {
        self.handler
            .handle_delete_blocks(txs)
            .into_iter()
            .find_map(Result::err)
            .map_or(Ok(()), Err)
    }

    /// One run of the block deleting service.
    pub fn delete_blocks(&self) -> Result<(), ContainerError> {
        for (_, result) in self.handler.run_block_deleting_service() {
            result?;
        }
        Ok(())
    }

    /// Reconciliation with `peers`, then the scan it triggers.
    pub fn reconcile(&self, peers: &[&ReplicaNode]) -> Result<Option<ScanReport>, ContainerError> {
        let peers: Vec<Arc<dyn PeerDatanode>> = peers.iter().map(|p| p.peer()).collect();
        let (result, scan) = self.handler.reconcile_container(CONTAINER, &peers);
        result?;
        scan.transpose()
    }

    /// Whether the replica has metadata for `block`.
    pub fn has_metadata(&self, block: LocalId) -> bool {
        matches!(self.store.get_block(block), Ok(Some(_)))
    }

    /// Whether the replica has a file for `block`.
    pub fn has_file(&self, block: LocalId) -> bool {
        matches!(self.store.block_file_len(block), Ok(Some(_)))
    }

    /// The tree entry of `block`: `None` if absent, else whether it is deleted.
    pub fn tree_entry_deleted(&self, block: LocalId) -> Result<Option<bool>, ContainerError> {
        let info = self.container()?.checksums().read()?;
        Ok(info.tree.block(block).map(|b| b.deleted))
    }

    /// Delete transactions pending here.
    pub fn pending_transactions(&self) -> u64 {
        self.store.summary().map_or(0, |s| s.pending_transactions)
    }
}

/// Writes `block` with `chunks` chunks into `store` as the client path does on an open
/// container: chunk files, finish, then the metadata.
pub fn write_block(
    store: &dyn ContainerStore,
    block: LocalId,
    chunks: usize,
) -> Result<(), crate::datanode::container::store::StoreError> {
    let data = block_data(block, chunks);
    for (i, chunk) in data.chunks.iter().enumerate() {
        store.write_chunk(block, chunk.offset, &chunk_bytes(block, i))?;
    }
    if chunks > 0 {
        store.finish_write(block)?;
    }
    store.commit(MetadataBatch {
        put_blocks: vec![data],
        ..MetadataBatch::default()
    })
}

/// The transaction deleting `blocks` of [`CONTAINER`].
pub fn transaction(tx_id: u64, blocks: &[LocalId]) -> DeletedBlocksTransaction {
    DeletedBlocksTransaction {
        tx_id,
        container: CONTAINER,
        local_ids: blocks.to_vec(),
    }
}

// ---------------------------------------------------------------------------------------
// Invariants
// ---------------------------------------------------------------------------------------

/// I-C1: once a replica executed the deletion of `blocks`, it holds neither metadata nor
/// a file for any of them.
pub fn deleted_blocks_not_live(node: &ReplicaNode, blocks: &[LocalId]) -> Result<(), Violation> {
    for &block in blocks {
        if node.has_metadata(block) || node.has_file(block) {
            let entry = node.tree_entry_deleted(block).map_err(setup)?;
            return Err(violation(
                "a block whose deletion was executed is not live",
                format!(
                    "{} block {block}: metadata {}, file {}, tree entry {}",
                    node.id(),
                    node.has_metadata(block),
                    node.has_file(block),
                    entry_name(entry)
                ),
            ));
        }
    }
    Ok(())
}

fn entry_name(entry: Option<bool>) -> &'static str {
    match entry {
        None => "absent",
        Some(true) => "deleted",
        Some(false) => "live",
    }
}

/// I-C3: the tree, the only record of executed deletions, marks each of `blocks` deleted.
/// Checked where every replica executed the deletions and reconciled with every peer: a
/// replica on the legacy code that never had a block leaves no entry when it deletes it,
/// which is the defect's mechanism rather than its harm, and adopts the entry from a peer.
pub fn deletions_witnessed(node: &ReplicaNode, blocks: &[LocalId]) -> Result<(), Violation> {
    for &block in blocks {
        let entry = node.tree_entry_deleted(block).map_err(setup)?;
        if entry != Some(true) {
            return Err(violation(
                "the tree marks every executed deletion",
                format!(
                    "{} block {block}: tree entry {}",
                    node.id(),
                    entry_name(entry)
                ),
            ));
        }
    }
    Ok(())
}

/// I-C2: every block with metadata has its file, holding all of its chunks.
pub fn no_metadata_without_file(node: &ReplicaNode) -> Result<(), Violation> {
    let blocks = node
        .store
        .blocks()
        .map_err(|e| setup(ContainerError::store(CONTAINER)(e)))?;
    for block in blocks {
        let len = node
            .store
            .block_file_len(block.local_id)
            .map_err(|e| setup(ContainerError::store(CONTAINER)(e)))?;
        match len {
            Some(len) if len >= block.end() => {}
            _ => {
                return Err(violation(
                    "block metadata only with its file",
                    format!(
                        "{} block {}: metadata lists {} byte(s), file {}",
                        node.id(),
                        block.local_id,
                        block.end(),
                        len.map_or("absent".to_owned(), |l| format!("of {l} byte(s)"))
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// No data of a live key is lost: every block of `live` has metadata and a file with its
/// data on every replica of `nodes`.
pub fn live_blocks_present(
    nodes: &[ReplicaNode],
    live: &[(LocalId, usize)],
) -> Result<(), Violation> {
    for node in nodes {
        for &(block, chunks) in live {
            let expected = block_data(block, chunks);
            let intact = node.store.get_block(block).ok().flatten() == Some(expected.clone())
                && (0..chunks).all(|i| {
                    let chunk = &expected.chunks[i];
                    node.store
                        .read_block(block, chunk.offset, chunk.length)
                        .ok()
                        .flatten()
                        == Some(chunk_bytes(block, i))
                });
            if !intact {
                return Err(violation(
                    "no block of a live key lost",
                    format!(
                        "{} block {block}: metadata {}, file {}",
                        node.id(),
                        node.has_metadata(block),
                        node.has_file(block)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// I-C5 (with HDDS-16808) and convergence: on every replica the data checksum in memory,
/// in the database and in the tree file agree, and all replicas have the same one.
pub fn data_checksums_agree(nodes: &[ReplicaNode]) -> Result<(), Violation> {
    let mut roots = Vec::new();
    for node in nodes {
        let views = node
            .container()
            .and_then(|c| c.checksum_views())
            .map_err(setup)?;
        if !views.agree() {
            return Err(violation(
                "data checksum in memory, persisted and in the tree file agree (HDDS-16808)",
                format!("{}: {views:?}", node.id()),
            ));
        }
        roots.push((node.id(), views.tree));
    }
    if roots.windows(2).any(|w| w[0].1 != w[1].1) {
        return Err(violation(
            "replicas agree on the data checksum after a full reconcile round",
            format!("{roots:?}"),
        ));
    }
    Ok(())
}

/// The replica was not marked UNHEALTHY.
pub fn replica_healthy(node: &ReplicaNode) -> Result<(), Violation> {
    let state = node.container().map_err(setup)?.state();
    if state == ContainerState::Unhealthy {
        return Err(violation(
            "no replica marked UNHEALTHY by the race",
            format!("{} is UNHEALTHY", node.id()),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Loom: delete during repair
// ---------------------------------------------------------------------------------------

/// The block of the two-node scenarios.
pub const BLOCK_X: LocalId = 1;

/// The loom race: dn1 lacks block X, which dn2 has with two chunks; X's delete transaction
/// is pending on dn1. dn1 reconciles with dn2 (without the scan that follows) while its
/// block deleting service runs a pass. Two spawned threads.
///
/// Checks [`deleted_blocks_not_live`], [`no_metadata_without_file`] and, on dn1,
/// the I-C5 part of [`data_checksums_agree`]: the harm, not the mechanism (a legacy
/// deletion that leaves no tree entry is only harmful once a reconciliation copies the
/// block back, which MC2 and the cluster scenario show).
pub fn delete_during_repair(behavior: ContainerBehavior) -> Result<(), Violation> {
    delete_during_repair_with(ContainerConfig::new(behavior), 0)
}

/// [`delete_during_repair`] where dn1 has X with its first chunk only, so the deletion
/// finds metadata (the MISSING_CHUNK variant of spec C.16): reconciliation pulls the
/// second chunk only.
pub fn delete_during_partial_repair(behavior: ContainerBehavior) -> Result<(), Violation> {
    delete_during_repair_with(ContainerConfig::new(behavior), 1)
}

/// [`delete_during_repair`] with a configuration of its own (e.g. the fixed behavior with
/// the data checksum refreshed after the tree write rather than inside it), dn1 holding
/// the first `local_chunks` chunks of X.
pub fn delete_during_repair_with(
    config: ContainerConfig,
    local_chunks: usize,
) -> Result<(), Violation> {
    let local: &[(LocalId, usize)] = if local_chunks == 0 {
        &[]
    } else {
        &[(BLOCK_X, local_chunks)]
    };
    let dn1 = ReplicaNode::new(DatanodeId(1), config, ContainerState::QuasiClosed, local)
        .map_err(setup)?;
    let dn2 = ReplicaNode::new(
        DatanodeId(2),
        config,
        ContainerState::QuasiClosed,
        &[(BLOCK_X, 2)],
    )
    .map_err(setup)?;
    dn1.store_transactions(&[transaction(1, &[BLOCK_X])])
        .map_err(setup)?;

    let repair = {
        let (dn1, peer) = (dn1.clone(), dn2.peer());
        thread::spawn(move || {
            // A failed block or peer round is an outcome, not a violation.
            let _ = dn1.handler.reconcile_container_internal(CONTAINER, &[peer]);
            Ok(Vec::<()>::new())
        })
    };
    let deleting = {
        let dn1 = dn1.clone();
        thread::spawn(move || {
            dn1.delete_blocks().map_err(setup)?;
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
    deleted_blocks_not_live(&dn1, &[BLOCK_X])?;
    no_metadata_without_file(&dn1)?;
    data_checksums_agree(std::slice::from_ref(&dn1))
}

// ---------------------------------------------------------------------------------------
// Two reconciliations of one container
// ---------------------------------------------------------------------------------------

/// Two reconciliations of [`CONTAINER`] on dn1, which lacks X (dn2 has it with two
/// chunks): one with dn2, one with dn2 behind a connection that drops at X's second chunk.
/// With `guarded` both go through the handler, which refuses the second while the first
/// runs; without, they call reconciliation directly and may run at once, so only the
/// failed repair's cleanup (never below what is committed) and the commit's file check
/// keep each from undoing the other's block. Two spawned threads; then dn1 reconciles with
/// dn2 alone.
///
/// Checks [`no_metadata_without_file`] on dn1 after the two (the harm: the failed repair
/// unlinking the block the other committed); after the last reconciliation
/// [`live_blocks_present`], [`no_metadata_without_file`] and [`data_checksums_agree`] for
/// dn1 and dn2. Only the fixed behavior has the cleanup, so only it is checked here.
pub fn concurrent_reconciliations(
    behavior: ContainerBehavior,
    guarded: bool,
) -> Result<(), Violation> {
    let config = ContainerConfig::new(behavior);
    let qc = ContainerState::QuasiClosed;
    let dn1 = ReplicaNode::new(DatanodeId(1), config, qc, &[]).map_err(setup)?;
    let dn2 = ReplicaNode::new(DatanodeId(2), config, qc, &[(BLOCK_X, 2)]).map_err(setup)?;
    let reconcile = move |node: ReplicaNode, peer: Arc<dyn PeerDatanode>| {
        thread::spawn(move || {
            // Refused, failed or repaired: an outcome, not a violation.
            if guarded {
                let _ = node
                    .handler
                    .reconcile_container_internal(CONTAINER, &[peer]);
            } else {
                let container = node.container().map_err(setup)?;
                let _ =
                    crate::datanode::container::reconcile::reconcile_container(&container, &[peer]);
            }
            Ok(Vec::<()>::new())
        })
    };
    let whole = reconcile(dn1.clone(), dn2.peer());
    let failing = reconcile(
        dn1.clone(),
        ScriptedPeer::failing(dn2.peer(), 1, PeerFailure::FromThenOn),
    );
    join_all(vec![whole, failing])?;
    no_metadata_without_file(&dn1)?;
    dn1.handler
        .reconcile_container_internal(CONTAINER, &[dn2.peer()])
        .map_err(setup)?;
    no_metadata_without_file(&dn1)?;
    let nodes = [dn1, dn2];
    live_blocks_present(&nodes, &[(BLOCK_X, 2)])?;
    data_checksums_agree(&nodes)
}

// ---------------------------------------------------------------------------------------
// The seed's reproductions
// ---------------------------------------------------------------------------------------

/// The second block of MC2, deleted by a later transaction.
pub const BLOCK_Y: LocalId = 2;

/// What the seed's MC2 reproduction looks at, step by step.
#[derive(Debug, Clone)]
pub struct Mc2Run {
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
    pub nodes: [ReplicaNode; 3],
}

/// The seed's MC2: three QUASI_CLOSED replicas, dn1 without block X, X's transaction
/// stored on all three; dn1 deletes, reconciles with dn2 (not yet deleted); dn2 and dn3
/// delete; dn1 reconciles with both, deletes, is scanned; then Y is deleted everywhere.
pub fn mc2_run(behavior: ContainerBehavior) -> Result<Mc2Run, ContainerError> {
    mc2_run_on(behavior, &mut memory_stores)
}

/// [`mc2_run`] over the stores `stores` makes.
pub fn mc2_run_on(
    behavior: ContainerBehavior,
    stores: &mut StoreFactory<'_>,
) -> Result<Mc2Run, ContainerError> {
    let config = ContainerConfig::new(behavior);
    let qc = ContainerState::QuasiClosed;
    let dn1 = ReplicaNode::from_factory(stores, DatanodeId(1), config, qc, &[(BLOCK_Y, 1)])?;
    let dn2 = ReplicaNode::from_factory(
        stores,
        DatanodeId(2),
        config,
        qc,
        &[(BLOCK_X, 2), (BLOCK_Y, 1)],
    )?;
    let dn3 = ReplicaNode::from_factory(
        stores,
        DatanodeId(3),
        config,
        qc,
        &[(BLOCK_X, 2), (BLOCK_Y, 1)],
    )?;
    let tx_x = transaction(1, &[BLOCK_X]);
    for node in [&dn1, &dn2, &dn3] {
        node.store_transactions(std::slice::from_ref(&tx_x))?;
    }
    dn1.delete_blocks()?;
    let after_delete = (
        dn1.has_metadata(BLOCK_X),
        dn1.tree_entry_deleted(BLOCK_X)?,
        dn1.pending_transactions(),
    );
    dn1.reconcile(&[&dn2])?;
    let after_reconcile = (
        dn1.has_metadata(BLOCK_X),
        dn1.has_file(BLOCK_X),
        dn1.tree_entry_deleted(BLOCK_X)?,
        dn1.pending_transactions(),
    );
    dn2.delete_blocks()?;
    dn3.delete_blocks()?;
    dn1.reconcile(&[&dn2, &dn3])?;
    dn1.delete_blocks()?;
    dn1.handler.scan(CONTAINER)?;
    let after_second_round = (
        dn1.has_metadata(BLOCK_X),
        dn1.has_file(BLOCK_X),
        dn1.tree_entry_deleted(BLOCK_X)?,
    );
    let root = |n: &ReplicaNode| -> Result<Option<u64>, ContainerError> {
        Ok(n.container()?.checksums().read()?.tree.data_checksum())
    };
    let roots = [root(&dn1)?, root(&dn2)?, root(&dn3)?];
    let tx_y = transaction(2, &[BLOCK_Y]);
    for node in [&dn1, &dn2, &dn3] {
        node.store_transactions(std::slice::from_ref(&tx_y))?;
        node.delete_blocks()?;
    }
    let empty = [
        dn1.container()?.is_empty(),
        dn2.container()?.is_empty(),
        dn3.container()?.is_empty(),
    ];
    Ok(Mc2Run {
        after_delete,
        after_reconcile,
        after_second_round,
        roots,
        empty,
        nodes: [dn1, dn2, dn3],
    })
}

/// The assertions of the seed's MC2 test, which pass while the defect is present: `Ok`
/// means the deleted block was restored and survives, `Err` names the first that failed.
pub fn mc2_seed_assertions(run: &Mc2Run) -> Result<(), String> {
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

/// MC2 under the invariants: every replica executed both transactions, so neither block
/// may be live anywhere, and every replica must be empty.
pub fn mc2_deleted_block_restored(behavior: ContainerBehavior) -> Result<(), Violation> {
    let run = mc2_run(behavior).map_err(setup)?;
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

/// What the seed's MC3 reproduction looks at.
#[derive(Debug, Clone)]
pub struct Mc3Run {
    /// X's metadata present afterwards.
    pub metadata: bool,
    /// X's file present afterwards.
    pub file: bool,
    /// The failures the scan after reconciliation found.
    pub scan_failures: BTreeSet<ScanFailure>,
    /// dn1's state afterwards.
    pub state: ContainerState,
    /// dn1, for the invariants.
    pub dn1: ReplicaNode,
}

/// The seed's MC3: two replicas, X's transaction pending on dn1, which lacks X (or, with
/// `partial`, has X with only its first chunk); one pass of dn1's deleting service runs
/// in the reconciliation thread when the peer is asked for X's last chunk; then the scan.
pub fn mc3_run(behavior: ContainerBehavior, partial: bool) -> Result<Mc3Run, ContainerError> {
    mc3_run_on(behavior, partial, &mut memory_stores)
}

/// [`mc3_run`] over the stores `stores` makes.
pub fn mc3_run_on(
    behavior: ContainerBehavior,
    partial: bool,
    stores: &mut StoreFactory<'_>,
) -> Result<Mc3Run, ContainerError> {
    let config = ContainerConfig::new(behavior);
    let qc = ContainerState::QuasiClosed;
    let dn1_blocks: &[(LocalId, usize)] = if partial { &[(BLOCK_X, 1)] } else { &[] };
    let dn1 = ReplicaNode::from_factory(stores, DatanodeId(1), config, qc, dn1_blocks)?;
    let dn2 = ReplicaNode::from_factory(stores, DatanodeId(2), config, qc, &[(BLOCK_X, 2)])?;
    dn1.store_transactions(&[transaction(1, &[BLOCK_X])])?;
    let hook_target = dn1.clone();
    let at = if partial { 0 } else { 1 };
    let peer = ScriptedPeer::hooked(dn2.peer(), at, PeerFailure::None, move || {
        // The deleting pass's own outcome is checked through the replica afterwards.
        let _ = hook_target.delete_blocks();
    });
    let (result, scan) = dn1.handler.reconcile_container(CONTAINER, &[peer]);
    result?;
    let scan_failures = match scan.transpose()? {
        Some(report) => report.errors.iter().map(|e| e.kind).collect(),
        None => BTreeSet::new(),
    };
    Ok(Mc3Run {
        metadata: dn1.has_metadata(BLOCK_X),
        file: dn1.has_file(BLOCK_X) && dn1.store.block_file_len(BLOCK_X).ok().flatten() != Some(0),
        scan_failures,
        state: dn1.container()?.state(),
        dn1,
    })
}

/// The assertions of the seed's MC3 test (and of its MISSING_CHUNK variant with
/// `partial`), which pass while the defect is present.
pub fn mc3_seed_assertions(run: &Mc3Run, partial: bool) -> Result<(), String> {
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

/// MC3 under the invariants (with [`replica_healthy`]).
pub fn mc3_block_deleted_during_reconciliation(
    behavior: ContainerBehavior,
    partial: bool,
) -> Result<(), Violation> {
    let run = mc3_run(behavior, partial).map_err(setup)?;
    no_metadata_without_file(&run.dn1)?;
    deleted_blocks_not_live(&run.dn1, &[BLOCK_X])?;
    replica_healthy(&run.dn1)
}

// ---------------------------------------------------------------------------------------
// Shuttle: three replicas
// ---------------------------------------------------------------------------------------

/// The size of the cluster scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterShape {
    /// Blocks of the container (ids 1..=blocks), each with two chunks.
    pub blocks: u64,
    /// How many of them are deleted by transactions (one transaction each).
    pub deleted: u64,
    /// Operations of each datanode's repair thread (reconciliations and scans).
    pub repair_ops: usize,
    /// Deleting passes of each datanode's service thread.
    pub deleting_passes: usize,
}

impl Default for ClusterShape {
    fn default() -> Self {
        Self {
            blocks: 4,
            deleted: 2,
            repair_ops: 2,
            deleting_passes: 2,
        }
    }
}

const CLUSTER_NODES: usize = 3;

/// Three QUASI_CLOSED replicas; each block is on a random non-empty set of them (the
/// lagging replicas reconciliation exists to repair); some blocks are deleted. Per
/// datanode two threads: a service thread that stores the transactions at a random moment
/// and runs deleting passes, and a repair thread that reconciles with random peers and
/// scans. Then quiescence: every transaction stored and executed everywhere, and a full
/// reconcile round (each replica with each peer, in turn). Six spawned threads.
///
/// Checks [`deleted_blocks_not_live`] and [`no_metadata_without_file`] on every replica
/// at quiescence and after the round; after the round also [`live_blocks_present`],
/// [`deletions_witnessed`], [`replica_healthy`] (no scan found a failure) and
/// [`data_checksums_agree`].
pub fn container_cluster(
    behavior: ContainerBehavior,
    seed: u64,
    shape: ClusterShape,
) -> Result<(), Violation> {
    let mut rng = SeededRng::new(seed);
    let config = ContainerConfig::new(behavior);
    let all_blocks: Vec<LocalId> = (1..=shape.blocks).collect();
    let mut holders: Vec<Vec<(LocalId, usize)>> = vec![Vec::new(); CLUSTER_NODES];
    for &block in &all_blocks {
        // A non-empty subset of the three replicas.
        let mask = 1 + rng.below((1 << CLUSTER_NODES) - 1);
        for (node, held) in holders.iter_mut().enumerate() {
            if mask & (1 << node) != 0 {
                held.push((block, 2));
            }
        }
    }
    let deleted: Vec<LocalId> = all_blocks
        .iter()
        .copied()
        .take(usize::try_from(shape.deleted).unwrap_or(usize::MAX))
        .collect();
    let live: Vec<(LocalId, usize)> = all_blocks
        .iter()
        .filter(|b| !deleted.contains(b))
        .map(|&b| (b, 2))
        .collect();
    let txs: Vec<DeletedBlocksTransaction> = deleted
        .iter()
        .enumerate()
        .map(|(i, &b)| transaction(i as u64 + 1, &[b]))
        .collect();
    let nodes: Vec<ReplicaNode> = holders
        .iter()
        .enumerate()
        .map(|(i, held)| {
            ReplicaNode::new(
                DatanodeId(i as u64 + 1),
                config,
                ContainerState::QuasiClosed,
                held,
            )
        })
        .collect::<Result<_, _>>()
        .map_err(setup)?;

    let mut handles = Vec::new();
    for index in 0..CLUSTER_NODES {
        let deliver_after = rng.below(shape.deleting_passes as u64 + 1) as usize;
        let service = {
            let node = nodes[index].clone();
            let txs = txs.clone();
            let passes = shape.deleting_passes;
            thread::spawn(move || {
                for pass in 0..=passes {
                    if pass == deliver_after {
                        node.store_transactions(&txs).map_err(setup)?;
                    }
                    if pass < passes {
                        node.delete_blocks().map_err(setup)?;
                    }
                }
                Ok(Vec::<()>::new())
            })
        };
        let ops: Vec<Option<usize>> = (0..shape.repair_ops)
            .map(|_| {
                if rng.chance(75) {
                    let other = 1 + rng.below(CLUSTER_NODES as u64 - 1) as usize;
                    Some((index + other) % CLUSTER_NODES)
                } else {
                    None
                }
            })
            .collect();
        let repair = {
            let nodes = nodes.clone();
            thread::spawn(move || {
                let node = &nodes[index];
                for op in ops {
                    // Failed rounds and scans are outcomes; the invariants judge the end.
                    match op {
                        Some(peer) => {
                            let _ = node.reconcile(&[&nodes[peer]]);
                        }
                        None => {
                            let _ = node.handler.scan(CONTAINER);
                        }
                    }
                }
                Ok(Vec::new())
            })
        };
        handles.push(service);
        handles.push(repair);
    }
    join_all(handles)?;

    // Quiescence: every transaction stored (a duplicate is acknowledged) and executed.
    for node in &nodes {
        node.store_transactions(&txs).map_err(setup)?;
        node.delete_blocks().map_err(setup)?;
    }
    for node in &nodes {
        deleted_blocks_not_live(node, &deleted)?;
        no_metadata_without_file(node)?;
    }
    for (index, node) in nodes.iter().enumerate() {
        let peers: Vec<&ReplicaNode> = nodes
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != index)
            .map(|(_, n)| n)
            .collect();
        node.reconcile(&peers).map_err(setup)?;
    }
    for node in &nodes {
        deleted_blocks_not_live(node, &deleted)?;
        no_metadata_without_file(node)?;
    }
    live_blocks_present(&nodes, &live)?;
    for node in &nodes {
        deletions_witnessed(node, &deleted)?;
        replica_healthy(node)?;
    }
    data_checksums_agree(&nodes)
}
