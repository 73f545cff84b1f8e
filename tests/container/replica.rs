//! Unit tests of the datanode container replica (HDDS-16811, HDDS-16808): the checksum
//! tree, the storage semantics, delete transactions, the block deleting service,
//! reconciliation, the scanner and the command wiring.

use hadoop_ref::clock::ManualClock;
use hadoop_ref::datanode::DatanodeError;
use hadoop_ref::datanode::container::deletion::TransactionStored;
use hadoop_ref::datanode::container::handler::KeyValueHandler;
use hadoop_ref::datanode::container::merkle::{
    self, ContainerChecksumInfo, ContainerMerkleTree, TreeDecodeError, block_checksum, diff,
};
use hadoop_ref::datanode::container::reconcile::BlockRepair;
use hadoop_ref::datanode::container::scanner::ScanFailure;
use hadoop_ref::datanode::container::store::{ChunkInfo, ContainerStore, MemoryStore, StoreError};
use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig, ContainerError};
use hadoop_ref::datanode::dispatcher::{CommandDispatcher, CommandOutcome};
use hadoop_ref::datanode::state_context::{
    DispatchedCommand, StateContext, StateContextBehavior, StateContextConfig,
};
use hadoop_ref::hdds::command::{CommandId, CommandKind, ScmCommand};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::ContainerId;
use hadoop_ref::hdds::ids::LocalId;
use hadoop_ref::hdds::ids::{DatanodeId, ScmId};
use hadoop_ref::scenarios::container::{
    BLOCK_X, CONTAINER, ReplicaNode, block_data, chunk_bytes, transaction, write_block,
};
use hadoop_ref::sim::faulty_store::{FaultyStore, StoreOp};
use hadoop_ref::sim::peers::{PeerFailure, ScriptedPeer};
use hadoop_ref::sim::replicas::controller_of;
use hadoop_ref::sync::Arc;

fn node(dn: u64, behavior: ContainerBehavior, blocks: &[(LocalId, usize)]) -> ReplicaNode {
    ReplicaNode::new(
        DatanodeId(dn),
        ContainerConfig::new(behavior),
        ContainerState::QuasiClosed,
        blocks,
    )
    .unwrap()
}

/// dn1 running `behavior` over a [`FaultyStore`] wrapping a memory store, with `blocks`.
fn faulty_node(
    behavior: ContainerBehavior,
    blocks: &[(LocalId, usize)],
) -> (FaultyStore, ReplicaNode) {
    let faulty = FaultyStore::new(MemoryStore::new(ContainerState::QuasiClosed).shared());
    let dn = ReplicaNode::with_store(
        DatanodeId(1),
        ContainerConfig::new(behavior),
        faulty.shared(),
        blocks,
    )
    .unwrap();
    (faulty, dn)
}

fn info(tree: ContainerMerkleTree) -> ContainerChecksumInfo {
    ContainerChecksumInfo {
        container: CONTAINER,
        tree,
    }
}

// ---------------------------------------------------------------------------------------
// Checksum tree
// ---------------------------------------------------------------------------------------

#[test]
fn checksums_are_crc32c_over_big_endian_longs() {
    let id: LocalId = 7;
    assert_eq!(
        block_checksum(id, []),
        u64::from(crc32c::crc32c(&7u64.to_be_bytes()))
    );
    let chunk = ChunkInfo::for_data(0, b"abcdefgh", 4);
    let chunk_cs = merkle::chunk_checksum(&chunk.checksums);
    let raw: Vec<u8> = chunk
        .checksums
        .iter()
        .flat_map(|c| c.to_be_bytes())
        .collect();
    assert_eq!(chunk_cs, u64::from(crc32c::crc32c(&raw)));
    let mut tree = ContainerMerkleTree::new();
    tree.add_chunks(id, true, &[chunk]);
    let mut bytes = 7u64.to_be_bytes().to_vec();
    bytes.extend_from_slice(&chunk_cs.to_be_bytes());
    let block_cs = u64::from(crc32c::crc32c(&bytes));
    assert_eq!(tree.block(id).unwrap().data_checksum, block_cs);
    assert_eq!(
        tree.compute_root(),
        u64::from(crc32c::crc32c(&block_cs.to_be_bytes()))
    );
    assert_eq!(ContainerMerkleTree::new().compute_root(), 0);
    assert_eq!(merkle::chunk_checksum(&[]), 0);
}

#[test]
fn a_block_deleted_from_metadata_hashes_like_the_live_block() {
    let data = block_data(3, 2);
    let live = ContainerMerkleTree::from_metadata([&data]);
    let mut deleted = ContainerMerkleTree::new();
    deleted.add_deleted_blocks([&data], true);
    assert!(deleted.is_deleted(3));
    assert_eq!(live.data_checksum(), deleted.data_checksum());
}

#[test]
fn marking_unreferenced_blocks_keeps_an_existing_checksum_and_hashes_a_new_one_empty() {
    let data = block_data(3, 2);
    let mut tree = ContainerMerkleTree::from_metadata([&data]);
    let before = tree.block(3).unwrap().data_checksum;
    tree.mark_deleted_keeping_checksum([3, 9], true);
    assert!(tree.is_deleted(3) && tree.is_deleted(9));
    assert_eq!(tree.block(3).unwrap().data_checksum, before);
    assert_eq!(tree.block(9).unwrap().data_checksum, block_checksum(9, []));
    assert!(tree.block(9).unwrap().chunks.is_empty());
}

#[test]
fn merge_keeps_witnessed_deletes_and_drops_live_entries_only_on_disk() {
    let mut disk = ContainerMerkleTree::from_metadata([&block_data(1, 1), &block_data(2, 1)]);
    disk.set_deleted_block(1, 42);
    disk.set_deleted_block(5, 43);
    let mut ours = ContainerMerkleTree::from_metadata([&block_data(1, 2), &block_data(3, 1)]);
    ours.merge_existing(&disk);
    assert_eq!(ours.block(1).unwrap().data_checksum, 42);
    assert!(ours.is_deleted(1) && ours.is_deleted(5));
    assert!(ours.block(2).is_none(), "live only on disk: dropped");
    assert!(!ours.is_deleted(3));
    assert!(ours.data_checksum().is_some());
}

#[test]
fn add_chunks_leaves_a_deleted_entry_alone() {
    let mut tree = ContainerMerkleTree::new();
    tree.set_deleted_block(4, 11);
    tree.add_chunks(4, true, &block_data(4, 1).chunks);
    assert!(tree.is_deleted(4));
    assert_eq!(tree.block(4).unwrap().data_checksum, 11);
}

#[test]
fn diff_reports_each_category() {
    let mut local = ContainerMerkleTree::from_metadata([&block_data(1, 1), &block_data(2, 2)]);
    let mut peer = ContainerMerkleTree::from_metadata([
        &block_data(1, 2),
        &block_data(2, 2),
        &block_data(3, 1),
        &block_data(4, 1),
    ]);
    // Block 2: the local second chunk is unhealthy and differs.
    let mut bad = block_data(2, 2).chunks[1].clone();
    bad.checksums[0] ^= 1;
    local.add_chunks(2, false, &[bad]);
    peer.set_deleted_block(4, 99);
    local.set_deleted_block(6, 5);
    peer.set_deleted_block(6, 6);
    local.compute_root();
    peer.compute_root();
    let report = diff(&info(local), &info(peer), false).unwrap();
    assert_eq!(
        report
            .missing_blocks
            .iter()
            .map(|b| b.local_id)
            .collect::<Vec<_>>(),
        vec![3]
    );
    assert_eq!(
        report.missing_chunks.keys().copied().collect::<Vec<_>>(),
        vec![1]
    );
    assert_eq!(
        report.corrupt_chunks.keys().copied().collect::<Vec<_>>(),
        vec![2]
    );
    assert_eq!(report.diverged_deleted, vec![(4, 99), (6, 6)]);
}

#[test]
fn equal_roots_hide_a_restored_block_unless_peer_deletions_are_witnessed() {
    let data = block_data(1, 2);
    let local = ContainerMerkleTree::from_metadata([&data]);
    let mut peer = ContainerMerkleTree::new();
    peer.add_deleted_blocks([&data], true);
    assert_eq!(local.data_checksum(), peer.data_checksum());
    assert!(
        diff(&info(local.clone()), &info(peer.clone()), false)
            .unwrap()
            .is_empty()
    );
    let report = diff(&info(local), &info(peer), true).unwrap();
    assert_eq!(report.diverged_deleted.len(), 1);
}

#[test]
fn diff_of_different_containers_is_an_error() {
    let other = ContainerChecksumInfo::empty(ContainerId(2));
    assert!(diff(&ContainerChecksumInfo::empty(CONTAINER), &other, false).is_err());
}

#[test]
fn tree_file_round_trips_and_rejects_corruption() {
    let mut tree = ContainerMerkleTree::from_metadata([&block_data(1, 2), &block_data(2, 1)]);
    tree.set_deleted_block(3, 77);
    tree.compute_root();
    let original = info(tree);
    let bytes = merkle::encode(&original);
    assert_eq!(merkle::decode(&bytes).unwrap(), original);
    assert_eq!(merkle::decode(b"junk"), Err(TreeDecodeError::BadMagic));
    let mut flipped = bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0xff;
    assert!(matches!(
        merkle::decode(&flipped),
        Err(TreeDecodeError::FileChecksumMismatch { .. })
    ));
    assert!(merkle::decode(&bytes[..bytes.len() - 1]).is_err());
}

#[test]
fn a_malformed_tree_file_is_a_typed_error_for_the_replica() {
    let dn = node(1, ContainerBehavior::Fixed, &[(1, 1)]);
    dn.memory()
        .unwrap()
        .overwrite_tree_file(Some(b"not a tree".to_vec()));
    let err = dn.container().unwrap().checksums().read().unwrap_err();
    assert!(
        matches!(err, ContainerError::MalformedTreeFile { .. }),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------
// Storage semantics
// ---------------------------------------------------------------------------------------

#[test]
fn unlinked_file_with_cached_handle_takes_writes_and_finish_reports_it_missing() {
    let store = MemoryStore::new(ContainerState::QuasiClosed);
    store.write_chunk(1, 0, b"aaaa").unwrap();
    assert!(store.delete_block_file(1).unwrap());
    store.write_chunk(1, 4, b"bbbb").unwrap();
    assert_eq!(store.orphaned_handles(), vec![1]);
    assert_eq!(store.block_file_len(1).unwrap(), None);
    assert_eq!(
        store.finish_write(1),
        Err(StoreError::ChunkFileNotFound { block: 1 })
    );
    assert!(store.orphaned_handles().is_empty());
}

#[test]
fn a_write_past_the_end_is_an_inconsistency_but_creates_the_file() {
    let store = MemoryStore::new(ContainerState::QuasiClosed);
    assert!(matches!(
        store.write_chunk(1, 8, b"x"),
        Err(StoreError::ChunkFileInconsistency { file_len: 0, .. })
    ));
    assert_eq!(store.block_file_len(1).unwrap(), Some(0));
}

#[test]
fn pending_transactions_are_whole_up_to_the_budget() {
    let store = MemoryStore::new(ContainerState::Closed);
    let handler = KeyValueHandler::new(DatanodeId(1), ContainerConfig::default());
    handler.add_container(CONTAINER, store.shared()).unwrap();
    handler.handle_delete_blocks(&[transaction(1, &[1, 2, 3]), transaction(2, &[4])]);
    assert_eq!(store.pending_transactions(2).unwrap().len(), 1);
    assert_eq!(store.pending_transactions(3).unwrap().len(), 1);
    assert_eq!(store.pending_transactions(4).unwrap().len(), 2);
    assert_eq!(store.pending_transactions(0).unwrap().len(), 1);
}

// ---------------------------------------------------------------------------------------
// Replica state
// ---------------------------------------------------------------------------------------

#[test]
fn transitions_follow_spec_c1() {
    let store = MemoryStore::new(ContainerState::Open);
    let handler = KeyValueHandler::new(DatanodeId(1), ContainerConfig::default());
    let c = handler.add_container(CONTAINER, store.shared()).unwrap();
    assert!(!c.is_empty(), "an open replica is not empty");
    assert!(matches!(
        c.transition(ContainerState::QuasiClosed),
        Err(ContainerError::InvalidTransition { .. })
    ));
    c.transition(ContainerState::Closing).unwrap();
    c.transition(ContainerState::QuasiClosed).unwrap();
    c.transition(ContainerState::QuasiClosed).unwrap();
    assert!(c.data_checksum().is_some(), "quasi-close builds the tree");
    c.transition(ContainerState::Closed).unwrap();
    c.mark_unhealthy().unwrap();
    assert!(c.transition(ContainerState::Closed).is_err());
    assert_eq!(store.summary().unwrap().state, ContainerState::Unhealthy);
}

#[test]
fn reconciliation_refuses_an_open_replica() {
    let store = MemoryStore::new(ContainerState::Open);
    let handler = KeyValueHandler::new(DatanodeId(1), ContainerConfig::default());
    handler.add_container(CONTAINER, store.shared()).unwrap();
    let peer = node(2, ContainerBehavior::Fixed, &[(1, 1)]);
    assert!(matches!(
        handler.reconcile_container_internal(CONTAINER, &[peer.peer()]),
        Err(ContainerError::InvalidState { .. })
    ));
    assert!(matches!(
        handler.checksum_info_bytes(CONTAINER),
        Err(ContainerError::InvalidState { .. })
    ));
}

// ---------------------------------------------------------------------------------------
// Delete transactions and the block deleting service
// ---------------------------------------------------------------------------------------

#[test]
fn duplicate_and_out_of_order_transactions() {
    let dn = node(1, ContainerBehavior::Fixed, &[]);
    let results = dn.handler.handle_delete_blocks(&[
        transaction(5, &[1]),
        transaction(5, &[1]),
        transaction(3, &[2]),
        transaction(9, &[3]),
    ]);
    let results: Vec<_> = results.into_iter().map(Result::unwrap).collect();
    assert_eq!(
        results,
        vec![
            TransactionStored::Stored,
            TransactionStored::Duplicate,
            TransactionStored::StoredOutOfOrder,
            TransactionStored::Stored
        ]
    );
    let summary = dn.store.summary().unwrap();
    assert_eq!(summary.pending_transactions, 3);
    assert_eq!(summary.last_delete_tx_id, 9);
    let mut other = transaction(10, &[1]);
    other.container = ContainerId(9);
    assert!(matches!(
        dn.handler.handle_delete_blocks(&[other])[0],
        Err(ContainerError::UnknownContainer { .. })
    ));
}

#[test]
fn fixed_pass_records_unreferenced_blocks_and_refreshes_the_data_checksum() {
    let dn = node(1, ContainerBehavior::Fixed, &[(2, 1)]);
    let before = dn.container().unwrap().data_checksum();
    dn.store_transactions(&[transaction(1, &[BLOCK_X])])
        .unwrap();
    dn.delete_blocks().unwrap();
    assert_eq!(dn.tree_entry_deleted(BLOCK_X).unwrap(), Some(true));
    let views = dn.container().unwrap().checksum_views().unwrap();
    assert!(views.agree(), "{views:?}");
    assert_ne!(views.in_memory, before, "the new entry moved the root");
}

#[test]
fn legacy_pass_leaves_no_trace_of_an_unreferenced_block() {
    let dn = node(1, ContainerBehavior::Legacy, &[(2, 1), (3, 1)]);
    dn.store_transactions(&[transaction(1, &[BLOCK_X, 3])])
        .unwrap();
    dn.delete_blocks().unwrap();
    assert_eq!(dn.tree_entry_deleted(BLOCK_X).unwrap(), None);
    assert_eq!(dn.tree_entry_deleted(3).unwrap(), Some(true));
    assert_eq!(dn.pending_transactions(), 0);
}

#[test]
fn only_the_fixed_pass_refreshes_a_moved_root() {
    for (behavior, agree) in [
        (ContainerBehavior::Fixed, true),
        (ContainerBehavior::Legacy, false),
    ] {
        let dn = node(1, behavior, &[(2, 1)]);
        // Block 5 has metadata but no tree entry: deleting it adds one and moves the root.
        write_block(&*dn.store, 5, 1).unwrap();
        dn.store_transactions(&[transaction(1, &[5])]).unwrap();
        dn.delete_blocks().unwrap();
        let views = dn.container().unwrap().checksum_views().unwrap();
        assert_eq!(views.agree(), agree, "{behavior:?} (HDDS-16808): {views:?}");
    }
}

#[test]
fn a_failed_file_delete_is_recorded_by_the_fixed_pass_only() {
    for (behavior, recorded) in [
        (ContainerBehavior::Fixed, Some(true)),
        (ContainerBehavior::Legacy, Some(false)),
    ] {
        let (faulty, dn) = faulty_node(behavior, &[(BLOCK_X, 2), (2, 1)]);
        faulty.fail_when(StoreOp::DeleteBlockFile, |call| call.block == Some(BLOCK_X));
        dn.store_transactions(&[transaction(1, &[BLOCK_X])])
            .unwrap();
        dn.delete_blocks().unwrap();
        assert!(!dn.has_metadata(BLOCK_X), "{behavior:?}");
        assert!(dn.has_file(BLOCK_X), "{behavior:?}: the unlink failed");
        assert_eq!(
            dn.tree_entry_deleted(BLOCK_X).unwrap(),
            recorded,
            "{behavior:?}"
        );
    }
}

#[test]
fn a_failed_tree_write_aborts_the_round_before_the_metadata_batch() {
    let (faulty, dn) = faulty_node(ContainerBehavior::Fixed, &[(BLOCK_X, 1)]);
    dn.store_transactions(&[transaction(1, &[BLOCK_X])])
        .unwrap();
    faulty.fail(StoreOp::WriteTreeFile);
    assert!(dn.delete_blocks().is_err());
    assert!(dn.has_metadata(BLOCK_X) && !dn.has_file(BLOCK_X));
    assert_eq!(dn.pending_transactions(), 1);
    faulty.clear();
    dn.delete_blocks().unwrap();
    assert!(!dn.has_metadata(BLOCK_X));
    assert_eq!(dn.tree_entry_deleted(BLOCK_X).unwrap(), Some(true));
}

#[test]
fn deleting_the_last_block_marks_the_replica_empty_for_good() {
    let dn = node(1, ContainerBehavior::Fixed, &[(BLOCK_X, 1)]);
    let other = node(2, ContainerBehavior::Fixed, &[(BLOCK_X, 1), (2, 1)]);
    dn.store_transactions(&[transaction(1, &[BLOCK_X])])
        .unwrap();
    dn.delete_blocks().unwrap();
    assert!(dn.container().unwrap().is_empty());
    dn.reconcile(&[&other]).unwrap();
    assert!(dn.has_metadata(2));
    assert!(dn.container().unwrap().is_empty(), "sticky (spec C.10)");
}

#[test]
fn no_deletion_on_an_open_replica() {
    let store = MemoryStore::new(ContainerState::Open);
    let handler = KeyValueHandler::new(DatanodeId(1), ContainerConfig::default());
    handler.add_container(CONTAINER, store.shared()).unwrap();
    handler.handle_delete_blocks(&[transaction(1, &[1])]);
    assert!(handler.run_block_deleting_service().is_empty());
    assert_eq!(store.summary().unwrap().pending_transactions, 1);
}

#[test]
fn the_block_budget_bounds_a_task() {
    let config = ContainerConfig {
        block_deleting_limit_per_interval: 2,
        ..ContainerConfig::default()
    };
    let dn = ReplicaNode::new(DatanodeId(1), config, ContainerState::Closed, &[]).unwrap();
    let txs: Vec<_> = (1..=4).map(|i| transaction(i, &[i, i + 10])).collect();
    dn.store_transactions(&txs).unwrap();
    dn.delete_blocks().unwrap();
    assert_eq!(dn.pending_transactions(), 3);
}

// ---------------------------------------------------------------------------------------
// Reconciliation
// ---------------------------------------------------------------------------------------

#[test]
fn reconciliation_copies_missing_blocks_and_converges() {
    for behavior in ContainerBehavior::ALL {
        let dn1 = node(1, behavior, &[(1, 2)]);
        let dn2 = node(2, behavior, &[(1, 2), (2, 3), (3, 1)]);
        dn1.reconcile(&[&dn2]).unwrap();
        for block in [2, 3] {
            assert!(
                dn1.has_metadata(block) && dn1.has_file(block),
                "{behavior:?}"
            );
        }
        assert_eq!(
            dn1.container().unwrap().data_checksum(),
            dn2.container().unwrap().data_checksum()
        );
    }
}

#[test]
fn reconciliation_repairs_a_corrupt_chunk_found_by_a_scan() {
    let dn1 = node(1, ContainerBehavior::Fixed, &[(1, 2)]);
    let dn2 = node(2, ContainerBehavior::Fixed, &[(1, 2)]);
    dn1.memory().unwrap().corrupt_block_file(1, 8, b"??");
    let scan = dn1.handler.scan(CONTAINER).unwrap().unwrap();
    assert!(scan.has(ScanFailure::CorruptChunk));
    assert_eq!(dn1.container().unwrap().state(), ContainerState::Unhealthy);
    let scan = dn1.reconcile(&[&dn2]).unwrap().unwrap();
    assert!(scan.errors.is_empty(), "{scan:?}");
    assert_eq!(
        dn1.store.read_block(1, 8, 8).unwrap(),
        Some(chunk_bytes(1, 1))
    );
}

#[test]
fn a_peer_error_mid_block_fails_the_fixed_block_cleanly() {
    for (behavior, metadata) in [
        (ContainerBehavior::Fixed, false),
        (ContainerBehavior::Legacy, true),
    ] {
        let dn1 = node(1, behavior, &[]);
        let dn2 = node(2, behavior, &[(BLOCK_X, 3)]);
        let peer = ScriptedPeer::failing(dn2.peer(), 1, PeerFailure::Once);
        let report = dn1
            .handler
            .reconcile_container_internal(CONTAINER, &[peer])
            .unwrap();
        let outcome = &report.rounds[0].blocks[&BLOCK_X];
        assert_eq!(
            dn1.has_metadata(BLOCK_X),
            metadata,
            "{behavior:?}: {outcome:?}"
        );
        if behavior == ContainerBehavior::Fixed {
            assert!(matches!(
                outcome,
                BlockRepair::Failed(ContainerError::Peer(_))
            ));
            assert!(!dn1.has_file(BLOCK_X), "no stray chunk");
        } else {
            assert_eq!(outcome, &BlockRepair::Partial { chunks: 1 });
        }
    }
}

#[test]
fn a_short_read_from_the_peer_fails_the_fixed_block_cleanly() {
    let dn1 = node(1, ContainerBehavior::Fixed, &[(BLOCK_X, 1)]);
    let dn2 = node(2, ContainerBehavior::Fixed, &[(BLOCK_X, 3)]);
    // The peer's file ends inside X's third chunk.
    dn2.memory()
        .unwrap()
        .truncate_block_file(BLOCK_X, 20)
        .unwrap();
    let report = dn1
        .handler
        .reconcile_container_internal(CONTAINER, &[dn2.peer()])
        .unwrap();
    assert!(matches!(
        report.rounds[0].blocks[&BLOCK_X],
        BlockRepair::Failed(ContainerError::ShortRead {
            expected: 8,
            got: 4,
            ..
        })
    ));
    // X keeps its first chunk and nothing else: the pulled second chunk was removed.
    assert_eq!(
        dn1.store.get_block(BLOCK_X).unwrap(),
        Some(block_data(BLOCK_X, 1))
    );
    assert_eq!(dn1.store.block_file_len(BLOCK_X).unwrap(), Some(8));
}

#[test]
fn a_closed_replica_without_blocks_is_empty_on_load() {
    let dn = ReplicaNode::new(
        DatanodeId(1),
        ContainerConfig::default(),
        ContainerState::Closed,
        &[],
    )
    .unwrap();
    assert!(dn.container().unwrap().is_empty());
    assert!(
        !node(2, ContainerBehavior::Fixed, &[(1, 1)])
            .container()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_deletion_seen_on_the_peer_is_adopted_instead_of_copied() {
    let dn1 = node(1, ContainerBehavior::Fixed, &[]);
    let dn2 = node(2, ContainerBehavior::Fixed, &[(BLOCK_X, 2)]);
    dn2.store_transactions(&[transaction(1, &[BLOCK_X])])
        .unwrap();
    dn2.delete_blocks().unwrap();
    let report = dn1
        .handler
        .reconcile_container_internal(CONTAINER, &[dn2.peer()])
        .unwrap();
    assert!(report.rounds[0].blocks.is_empty());
    assert_eq!(report.rounds[0].adopted_deleted, vec![BLOCK_X]);
    assert_eq!(dn1.tree_entry_deleted(BLOCK_X).unwrap(), Some(true));
}

#[test]
fn a_restored_block_is_removed_when_peer_deletions_are_applied() {
    for (apply, removed) in [(true, true), (false, false)] {
        let mut config = ContainerConfig::new(ContainerBehavior::Fixed);
        config.apply_peer_deletions = apply;
        let qc = ContainerState::QuasiClosed;
        // dn1 holds X although its deletion was executed elsewhere (restored by an
        // earlier, unpatched reconciliation).
        let dn1 = ReplicaNode::new(DatanodeId(1), config, qc, &[(BLOCK_X, 2)]).unwrap();
        let dn2 = ReplicaNode::new(DatanodeId(2), config, qc, &[(BLOCK_X, 2)]).unwrap();
        dn2.store_transactions(&[transaction(1, &[BLOCK_X])])
            .unwrap();
        dn2.delete_blocks().unwrap();
        dn1.reconcile(&[&dn2]).unwrap();
        assert_eq!(!dn1.has_metadata(BLOCK_X), removed, "apply {apply}");
        assert_eq!(!dn1.has_file(BLOCK_X), removed, "apply {apply}");
    }
}

#[test]
fn a_replica_whose_last_block_goes_by_a_peer_deletion_is_marked_empty() {
    // dn1 holds only X although its deletion was executed elsewhere (spec C.10: SCM
    // deletes the container only once every replica reports empty).
    let dn1 = node(1, ContainerBehavior::Fixed, &[(BLOCK_X, 2)]);
    let dn2 = node(2, ContainerBehavior::Fixed, &[(BLOCK_X, 2)]);
    dn2.store_transactions(&[transaction(1, &[BLOCK_X])])
        .unwrap();
    dn2.delete_blocks().unwrap();
    assert!(dn2.container().unwrap().is_empty());
    assert!(!dn1.container().unwrap().is_empty());
    let report = dn1
        .handler
        .reconcile_container_internal(CONTAINER, &[dn2.peer()])
        .unwrap();
    assert_eq!(report.rounds[0].applied_peer_deletions, vec![BLOCK_X]);
    assert!(dn1.container().unwrap().is_empty());
}

#[test]
fn the_generation_check_skips_rereading_an_unchanged_tree() {
    let dn = node(1, ContainerBehavior::Fixed, &[(1, 1)]);
    let c = dn.container().unwrap();
    let first = c.checksums().read_latest().unwrap();
    let second = c.checksums().read_latest().unwrap();
    assert!(Arc::ptr_eq(&first, &second));
    let generation = c.checksums().generation();
    dn.store_transactions(&[transaction(1, &[1])]).unwrap();
    dn.delete_blocks().unwrap();
    assert!(c.checksums().generation() > generation);
    assert!(c.tree_marks_deleted(1).unwrap());
}

// ---------------------------------------------------------------------------------------
// Scanner
// ---------------------------------------------------------------------------------------

#[test]
fn scanner_reports_each_kind_and_marks_unhealthy() {
    type Damage = fn(&MemoryStore);
    let cases: [(Damage, ScanFailure); 4] = [
        (
            |s| {
                s.delete_block_file(1).unwrap();
            },
            ScanFailure::MissingDataFile,
        ),
        (
            |s| {
                s.truncate_block_file(1, 8).unwrap();
            },
            ScanFailure::MissingChunk,
        ),
        (
            |s| {
                s.corrupt_block_file(1, 1, b"!").then_some(()).unwrap();
            },
            ScanFailure::CorruptChunk,
        ),
        (
            |s| {
                s.truncate_block_file(1, 12).unwrap();
            },
            ScanFailure::InconsistentChunkLength,
        ),
    ];
    for (damage, kind) in cases {
        let dn = node(1, ContainerBehavior::Fixed, &[(1, 2), (2, 1)]);
        damage(dn.memory().unwrap());
        let report = dn.handler.scan(CONTAINER).unwrap().unwrap();
        assert!(report.has(kind), "{kind:?}: {report:?}");
        assert!(report.marked_unhealthy);
        assert_eq!(dn.container().unwrap().state(), ContainerState::Unhealthy);
    }
}

#[test]
fn a_healthy_scan_keeps_the_replica_and_the_checksum() {
    let dn = node(1, ContainerBehavior::Fixed, &[(1, 2), (2, 1)]);
    let before = dn.container().unwrap().data_checksum();
    let report = dn.handler.scan(CONTAINER).unwrap().unwrap();
    assert!(report.errors.is_empty() && report.data_scanned);
    assert_eq!(dn.container().unwrap().data_checksum(), before);
    assert_eq!(dn.container().unwrap().state(), ContainerState::QuasiClosed);
}

// ---------------------------------------------------------------------------------------
// Command wiring
// ---------------------------------------------------------------------------------------

#[test]
fn delete_blocks_commands_reach_the_replicas() {
    let dn = node(1, ContainerBehavior::Fixed, &[(BLOCK_X, 1)]);
    let context = Arc::new(
        StateContext::new(
            StateContextBehavior::Fixed,
            StateContextConfig::default(),
            &[(ScmId(1), false)],
            ManualClock::new(0).shared(),
        )
        .unwrap(),
    );
    let dispatcher = CommandDispatcher::new(
        context,
        controller_of(&dn.handler),
        ManualClock::new(0).shared(),
    );
    let dispatch = |id, tx| {
        dispatcher.handle(DispatchedCommand {
            command: ScmCommand::new(
                CommandId(id),
                1,
                CommandKind::DeleteBlocks {
                    transactions: vec![tx],
                },
            ),
            term_at_dispatch: 1,
            heartbeat_term_high_water: None,
        })
    };
    let report = dispatch(1, transaction(1, &[BLOCK_X]));
    assert_eq!(report.outcome, CommandOutcome::Executed);
    assert_eq!(dn.pending_transactions(), 1);
    let mut unknown = transaction(2, &[1]);
    unknown.container = ContainerId(7);
    let report = dispatch(2, unknown);
    assert!(matches!(
        report.outcome,
        CommandOutcome::Failed(DatanodeError::Container(
            ContainerError::UnknownContainer { .. }
        ))
    ));
}
