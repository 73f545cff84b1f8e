//! Property tests of the container checksum tree (its root, merge, diff and tree file,
//! `ContainerMerkleTreeWriter` and `ContainerChecksumTreeManager`) and of a replica against
//! a reference model of its block, metadata and tree state (HDDS-16811).

use std::collections::BTreeSet;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use hadoop_ref::datanode::container::merkle::{
    self, ContainerChecksumInfo, ContainerMerkleTree, TreeDecodeError, diff,
};
use hadoop_ref::datanode::container::store::ChunkInfo;
use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::LocalId;
use hadoop_ref::sim::replica_node::{CONTAINER, ReplicaNode, transaction};

use crate::test_util::container::{checksum_info, replica};

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/container_model.txt",
        ))),
        ..ProptestConfig::default()
    }
}

/// One tree operation: live chunks of a block (unique offsets), or a deleted entry.
#[derive(Debug, Clone)]
enum Entry {
    Chunks(LocalId, Vec<(u64, Vec<u32>)>),
    Deleted(LocalId, u64),
}

fn entries() -> impl Strategy<Value = Vec<Entry>> {
    prop::collection::btree_map(
        0u64..40,
        prop_oneof![
            3 => prop::collection::btree_map(0u64..8, prop::collection::vec(any::<u32>(), 0..3), 0..4)
                .prop_map(|chunks| Some(chunks.into_iter().map(|(o, c)| (o * 16, c)).collect::<Vec<_>>())),
            1 => Just(None),
        ],
        0..12,
    )
    .prop_flat_map(|blocks| {
        let list: Vec<Entry> = blocks
            .into_iter()
            .map(|(id, chunks)| match chunks {
                Some(chunks) => Entry::Chunks(id, chunks),
                None => Entry::Deleted(id, u64::from((id as u32).wrapping_mul(2_654_435_761))),
            })
            .collect();
        Just(list).prop_shuffle()
    })
}

fn chunk(offset: u64, checksums: &[u32]) -> ChunkInfo {
    ChunkInfo {
        offset,
        length: 16,
        bytes_per_checksum: 4,
        checksums: checksums.to_vec(),
    }
}

/// Applies `entries`, each block's chunks one at a time in the order given.
fn build(entries: &[Entry], chunk_order_reversed: bool) -> ContainerMerkleTree {
    let mut tree = ContainerMerkleTree::new();
    for entry in entries {
        match entry {
            Entry::Chunks(id, chunks) => {
                tree.add_block(*id);
                let mut chunks = chunks.clone();
                if chunk_order_reversed {
                    chunks.reverse();
                }
                for (offset, checksums) in chunks {
                    tree.add_chunks(*id, true, &[chunk(offset, &checksums)]);
                }
            }
            Entry::Deleted(id, checksum) => tree.set_deleted_block(*id, *checksum),
        }
    }
    tree.compute_root();
    tree
}

/// What reconciliation does to the tree for a diff report, applied to the tree alone.
fn repair(local: &mut ContainerMerkleTree, report: &merkle::ContainerDiffReport) {
    for block in &report.missing_blocks {
        local.add_block(block.local_id);
        local.add_chunk_entries(block.local_id, block.chunks.values().copied());
    }
    for (id, chunks) in report.missing_chunks.iter().chain(&report.corrupt_chunks) {
        local.add_chunk_entries(*id, chunks.iter().copied());
    }
    for (id, checksum) in &report.diverged_deleted {
        local.set_deleted_block(*id, *checksum);
    }
    local.compute_root();
}

/// Two views of one set of blocks: each side holds a subset of every block's chunks, may
/// lack a block, or has it deleted (with a checksum of its own).
fn replica_pair() -> impl Strategy<Value = (ContainerMerkleTree, ContainerMerkleTree)> {
    prop::collection::btree_map(
        0u64..30,
        (
            prop::collection::btree_map(0u64..6, any::<u32>(), 1..4),
            0u8..6,
            0u8..6,
            any::<u32>(),
            any::<u32>(),
        ),
        0..10,
    )
    .prop_map(|blocks| {
        let mut a = ContainerMerkleTree::new();
        let mut b = ContainerMerkleTree::new();
        for (id, (chunks, how_a, how_b, del_a, del_b)) in blocks {
            let all: Vec<ChunkInfo> = chunks.iter().map(|(o, c)| chunk(o * 16, &[*c])).collect();
            for (tree, how, del) in [(&mut a, how_a, del_a), (&mut b, how_b, del_b)] {
                match how {
                    0 => {}
                    1 => tree.set_deleted_block(id, u64::from(del)),
                    2 => {
                        // A prefix of the chunks (as a lagging replica has).
                        tree.add_block(id);
                        tree.add_chunks(id, true, &all[..all.len().div_ceil(2)]);
                    }
                    _ => {
                        tree.add_block(id);
                        tree.add_chunks(id, true, &all);
                    }
                }
            }
        }
        a.compute_root();
        b.compute_root();
        (a, b)
    })
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn root_is_independent_of_insertion_order(list in entries()) {
        let forward = build(&list, false);
        let mut reversed_list = list.clone();
        reversed_list.reverse();
        let backward = build(&reversed_list, true);
        prop_assert_eq!(forward.data_checksum(), backward.data_checksum());
        prop_assert_eq!(forward, backward);
    }

    #[test]
    fn diff_then_repair_both_ways_makes_the_trees_equal((a, b) in replica_pair()) {
        let mut a = a;
        let mut b = b;
        let report = diff(&checksum_info(a.clone()), &checksum_info(b.clone()), false).unwrap();
        repair(&mut a, &report);
        let report = diff(&checksum_info(b.clone()), &checksum_info(a.clone()), false).unwrap();
        repair(&mut b, &report);
        // A third pass settles a deleted checksum the second pass raised.
        let report = diff(&checksum_info(a.clone()), &checksum_info(b.clone()), false).unwrap();
        repair(&mut a, &report);
        prop_assert_eq!(a.data_checksum(), b.data_checksum());
        prop_assert!(diff(&checksum_info(a.clone()), &checksum_info(b.clone()), false).unwrap().is_empty());
    }

    #[test]
    fn encode_decode_round_trip(list in entries(), with_root in any::<bool>()) {
        let mut tree = build(&list, false);
        if !with_root {
            tree.clear_root();
        }
        let original = checksum_info(tree);
        let decoded = merkle::decode(&merkle::encode(&original)).unwrap();
        prop_assert_eq!(decoded, original);
    }

    #[test]
    fn arbitrary_bytes_decode_to_an_error_never_a_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        prop_assert!(merkle::decode(&bytes).is_err());
    }

    #[test]
    fn a_damaged_tree_file_decodes_to_an_error(list in entries(), at in any::<usize>(), flip in 1u8..=255, cut in any::<bool>()) {
        let bytes = merkle::encode(&checksum_info(build(&list, false)));
        let mut damaged = bytes.clone();
        if cut {
            damaged.truncate(at % bytes.len());
        } else {
            let i = at % bytes.len();
            damaged[i] ^= flip;
        }
        prop_assert!(merkle::decode(&damaged).is_err());
    }
}

// ---------------------------------------------------------------------------------------
// Tree file parser behind a valid header and checksum
// ---------------------------------------------------------------------------------------

/// One field of a tree file body, biased towards values the parser gives meaning to
/// (flags 0 and 1, small counts, CRC-sized checksums) so that bodies get past the first
/// field more often than random bytes do.
#[derive(Debug, Clone)]
enum Field {
    Long(u64),
    Byte(u8),
}

fn field() -> impl Strategy<Value = Field> {
    prop_oneof![
        3 => (0u64..4).prop_map(Field::Long),
        2 => (0u64..=u64::from(u32::MAX)).prop_map(Field::Long),
        1 => any::<u64>().prop_map(Field::Long),
        3 => (0u8..2).prop_map(Field::Byte),
        1 => any::<u8>().prop_map(Field::Byte),
    ]
}

/// A tree file body: fields laid end to end, or a valid body with a few bytes rewritten,
/// cut or inserted.
fn body() -> impl Strategy<Value = Vec<u8>> {
    let fields = prop::collection::vec(field(), 0..40).prop_map(|fields| {
        let mut out = Vec::new();
        for f in fields {
            match f {
                Field::Long(v) => out.extend_from_slice(&v.to_be_bytes()),
                Field::Byte(b) => out.push(b),
            }
        }
        out
    });
    let mutated = (
        entries(),
        any::<bool>(),
        prop::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..4),
    )
        .prop_map(|(list, with_root, edits)| {
            let mut tree = build(&list, false);
            if !with_root {
                tree.clear_root();
            }
            let encoded = merkle::encode(&checksum_info(tree));
            // Between the magic and the trailing CRC.
            let mut out = encoded[8..encoded.len() - 4].to_vec();
            for (at, byte, kind) in edits {
                let i = at % (out.len() + 1);
                match kind {
                    0 if i < out.len() => out[i] = byte,
                    1 => out.truncate(i),
                    _ => out.insert(i, byte),
                }
            }
            out
        });
    prop_oneof![fields, mutated]
}

/// `body` behind the tree file's magic and followed by a matching CRC32C.
fn framed(body: &[u8]) -> Vec<u8> {
    let mut out = merkle::encode(&ContainerChecksumInfo::empty(CONTAINER))[..8].to_vec();
    out.extend_from_slice(body);
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

proptest! {
    #![proptest_config(config(2048))]

    /// Past the magic and the file checksum, any body decodes to a tree or a typed error,
    /// never a panic; a decoded tree encodes and decodes to itself.
    #[test]
    fn any_body_behind_a_valid_frame_decodes_to_a_tree_or_a_typed_error(body in body()) {
        let bytes = framed(&body);
        match merkle::decode(&bytes) {
            Ok(decoded) => {
                let again = merkle::decode(&merkle::encode(&decoded));
                prop_assert_eq!(again, Ok(decoded));
            }
            Err(error) => prop_assert!(
                !matches!(
                    error,
                    TreeDecodeError::BadMagic | TreeDecodeError::FileChecksumMismatch { .. }
                ),
                "the frame is valid, the parser must judge the body: {}",
                error
            ),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The replica against a reference model
// ---------------------------------------------------------------------------------------

const UNIVERSE: u64 = 6;

#[derive(Debug, Clone)]
enum Op {
    /// Store a delete transaction of these blocks.
    StoreTx(Vec<LocalId>),
    /// One run of the block deleting service.
    DeletePass,
    /// The peer executes a deletion of these blocks.
    PeerDelete(Vec<LocalId>),
    /// Reconcile with the peer (and scan).
    Reconcile,
    /// An on-demand scan.
    Scan,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let ids = || prop::collection::vec(1..=UNIVERSE, 1..3);
    prop::collection::vec(
        prop_oneof![
            3 => ids().prop_map(Op::StoreTx),
            3 => Just(Op::DeletePass),
            2 => ids().prop_map(Op::PeerDelete),
            3 => Just(Op::Reconcile),
            1 => Just(Op::Scan),
        ],
        1..16,
    )
}

/// What a patched replica must hold: the blocks with metadata (each with its file), the
/// blocks its tree marks deleted, the transactions pending. `apply_peer_deletions` says
/// whether it runs HDDS-11765 (the hardened code) or not (the seed's patch).
#[derive(Debug, Default)]
struct Model {
    apply_peer_deletions: bool,
    live: BTreeSet<LocalId>,
    deleted: BTreeSet<LocalId>,
    pending: Vec<Vec<LocalId>>,
    peer_deleted: BTreeSet<LocalId>,
}

impl Model {
    fn apply(&mut self, op: &Op) {
        match op {
            Op::StoreTx(ids) => self.pending.push(ids.clone()),
            Op::DeletePass => {
                for ids in self.pending.drain(..) {
                    for id in ids {
                        self.live.remove(&id);
                        self.deleted.insert(id);
                    }
                }
            }
            Op::PeerDelete(ids) => self.peer_deleted.extend(ids),
            Op::Reconcile => {
                // The peer's deletions are adopted, and applied to a block live here only
                // with HDDS-11765 (the seed's patch leaves a live block whose checksum
                // equals the peer's deleted entry); its live blocks are copied unless
                // deleted here.
                for &id in &self.peer_deleted {
                    if self.apply_peer_deletions || !self.live.contains(&id) {
                        self.deleted.insert(id);
                    }
                }
                for id in 1..=UNIVERSE {
                    if !self.peer_deleted.contains(&id) && !self.deleted.contains(&id) {
                        self.live.insert(id);
                    }
                }
                for id in &self.deleted {
                    self.live.remove(id);
                }
            }
            Op::Scan => {}
        }
    }
}

fn observed(node: &ReplicaNode) -> (BTreeSet<LocalId>, BTreeSet<LocalId>, BTreeSet<LocalId>, u64) {
    let metadata: BTreeSet<LocalId> = node
        .store
        .blocks()
        .unwrap()
        .iter()
        .map(|b| b.local_id)
        .collect();
    let files: BTreeSet<LocalId> = node.store.block_files().unwrap().into_iter().collect();
    let tree = node.container().unwrap().checksums().read().unwrap().tree;
    let deleted: BTreeSet<LocalId> = tree
        .blocks()
        .iter()
        .filter(|(_, b)| b.deleted)
        .map(|(id, _)| *id)
        .collect();
    (metadata, files, deleted, node.pending_transactions())
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn patched_replica_conforms_to_the_reference_model(hardened in any::<bool>(), initial in prop::collection::btree_set(1..=UNIVERSE, 0..=UNIVERSE as usize), ops in ops()) {
        let behavior = if hardened { ContainerBehavior::Hardened } else { ContainerBehavior::SeedPatch };
        let config = ContainerConfig::new(behavior);
        let qc = ContainerState::QuasiClosed;
        let local: Vec<(LocalId, usize)> = initial.iter().map(|&b| (b, 2)).collect();
        let all: Vec<(LocalId, usize)> = (1..=UNIVERSE).map(|b| (b, 2)).collect();
        let node = replica(1, config, &local);
        let peer = replica(2, config, &all);
        let mut model = Model {
            apply_peer_deletions: config.apply_peer_deletions,
            live: initial.clone(),
            ..Model::default()
        };
        let mut next_tx = 1u64;
        let mut peer_tx = 1_000u64;
        for op in &ops {
            match op {
                Op::StoreTx(ids) => {
                    node.store_transactions(&[transaction(next_tx, ids)]).unwrap();
                    next_tx += 1;
                }
                Op::DeletePass => node.delete_blocks().unwrap(),
                Op::PeerDelete(ids) => {
                    peer.store_transactions(&[transaction(peer_tx, ids)]).unwrap();
                    peer_tx += 1;
                    peer.delete_blocks().unwrap();
                }
                Op::Reconcile => {
                    let scan = node.reconcile(&[&peer]).unwrap();
                    prop_assert!(scan.as_ref().is_none_or(|s| s.errors.is_empty()), "{:?}", scan);
                }
                Op::Scan => {
                    let scan = node.handler.scan(CONTAINER).unwrap();
                    prop_assert!(scan.as_ref().is_none_or(|s| s.errors.is_empty()), "{:?}", scan);
                }
            }
            model.apply(op);
            let (metadata, files, deleted, pending) = observed(&node);
            prop_assert_eq!(&metadata, &model.live, "metadata after {:?}", op);
            prop_assert_eq!(&files, &model.live, "files after {:?}", op);
            prop_assert_eq!(&deleted, &model.deleted, "deleted entries after {:?}", op);
            prop_assert_eq!(pending, model.pending.len() as u64, "pending after {:?}", op);
            let views = node.container().unwrap().checksum_views().unwrap();
            prop_assert!(views.agree(), "{:?} after {:?}", views, op);
            prop_assert_eq!(node.container().unwrap().state(), qc);
        }
    }
}
