//! The disk store's database loader: hand-made files whose CRC is valid but whose content
//! no committed batch produces are typed errors, a file past the read cap is refused
//! unread, and no damaged file panics the loader (a property over arbitrary damage).

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use hadoop_ref::datanode::container::disk::{DiskStore, MAX_TREE_FILE_BYTES};
use hadoop_ref::datanode::container::store::{ContainerStore, StoreError};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::sim::replica_node::CONTAINER;

/// A chunk: (offset, length).
type Chunk = (u64, u64);

/// The database file format, written by hand: state CLOSED, no data checksum, `blocks`
/// as (id, chunks), `txs` as (tx id, container id, block ids), and the CRC32C trailer.
fn db_file(blocks: &[(u64, &[Chunk])], txs: &[(u64, u64, &[u64])]) -> Vec<u8> {
    let mut out = b"HRMETA01".to_vec();
    let u64s = |out: &mut Vec<u8>, v: u64| out.extend_from_slice(&v.to_be_bytes());
    out.push(4);
    u64s(&mut out, 0);
    out.push(0);
    u64s(&mut out, blocks.len() as u64);
    for (id, chunks) in blocks {
        u64s(&mut out, *id);
        u64s(&mut out, chunks.len() as u64);
        for (offset, length) in *chunks {
            u64s(&mut out, *offset);
            u64s(&mut out, *length);
            out.extend_from_slice(&4u32.to_be_bytes());
            u64s(&mut out, 0);
        }
    }
    u64s(&mut out, txs.len() as u64);
    for (tx, container, ids) in txs {
        u64s(&mut out, *tx);
        u64s(&mut out, *container);
        u64s(&mut out, ids.len() as u64);
        for id in *ids {
            u64s(&mut out, *id);
        }
    }
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// Opens a replica whose database file holds `bytes`.
fn open_with(bytes: &[u8]) -> Result<DiskStore, StoreError> {
    let dir = tempfile::tempdir().unwrap();
    drop(DiskStore::open(dir.path(), CONTAINER, ContainerState::Closed).unwrap());
    std::fs::write(dir.path().join("metadata").join("container.db"), bytes).unwrap();
    DiskStore::open(dir.path(), CONTAINER, ContainerState::Closed)
}

fn refused(bytes: &[u8], why: &str) {
    match open_with(bytes) {
        Err(StoreError::CorruptMetadata { reason }) => {
            assert!(reason.contains(why), "{reason:?} does not say {why:?}");
        }
        other => panic!("expected corrupt metadata ({why}), got {other:?}"),
    }
}

#[test]
fn well_formed_hand_made_file_loads() {
    let store = open_with(&db_file(
        &[(1, &[(0, 8), (8, 8)]), (2, &[])],
        &[(3, CONTAINER.0, &[1])],
    ))
    .unwrap();
    assert_eq!(store.blocks().unwrap().len(), 2);
    assert_eq!(store.summary().unwrap().pending_transactions, 1);
}

/// Postmortem: two entries for block 1 collapsed into one on load, silently.
#[test]
fn block_listed_twice_is_refused() {
    refused(
        &db_file(&[(1, &[]), (1, &[(0, 8)])], &[]),
        "block 1 listed twice or out of order",
    );
}

#[test]
fn blocks_out_of_id_order_are_refused() {
    refused(
        &db_file(&[(2, &[]), (1, &[])], &[]),
        "block 1 listed twice or out of order",
    );
}

/// Postmortem: two transactions with one id kept the second list only.
#[test]
fn transaction_listed_twice_is_refused() {
    let c = CONTAINER.0;
    refused(
        &db_file(&[], &[(3, c, &[1]), (3, c, &[2])]),
        "transaction 3 listed twice or out of order",
    );
}

#[test]
fn transaction_of_another_container_is_refused() {
    refused(
        &db_file(&[], &[(3, CONTAINER.0 + 1, &[1])]),
        "belongs to container",
    );
}

#[test]
fn chunk_past_the_addressable_range_is_refused() {
    refused(
        &db_file(&[(1, &[(u64::MAX - 1, 8)])], &[]),
        "past the addressable range",
    );
}

#[test]
fn chunks_out_of_offset_order_are_refused() {
    refused(
        &db_file(&[(1, &[(8, 8), (0, 8)])], &[]),
        "chunk at 0 listed twice or out of order",
    );
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

/// A file with its content damaged at `at` (bytes replaced by `with`, or truncated) and its
/// CRC recomputed, so that the checks past the checksum are what decides.
fn damaged(mut content: Vec<u8>, at: usize, with: &[u8], truncate: bool) -> Vec<u8> {
    content.truncate(content.len() - 4);
    let at = at % content.len();
    if truncate {
        content.truncate(at);
    } else {
        for (offset, byte) in with.iter().enumerate() {
            if let Some(slot) = content.get_mut(at + offset) {
                *slot = *byte;
            }
        }
    }
    let crc = crc32c::crc32c(&content);
    content.extend_from_slice(&crc.to_be_bytes());
    content
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/disk_loader.txt",
        ))),
        ..ProptestConfig::default()
    })]

    /// Fuzzing the loader: any damage to a valid file, behind a valid CRC, loads or is a
    /// typed error; it never panics nor allocates past the file.
    #[test]
    fn damaged_database_file_never_panics(
        at in any::<usize>(),
        with in proptest::collection::vec(any::<u8>(), 1..9),
        truncate in any::<bool>(),
    ) {
        let c = CONTAINER.0;
        let valid = db_file(&[(1, &[(0, 8), (8, 8)]), (5, &[(0, 4)])], &[(2, c, &[1, 5]), (7, c, &[9])]);
        match open_with(&damaged(valid, at, &with, truncate)) {
            Ok(_) | Err(StoreError::CorruptMetadata { .. }) => {}
            Err(other) => prop_assert!(false, "unexpected error {other:?}"),
        }
    }
}
