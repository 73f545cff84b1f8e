//! The container checksum tree (HDDS-16811): Ozone's checksums, deletion records, the
//! merge of a tree write, the diff against a peer's tree, and the tree file.

use hadoop_ref::datanode::container::merkle::{
    self, ContainerChecksumInfo, ContainerMerkleTree, TreeDecodeError, block_checksum, diff,
};
use hadoop_ref::datanode::container::store::ChunkInfo;
use hadoop_ref::datanode::container::{ContainerBehavior, ContainerError};
use hadoop_ref::hdds::ids::{ContainerId, LocalId};
use hadoop_ref::sim::replica_node::{CONTAINER, block_data};

use crate::test_util::container::{checksum_info, node};

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
    let report = diff(&checksum_info(local), &checksum_info(peer), false).unwrap();
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
        diff(
            &checksum_info(local.clone()),
            &checksum_info(peer.clone()),
            false
        )
        .unwrap()
        .is_empty()
    );
    let report = diff(&checksum_info(local), &checksum_info(peer), true).unwrap();
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
    let original = checksum_info(tree);
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
    let dn = node(1, ContainerBehavior::Hardened, &[(1, 1)]);
    dn.memory()
        .unwrap()
        .overwrite_tree_file(Some(b"not a tree".to_vec()));
    let err = dn.container().unwrap().checksums().read().unwrap_err();
    assert!(
        matches!(err, ContainerError::MalformedTreeFile { .. }),
        "{err}"
    );
}

mod fuzz {
    //! Fuzzing the tree-file decoder: arbitrary bytes, and valid files with damage, decode
    //! or are a typed error; a decoded tree encodes back to the same bytes.

    use proptest::prelude::*;
    use proptest::test_runner::FileFailurePersistence;

    use hadoop_ref::datanode::container::merkle::{
        self, ContainerChecksumInfo, ContainerMerkleTree,
    };
    use hadoop_ref::datanode::container::store::{BlockData, ChunkInfo};
    use hadoop_ref::sim::replica_node::CONTAINER;

    fn valid_file() -> Vec<u8> {
        let blocks: Vec<BlockData> = (1..4u64)
            .map(|id| {
                BlockData::new(
                    id,
                    [
                        ChunkInfo::for_data(0, &[id as u8; 8], 4),
                        ChunkInfo::for_data(8, &[7; 4], 4),
                    ],
                )
            })
            .collect();
        let mut tree = ContainerMerkleTree::from_metadata(&blocks);
        tree.compute_root();
        merkle::encode(&ContainerChecksumInfo {
            container: CONTAINER,
            tree,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 512,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
                "proptest-regressions/tree_decoder.txt",
            ))),
            ..ProptestConfig::default()
        })]

        #[test]
        fn arbitrary_bytes_never_panic_the_tree_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            if let Ok(info) = merkle::decode(&bytes) {
                prop_assert_eq!(merkle::decode(&merkle::encode(&info)), Ok(info));
            }
        }

        #[test]
        fn damaged_tree_files_never_panic_the_decoder(
            at in any::<usize>(),
            with in proptest::collection::vec(any::<u8>(), 1..9),
            truncate in any::<bool>(),
        ) {
            let bytes = crate::test_util::damaged(valid_file(), at, &with, truncate);
            if let Ok(info) = merkle::decode(&bytes) {
                prop_assert_eq!(merkle::decode(&merkle::encode(&info)), Ok(info));
            }
        }
    }
}
