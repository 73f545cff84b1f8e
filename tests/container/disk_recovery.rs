//! Recovery when a disk replica opens: what a crash between two durable steps left is
//! resolved before the replica serves anything.

use hadoop_ref::datanode::container::disk::DiskStore;
use hadoop_ref::datanode::container::store::{BlockData, ChunkInfo, ContainerStore, MetadataBatch};
use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::DatanodeId;
use hadoop_ref::sim::replica_node::{CONTAINER, ReplicaNode, transaction};

const DATA: &[u8] = b"0123456789abcdef";

fn open(dir: &std::path::Path, state: ContainerState) -> DiskStore {
    DiskStore::open(dir, CONTAINER, state).expect("the replica opens")
}

/// Reopens the replica and runs recovery on open, as loading it under
/// `ContainerConfig::recover_on_open` does.
fn reopen(dir: &std::path::Path, state: ContainerState) -> DiskStore {
    let store = open(dir, state);
    store.recover_on_open().expect("recovery runs");
    store
}

/// Block `id`'s file with [`DATA`], and (when `commit`) its metadata.
fn write_block(store: &DiskStore, id: u64, commit: bool) {
    store.write_chunk(id, 0, DATA).unwrap();
    store.finish_write(id).unwrap();
    if commit {
        store
            .commit(MetadataBatch {
                put_blocks: vec![BlockData::new(id, [ChunkInfo::for_data(0, DATA, 4)])],
                ..MetadataBatch::default()
            })
            .unwrap();
    }
}

/// Postmortem (crash-point audit): a repair that crashed after pulling a block's chunks
/// and before its commit left a file nothing named and nothing reclaimed.
#[test]
fn reopening_a_closed_replica_reclaims_a_block_file_without_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), ContainerState::QuasiClosed);
    write_block(&store, 1, true);
    write_block(&store, 2, false);
    drop(store);
    let store = reopen(dir.path(), ContainerState::QuasiClosed);
    assert_eq!(store.recovery().orphan_files_reclaimed, vec![2]);
    assert_eq!(store.block_files().unwrap(), vec![1]);
}

#[test]
fn reopening_an_open_replica_keeps_a_block_being_written() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), ContainerState::Open);
    write_block(&store, 2, false);
    drop(store);
    let store = reopen(dir.path(), ContainerState::Open);
    assert!(store.recovery().orphan_files_reclaimed.is_empty());
    assert_eq!(store.block_files().unwrap(), vec![2]);
}

/// Postmortem (crash-point audit): a deleting round that unlinked a block's file and
/// crashed before its database batch left metadata without a file, which a scan turned
/// UNHEALTHY; the pending transaction now completes the deletion.
#[test]
fn reopening_completes_a_deletion_whose_file_was_unlinked() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), ContainerState::Closed);
    write_block(&store, 1, true);
    write_block(&store, 2, true);
    store
        .commit(MetadataBatch {
            put_transactions: vec![transaction(5, &[1])],
            last_delete_tx_id: Some(5),
            ..MetadataBatch::default()
        })
        .unwrap();
    assert!(store.delete_block_file(1).unwrap(), "the round's unlink");
    drop(store);

    let store = reopen(dir.path(), ContainerState::Closed);
    assert_eq!(store.recovery().deletions_completed, vec![1]);
    assert_eq!(store.get_block(1).unwrap(), None);
    assert_eq!(
        store.summary().unwrap().pending_transactions,
        1,
        "it resumes"
    );
    let config = ContainerConfig::new(ContainerBehavior::Hardened);
    let node = ReplicaNode::with_store(DatanodeId(1), config, store.shared(), &[]).unwrap();
    node.delete_blocks().unwrap();
    assert_eq!(node.pending_transactions(), 0);
    assert_eq!(node.tree_entry_deleted(1).unwrap(), Some(true));
    assert!(node.store.get_block(2).unwrap().is_some());
}
