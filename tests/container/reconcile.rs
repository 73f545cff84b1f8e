//! Reconciliation of a replica with its peers and the scan that follows it (HDDS-16811,
//! HDDS-11765): repairs, a peer's failures mid-block, a peer's deletions, the generation
//! check (each addition of the hardened code with its switch on and off), and the
//! scanner's failure kinds.

use hadoop_ref::datanode::container::reconcile::BlockRepair;
use hadoop_ref::datanode::container::scanner::ScanFailure;
use hadoop_ref::datanode::container::store::{ContainerStore, MemoryStore};
use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig, ContainerError};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::DatanodeId;
use hadoop_ref::scenarios::container::{BLOCK_X, no_metadata_without_file};
use hadoop_ref::sim::faulty_store::StoreOp;
use hadoop_ref::sim::peers::{PeerFailure, ScriptedPeer};
use hadoop_ref::sim::replica_node::{CONTAINER, ReplicaNode, block_data, chunk_bytes, transaction};
use hadoop_ref::sync::Arc;

use crate::test_util::container::{faulty_node, node, replica};

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
    for behavior in ContainerBehavior::PATCHED {
        let dn1 = node(1, behavior, &[(1, 2)]);
        let dn2 = node(2, behavior, &[(1, 2)]);
        dn1.memory().unwrap().corrupt_block_file(1, 8, b"??");
        let scan = dn1.handler.scan(CONTAINER).unwrap().unwrap();
        assert!(scan.has(ScanFailure::CorruptChunk), "{behavior:?}");
        assert_eq!(dn1.container().unwrap().state(), ContainerState::Unhealthy);
        let scan = dn1.reconcile(&[&dn2]).unwrap().unwrap();
        assert!(scan.errors.is_empty(), "{behavior:?}: {scan:?}");
        assert_eq!(
            dn1.store.read_block(1, 8, 8).unwrap(),
            Some(chunk_bytes(1, 1))
        );
    }
}

/// `fail_incomplete_blocks`: the hardened code fails a block whose peer broke off
/// mid-block and removes the chunk it pulled; the seed's patch (as the legacy code)
/// commits the chunk it pulled, with its file.
#[test]
fn a_peer_error_mid_block_fails_the_block_whole_only_when_hardened() {
    for behavior in ContainerBehavior::ALL {
        let dn1 = node(1, behavior, &[]);
        let dn2 = node(2, behavior, &[(BLOCK_X, 3)]);
        let peer = ScriptedPeer::failing(dn2.peer(), 1, PeerFailure::Once);
        let report = dn1
            .handler
            .reconcile_without_scan(CONTAINER, &[peer])
            .unwrap();
        let outcome = &report.rounds[0].blocks[&BLOCK_X];
        if behavior == ContainerBehavior::Hardened {
            assert!(matches!(
                outcome,
                BlockRepair::Failed(ContainerError::Peer(_))
            ));
            assert!(!dn1.has_metadata(BLOCK_X), "{behavior:?}");
            assert!(!dn1.has_file(BLOCK_X), "no stray chunk");
        } else {
            assert_eq!(outcome, &BlockRepair::Partial { chunks: 1 }, "{behavior:?}");
            assert_eq!(
                dn1.store.get_block(BLOCK_X).unwrap(),
                Some(block_data(BLOCK_X, 1)),
                "{behavior:?}"
            );
            no_metadata_without_file(&dn1).unwrap();
        }
    }
}

/// `fail_incomplete_blocks` on a short read: the hardened code cuts the pulled chunk off
/// and keeps the block as it was; the seed's patch commits the chunks it has.
#[test]
fn a_short_read_from_the_peer_fails_the_block_whole_only_when_hardened() {
    for behavior in ContainerBehavior::PATCHED {
        let dn1 = node(1, behavior, &[(BLOCK_X, 1)]);
        let dn2 = node(2, behavior, &[(BLOCK_X, 3)]);
        // The peer's file ends inside X's third chunk.
        dn2.memory()
            .unwrap()
            .truncate_block_file(BLOCK_X, 20)
            .unwrap();
        let report = dn1
            .handler
            .reconcile_without_scan(CONTAINER, &[dn2.peer()])
            .unwrap();
        let outcome = &report.rounds[0].blocks[&BLOCK_X];
        let (chunks, file_len) = if behavior == ContainerBehavior::Hardened {
            assert!(matches!(
                outcome,
                BlockRepair::Failed(ContainerError::ShortRead {
                    expected: 8,
                    got: 4,
                    ..
                })
            ));
            // X keeps its first chunk and nothing else: the pulled second chunk was removed.
            (1, 8)
        } else {
            assert_eq!(outcome, &BlockRepair::Partial { chunks: 1 });
            (2, 16)
        };
        assert_eq!(
            dn1.store.get_block(BLOCK_X).unwrap(),
            Some(block_data(BLOCK_X, chunks)),
            "{behavior:?}"
        );
        assert_eq!(
            dn1.store.block_file_len(BLOCK_X).unwrap(),
            Some(file_len),
            "{behavior:?}"
        );
    }
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
        !node(2, ContainerBehavior::Hardened, &[(1, 1)])
            .container()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_deletion_seen_on_the_peer_is_adopted_instead_of_copied() {
    for behavior in ContainerBehavior::PATCHED {
        let dn1 = node(1, behavior, &[]);
        let dn2 = node(2, behavior, &[(BLOCK_X, 2)]);
        dn2.store_transactions(&[transaction(1, &[BLOCK_X])])
            .unwrap();
        dn2.delete_blocks().unwrap();
        let report = dn1
            .handler
            .reconcile_without_scan(CONTAINER, &[dn2.peer()])
            .unwrap();
        assert!(report.rounds[0].blocks.is_empty(), "{behavior:?}");
        assert_eq!(report.rounds[0].adopted_deleted, vec![BLOCK_X]);
        assert_eq!(dn1.tree_entry_deleted(BLOCK_X).unwrap(), Some(true));
    }
}

#[test]
fn a_restored_block_is_removed_when_peer_deletions_are_applied() {
    // On: the hardened code (HDDS-11765). Off: the seed's patch, which leaves it.
    for (apply, removed) in [(true, true), (false, false)] {
        let mut config = ContainerConfig::new(ContainerBehavior::Hardened);
        config.apply_peer_deletions = apply;
        // dn1 holds X although its deletion was executed elsewhere (restored by an
        // earlier, unpatched reconciliation).
        let dn1 = replica(1, config, &[(BLOCK_X, 2)]);
        let dn2 = replica(2, config, &[(BLOCK_X, 2)]);
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
    // dn1 holds only X although its deletion was executed elsewhere, and SCM deletes the
    // container only once every replica reports empty.
    let dn1 = node(1, ContainerBehavior::Hardened, &[(BLOCK_X, 2)]);
    let dn2 = node(2, ContainerBehavior::Hardened, &[(BLOCK_X, 2)]);
    dn2.store_transactions(&[transaction(1, &[BLOCK_X])])
        .unwrap();
    dn2.delete_blocks().unwrap();
    assert!(dn2.container().unwrap().is_empty());
    assert!(!dn1.container().unwrap().is_empty());
    let report = dn1
        .handler
        .reconcile_without_scan(CONTAINER, &[dn2.peer()])
        .unwrap();
    assert_eq!(report.rounds[0].applied_peer_deletions, vec![BLOCK_X]);
    assert!(dn1.container().unwrap().is_empty());
}

/// `tree_generation_check`: on, an unchanged tree is not read again, and a tree write
/// makes the next check read it; off (the seed's patch), every check reads the file.
#[test]
fn the_generation_check_skips_rereading_an_unchanged_tree() {
    for check in [true, false] {
        let config = ContainerConfig {
            tree_generation_check: check,
            ..ContainerConfig::new(ContainerBehavior::Hardened)
        };
        let dn = replica(1, config, &[(1, 1)]);
        let c = dn.container().unwrap();
        let first = c.checksums().read_latest().unwrap();
        let second = c.checksums().read_latest().unwrap();
        assert_eq!(Arc::ptr_eq(&first, &second), check, "check {check}");
        let generation = c.checksums().generation();
        dn.store_transactions(&[transaction(1, &[1])]).unwrap();
        dn.delete_blocks().unwrap();
        assert!(c.checksums().generation() > generation);
        assert!(c.tree_marks_deleted(1).unwrap(), "check {check}");
    }
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
        let dn = node(1, ContainerBehavior::Hardened, &[(1, 2), (2, 1)]);
        damage(dn.memory().unwrap());
        let report = dn.handler.scan(CONTAINER).unwrap().unwrap();
        assert!(report.has(kind), "{kind:?}: {report:?}");
        assert!(report.marked_unhealthy);
        assert_eq!(dn.container().unwrap().state(), ContainerState::Unhealthy);
    }
}

#[test]
fn a_healthy_scan_keeps_the_replica_and_the_checksum() {
    let dn = node(1, ContainerBehavior::Hardened, &[(1, 2), (2, 1)]);
    let before = dn.container().unwrap().data_checksum();
    let report = dn.handler.scan(CONTAINER).unwrap().unwrap();
    assert!(report.errors.is_empty() && report.data_scanned);
    assert_eq!(dn.container().unwrap().data_checksum(), before);
    assert_eq!(dn.container().unwrap().state(), ContainerState::QuasiClosed);
}

/// The hardened commit requires the block file to hold every byte pulled for it: a file
/// that exists but is shorter than its chunks (cut between the writes and the commit)
/// fails the block whole, where committing would name bytes the file does not have.
#[test]
fn commit_refuses_a_block_whose_file_is_shorter_than_its_pulled_chunks() {
    let (memory, faulty, dn1) = faulty_node(ContainerBehavior::Hardened, &[]);
    let dn2 = node(2, ContainerBehavior::Hardened, &[(BLOCK_X, 2)]);
    faulty.after_once(StoreOp::FinishWrite, move || {
        memory
            .truncate_block_file(BLOCK_X, 1)
            .expect("the memory store truncates");
    });
    let (result, _scan) = dn1.handler.reconcile_with(CONTAINER, &[dn2.peer()]);
    let outcome = result.unwrap().rounds[0].blocks[&BLOCK_X].clone();
    assert!(
        matches!(
            outcome,
            BlockRepair::Failed(ContainerError::BlockFileLostDuringRepair { found: Some(1), .. })
        ),
        "{outcome:?}"
    );
    assert!(
        !dn1.has_metadata(BLOCK_X),
        "nothing committed for the block"
    );
}
