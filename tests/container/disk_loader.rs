//! The disk store's database loader: hand-made records that no committed batch produces
//! are typed errors, a file past the read cap is refused unread, and no damaged record or
//! file panics the loader (properties over arbitrary damage). The record format is the
//! one `datanode::container::disk::codec` documents; keys make a block or a transaction
//! listed twice, or out of id order, impossible.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use redb::{Database, TableDefinition};

use hadoop_ref::datanode::container::disk::{DiskStore, MAX_TREE_FILE_BYTES};
use hadoop_ref::datanode::container::store::{
    BlockData, ContainerStore, MetadataBatch, StoreError,
};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::sim::replica_node::CONTAINER;

use crate::test_util::damaged;

const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
const BLOCKS: TableDefinition<u64, &[u8]> = TableDefinition::new("blocks");
const TRANSACTIONS: TableDefinition<u64, &[u8]> = TableDefinition::new("transactions");

/// A block record: (offset, length) per chunk, window size 4, no checksums.
fn block_record(chunks: &[(u64, u64)]) -> Vec<u8> {
    let mut out = (chunks.len() as u64).to_be_bytes().to_vec();
    for (offset, length) in chunks {
        out.extend_from_slice(&offset.to_be_bytes());
        out.extend_from_slice(&length.to_be_bytes());
        out.extend_from_slice(&4u32.to_be_bytes());
        out.extend_from_slice(&0u64.to_be_bytes());
    }
    out
}

/// A transaction record.
fn tx_record(container: u64, ids: &[u64]) -> Vec<u8> {
    let mut out = container.to_be_bytes().to_vec();
    out.extend_from_slice(&(ids.len() as u64).to_be_bytes());
    for id in ids {
        out.extend_from_slice(&id.to_be_bytes());
    }
    out
}

/// One record to write by hand.
enum Record {
    Meta(&'static str, Vec<u8>),
    Block(u64, Vec<u8>),
    Tx(u64, Vec<u8>),
}

/// Opens a CLOSED replica after writing `records` into its database by hand.
fn open_with(records: &[Record]) -> Result<DiskStore, StoreError> {
    let dir = tempfile::tempdir().unwrap();
    drop(DiskStore::open(dir.path(), CONTAINER, ContainerState::Closed).unwrap());
    let db = Database::open(dir.path().join("metadata").join("container.db")).unwrap();
    let txn = db.begin_write().unwrap();
    {
        let mut meta = txn.open_table(META).unwrap();
        let mut blocks = txn.open_table(BLOCKS).unwrap();
        let mut txs = txn.open_table(TRANSACTIONS).unwrap();
        for record in records {
            match record {
                Record::Meta(key, value) => meta.insert(*key, value.as_slice()),
                Record::Block(id, value) => blocks.insert(*id, value.as_slice()),
                Record::Tx(id, value) => txs.insert(*id, value.as_slice()),
            }
            .unwrap();
        }
    }
    txn.commit().unwrap();
    drop(db);
    DiskStore::open(dir.path(), CONTAINER, ContainerState::Closed)
}

fn refused(records: &[Record], why: &str) {
    match open_with(records) {
        Err(StoreError::CorruptMetadata { reason }) => {
            assert!(reason.contains(why), "{reason:?} does not say {why:?}");
        }
        other => panic!("expected corrupt metadata ({why}), got {other:?}"),
    }
}

#[test]
fn well_formed_hand_made_records_load() {
    let store = open_with(&[
        Record::Block(1, block_record(&[(0, 8), (8, 8)])),
        Record::Block(2, block_record(&[])),
        // A block no replica holds: recovery has nothing to complete.
        Record::Tx(3, tx_record(CONTAINER.0, &[9])),
    ])
    .unwrap();
    assert_eq!(store.blocks().unwrap().len(), 2);
    assert_eq!(store.summary().unwrap().pending_transactions, 1);
}

#[test]
fn transaction_of_another_container_is_refused() {
    refused(
        &[Record::Tx(3, tx_record(CONTAINER.0 + 1, &[1]))],
        "belongs to container",
    );
}

#[test]
fn chunk_past_the_addressable_range_is_refused() {
    refused(
        &[Record::Block(1, block_record(&[(u64::MAX - 1, 8)]))],
        "past the addressable range",
    );
}

#[test]
fn chunks_out_of_offset_order_are_refused() {
    refused(
        &[Record::Block(1, block_record(&[(8, 8), (0, 8)]))],
        "chunk at 0 listed twice or out of order",
    );
}

#[test]
fn record_with_trailing_bytes_is_refused() {
    let mut record = tx_record(CONTAINER.0, &[1]);
    record.push(0);
    refused(&[Record::Tx(3, record)], "trailing bytes");
}

#[test]
fn unknown_state_is_refused() {
    refused(&[Record::Meta("state", vec![42])], "unknown state");
}

#[test]
fn count_past_the_record_is_refused() {
    let mut record = tx_record(CONTAINER.0, &[1]);
    record[8..16].copy_from_slice(&u64::MAX.to_be_bytes());
    refused(&[Record::Tx(3, record)], "exceeds the record");
}

#[test]
fn tree_file_past_the_read_cap_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let store = DiskStore::open(dir.path(), CONTAINER, ContainerState::Closed).unwrap();
    let file = std::fs::File::create(store.tree_path()).unwrap();
    // Sparse: the cap is tested without writing its bytes.
    file.set_len(MAX_TREE_FILE_BYTES + 1).unwrap();
    assert!(matches!(
        store.read_tree_file(),
        Err(StoreError::FileTooLarge { limit, .. }) if limit == MAX_TREE_FILE_BYTES
    ));
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 128,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/disk_loader.txt",
        ))),
        ..ProptestConfig::default()
    })]

    /// Fuzzing the record decoder: any damage to valid records loads or is a typed error.
    #[test]
    fn damaged_records_never_panic_the_loader(
        at in any::<usize>(),
        with in proptest::collection::vec(any::<u8>(), 1..9),
        truncate in any::<bool>(),
        which in 0..3u8,
    ) {
        let mut records = vec![
            Record::Block(1, block_record(&[(0, 8), (8, 8)])),
            Record::Tx(2, tx_record(CONTAINER.0, &[1, 5])),
            Record::Meta("data_checksum", 7u64.to_be_bytes().to_vec()),
        ];
        let record = match &mut records[usize::from(which)] {
            Record::Block(_, value) | Record::Tx(_, value) | Record::Meta(_, value) => value,
        };
        *record = damaged(std::mem::take(record), at, &with, truncate);
        match open_with(&records) {
            Ok(_) | Err(StoreError::CorruptMetadata { .. }) => {}
            Err(other) => prop_assert!(false, "unexpected error {other:?}"),
        }
    }

    /// Fuzzing the database file under the loader: damage anywhere in the file loads, or
    /// is a typed error, and the replica closes.
    #[test]
    fn damaged_database_files_never_panic_the_loader(
        at in any::<usize>(),
        with in proptest::collection::vec(any::<u8>(), 1..9),
        truncate in any::<bool>(),
    ) {
        prop_assert_eq!(open_damaged_file(at, &with, truncate), Ok(()));
    }
}

/// Opens, then closes, a replica whose database file is damaged at `at`: loading is fine
/// or [`StoreError::CorruptMetadata`], anything else is returned.
fn open_damaged_file(at: usize, with: &[u8], truncate: bool) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = DiskStore::open(dir.path(), CONTAINER, ContainerState::Closed).unwrap();
        store
            .commit(MetadataBatch {
                put_blocks: vec![BlockData::new(1, [])],
                ..MetadataBatch::default()
            })
            .unwrap();
    }
    let path = dir.path().join("metadata").join("container.db");
    let bytes = damaged(std::fs::read(&path).unwrap(), at, with, truncate);
    std::fs::write(&path, bytes).unwrap();
    match DiskStore::open(dir.path(), CONTAINER, ContainerState::Closed) {
        Ok(store) => {
            drop(store);
            Ok(())
        }
        Err(StoreError::CorruptMetadata { .. }) => Ok(()),
        Err(other) => Err(format!("unexpected error {other:?}")),
    }
}

/// Postmortem (found by `damaged_database_files_never_panic_the_loader`): with this byte
/// damaged the replica loaded, and redb 4.6 panicked closing the database (an assertion
/// on its allocator state); the last store of a replica now closes it under a guard.
#[test]
fn database_damaged_where_redb_panicked_on_close_is_survived() {
    assert_eq!(
        open_damaged_file(3_189_984_473_336_827_930, &[9], false),
        Ok(())
    );
}
