//! The disk store (HDDS-16811): the seed's reproductions run on replicas kept in
//! directories give the same results as on the in-memory store (the orphaned-handle
//! semantics come from the operating system here), and a replica reloads across a
//! restart exactly as it was committed.

use hadoop_ref::datanode::container::disk::DiskStore;
use hadoop_ref::datanode::container::store::{ContainerStore, StoreError};
use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::DatanodeId;
use hadoop_ref::scenarios::container::{
    BLOCK_X, data_checksums_agree, delete_mid_reconcile_on, delete_then_reconcile_on,
    deleted_block_restored_as_reported, deleted_blocks_not_live, metadata_without_file_as_reported,
    no_metadata_without_file,
};
use hadoop_ref::sim::replica_node::{CONTAINER, ReplicaNode, StoreFactory, transaction};

use crate::test_util::container::{disk_stores, open_disk_store, replica};

/// The seed's MC2 on disk.
#[test]
fn on_disk_only_legacy_restores_a_deleted_block() {
    for behavior in ContainerBehavior::ALL {
        let dir = tempfile::tempdir().unwrap();
        let mut stores = disk_stores(dir.path());
        let run = delete_then_reconcile_on(behavior, &mut stores as &mut StoreFactory<'_>).unwrap();
        let seed = deleted_block_restored_as_reported(&run);
        if behavior.is_patched() {
            assert!(seed.is_err(), "{behavior:?}");
        } else {
            seed.unwrap();
        }
        let holds = run
            .nodes
            .iter()
            .all(|n| deleted_blocks_not_live(n, &[BLOCK_X]).is_ok());
        assert_eq!(holds, behavior.is_patched(), "{behavior:?}");
    }
}

/// The seed's MC3 and its MISSING_CHUNK variant on disk.
#[test]
fn on_disk_only_legacy_orphans_the_chunks_of_a_block_deleted_mid_repair() {
    for partial in [false, true] {
        for behavior in ContainerBehavior::ALL {
            let dir = tempfile::tempdir().unwrap();
            let mut stores = disk_stores(dir.path());
            let stores = &mut stores as &mut StoreFactory<'_>;
            let run = delete_mid_reconcile_on(behavior, partial, stores).unwrap();
            let seed = metadata_without_file_as_reported(&run, partial);
            if behavior.is_patched() {
                assert!(seed.is_err(), "{behavior:?}, partial {partial}");
                no_metadata_without_file(&run.dn1).unwrap();
                deleted_blocks_not_live(&run.dn1, &[BLOCK_X]).unwrap();
                assert_eq!(run.state, ContainerState::QuasiClosed);
            } else {
                seed.unwrap_or_else(|e| panic!("partial {partial}: {e}"));
            }
        }
    }
}

#[test]
fn an_unlinked_block_file_keeps_its_cached_handle_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let store = DiskStore::open(dir.path(), CONTAINER, ContainerState::Closed).unwrap();
    store.write_chunk(1, 0, b"aaaa").unwrap();
    assert!(store.delete_block_file(1).unwrap());
    store.write_chunk(1, 4, b"bbbb").unwrap();
    assert_eq!(store.block_file_len(1).unwrap(), None);
    assert_eq!(
        store.finish_write(1),
        Err(StoreError::ChunkFileNotFound { block: 1 })
    );
    assert!(matches!(
        store.write_chunk(2, 3, b"x"),
        Err(StoreError::ChunkFileInconsistency { file_len: 0, .. })
    ));
}

#[test]
fn a_replica_reloads_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dn1");
    let config = ContainerConfig::new(ContainerBehavior::Hardened);
    let open = || open_disk_store(&path);
    let peer = replica(2, config, &[(1, 2), (2, 1), (3, 3)]);
    let before = {
        let dn1 = ReplicaNode::with_store(DatanodeId(1), config, open(), &[(1, 2)]).unwrap();
        dn1.store_transactions(&[transaction(7, &[1]), transaction(9, &[4])])
            .unwrap();
        dn1.reconcile(&[&peer]).unwrap();
        dn1.handler.run_block_deleting_service();
        dn1.store_transactions(&[transaction(11, &[3])]).unwrap();
        let c = dn1.container().unwrap();
        (
            dn1.store.blocks().unwrap(),
            dn1.store.summary().unwrap(),
            c.checksums().read().unwrap(),
            c.data_checksum(),
            dn1.store.block_files().unwrap(),
        )
    };
    let dn1 = ReplicaNode::with_store(DatanodeId(1), config, open(), &[]).unwrap();
    let c = dn1.container().unwrap();
    assert_eq!(dn1.store.blocks().unwrap(), before.0);
    assert_eq!(dn1.store.summary().unwrap(), before.1);
    assert_eq!(c.checksums().read().unwrap(), before.2);
    assert_eq!(c.data_checksum(), before.3);
    assert_eq!(dn1.store.block_files().unwrap(), before.4);
    assert_eq!(before.4, vec![2, 3]);
    assert_eq!(before.1.pending_transactions, 1);
    assert_eq!(before.1.last_delete_tx_id, 11);
    data_checksums_agree(std::slice::from_ref(&dn1)).unwrap();
    assert!(!c.is_empty());
}

#[test]
fn a_corrupt_database_file_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    drop(DiskStore::open(dir.path(), CONTAINER, ContainerState::Closed).unwrap());
    let db = dir.path().join("metadata").join("container.db");
    let valid = std::fs::read(&db).unwrap();
    let mut damaged = valid.clone();
    for byte in &mut damaged[..64] {
        *byte ^= 0x55;
    }
    for bytes in [damaged, Vec::new(), b"not a database".to_vec()] {
        std::fs::write(&db, &bytes).unwrap();
        let opened = DiskStore::open(dir.path(), CONTAINER, ContainerState::Closed);
        assert!(
            matches!(opened, Err(StoreError::CorruptMetadata { .. })),
            "{} byte(s): {opened:?}",
            bytes.len()
        );
    }
}
