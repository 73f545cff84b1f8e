//! Edits that do not fit the namespace are typed `ReplayError`s, never a panic, and a
//! refused edit changes nothing: directed cases found by an audit, and a property over
//! arbitrary edit batches on an active NameNode and a standby replaying its log.

use std::collections::BTreeSet;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use hadoop_ref::namenode::edit_log::{EditLogError, NameNodeId, SharedEditLog};
use hadoop_ref::namenode::namesystem::{
    EditOp, FileId, NamenodeConfig, Namesystem, NamesystemBehavior, NamesystemView, ReplayError,
};
use hadoop_ref::namenode::{Block, BlockId};

use crate::test_util::standby::{FILE, block, standby, storage};

fn active() -> Namesystem {
    Namesystem::active(NamenodeConfig::default(), 1)
}

fn created(ns: &Namesystem) {
    let create = [EditOp::AddFile {
        file: FILE,
        replication: 1,
    }];
    assert_eq!(ns.apply_edits(&create), Ok(1));
}

/// The namespace part of a view: what a refused edit must leave as it was.
fn namespace(view: &NamesystemView) -> (String, String) {
    (format!("{:?}", view.files), format!("{:?}", view.blocks))
}

/// Postmortem: `OP_UPDATE_BLOCKS` listing block 5 twice was applied (one block entry, the
/// file listing it twice), and a later edit of the file then indexed a removed entry and
/// panicked.
#[test]
fn block_list_naming_a_block_twice_is_refused() {
    let ns = active();
    created(&ns);
    let before = namespace(&ns.view());
    let twice = EditOp::UpdateBlocks {
        file: FILE,
        blocks: vec![block(BlockId(5), 1, 0), block(BlockId(5), 1, 0)],
        pipeline: Vec::new(),
    };
    assert_eq!(
        ns.apply_edits(&[twice]),
        Err((
            0,
            ReplayError::DuplicateBlock {
                file: FILE,
                block: BlockId(5)
            }
        ))
    );
    assert_eq!(
        namespace(&ns.view()),
        before,
        "a refused edit changes nothing"
    );
    let once = EditOp::UpdateBlocks {
        file: FILE,
        blocks: vec![block(BlockId(5), 1, 0)],
        pipeline: Vec::new(),
    };
    assert_eq!(
        ns.apply_edits(&[once]),
        Ok(1),
        "the file is as before the refused edit"
    );
}

/// Postmortem: `OP_ADD_BLOCK` whose penultimate block is not the file's last one is a
/// typed mismatch, and nothing moves.
#[test]
fn add_block_with_another_penultimate_block_is_refused() {
    let ns = active();
    created(&ns);
    let first = EditOp::AddBlock {
        file: FILE,
        penultimate: None,
        last: block(BlockId(5), 1, 0),
    };
    assert_eq!(ns.apply_edits(&[first]), Ok(1));
    let before = namespace(&ns.view());
    let wrong = EditOp::AddBlock {
        file: FILE,
        penultimate: Some(block(BlockId(6), 1, 10)),
        last: block(BlockId(7), 1, 0),
    };
    let refused = ns.apply_edits(&[wrong]);
    assert!(
        matches!(refused, Err((0, ReplayError::BlockIdMismatch { .. }))),
        "{refused:?}"
    );
    assert_eq!(namespace(&ns.view()), before);
}

/// A batch is applied whole or not at all: refused at its second edit, the first is
/// neither applied nor logged, and a standby replaying the log reaches the same namespace.
#[test]
fn refused_batch_leaves_active_and_log_in_agreement() {
    let log = SharedEditLog::new(64);
    let writer = NameNodeId(0);
    log.fence(writer);
    let ns = active();
    let batch = [
        EditOp::AddFile {
            file: FILE,
            replication: 1,
        },
        EditOp::AddFile {
            file: FILE,
            replication: 1,
        },
    ];
    let result = log.log_edits(writer, &batch, |ops| ns.apply_edits(ops));
    assert!(
        matches!(result, Err(EditLogError::Replay { index: 1, .. })),
        "{result:?}"
    );
    assert_eq!(log.end(), 0);
    assert!(ns.view().files.is_empty(), "the first edit was not applied");
    let replica = standby(NamesystemBehavior::Trunk, 1);
    assert_eq!(replica.apply_edits(&log.read_from(0, 64)), Ok(0));
    assert_eq!(namespace(&replica.view()), namespace(&ns.view()));
}

/// An edit over a small space of files and blocks, so that edits collide.
fn edit() -> impl Strategy<Value = EditOp> {
    let file = (0..3u64).prop_map(FileId);
    let any_block = (0..6i64, 1..4i64, 0..3u64).prop_map(|(id, gs, length)| Block {
        id: BlockId(id),
        gs,
        length,
    });
    prop_oneof![
        (1..4i64).prop_map(EditOp::SetGenstamp),
        (file.clone(), 0..4usize)
            .prop_map(|(file, replication)| EditOp::AddFile { file, replication }),
        (
            file.clone(),
            proptest::option::of(any_block.clone()),
            any_block.clone()
        )
            .prop_map(|(file, penultimate, last)| EditOp::AddBlock {
                file,
                penultimate,
                last
            }),
        (
            file.clone(),
            proptest::collection::vec(any_block.clone(), 0..4),
            proptest::collection::vec((1..4u64).prop_map(storage), 0..3)
        )
            .prop_map(|(file, blocks, pipeline)| EditOp::UpdateBlocks {
                file,
                blocks,
                pipeline
            }),
        (file.clone(), proptest::collection::vec(any_block, 0..4))
            .prop_map(|(file, blocks)| EditOp::Close { file, blocks }),
        file.clone().prop_map(|file| EditOp::Append { file }),
        (file.clone(), 0..4usize)
            .prop_map(|(file, replication)| EditOp::SetReplication { file, replication }),
        file.prop_map(|file| EditOp::Delete { file }),
    ]
}

/// Every file's blocks have an entry, belong to that file, and no block is listed twice.
fn namespace_is_consistent(view: &NamesystemView) -> Result<(), String> {
    let mut listed = BTreeSet::new();
    for (file, inode) in &view.files {
        for id in &inode.blocks {
            if !listed.insert(*id) {
                return Err(format!("{id:?} listed twice ({file:?})"));
            }
            match view.blocks.get(id) {
                Some(stored) if stored.file == *file => {}
                other => return Err(format!("{file:?} lists {id:?}, entry {other:?}")),
            }
        }
    }
    if listed.len() != view.blocks.len() {
        return Err(format!(
            "{} block entries, {} listed",
            view.blocks.len(),
            listed.len()
        ));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/edit_validation.txt",
        ))),
        ..ProptestConfig::default()
    })]

    /// Fuzzing the edit path: whatever the batches, the active applies each edit whole or
    /// refuses it with a typed error and no change, its namespace stays consistent, and a
    /// standby replaying the log it wrote reaches the same namespace.
    #[test]
    fn arbitrary_edit_batches_never_panic_nor_diverge(
        batches in proptest::collection::vec(proptest::collection::vec(edit(), 1..5), 1..12)
    ) {
        let log = SharedEditLog::new(1024);
        let writer = NameNodeId(0);
        log.fence(writer);
        let ns = active();
        for batch in &batches {
            let before = ns.view();
            let result = log.log_edits(writer, batch, |ops| ns.apply_edits(ops));
            let after = ns.view();
            match result {
                // As `FSNamesystem.completeFile`: a refused close on its own has
                // committed its blocks (the client retries), with no edit logged.
                Err(EditLogError::Replay { error: ReplayError::FileNotComplete { .. }, .. })
                    if batch.len() == 1 =>
                {
                    prop_assert_eq!(namespace(&after).0, namespace(&before).0);
                }
                // A batch is applied whole or not at all.
                Err(EditLogError::Replay { .. }) => {
                    prop_assert_eq!(&after, &before);
                }
                _ => {}
            }
            prop_assert_eq!(namespace_is_consistent(&after), Ok(()));
        }
        let replica = standby(NamesystemBehavior::Trunk, 1);
        let logged = log.read_from(0, 1024);
        prop_assert_eq!(replica.apply_edits(&logged), Ok(logged.len()));
        prop_assert_eq!(namespace(&replica.view()).0, namespace(&ns.view()).0);
    }
}

/// Postmortem (found by `arbitrary_edit_batches_never_panic_nor_diverge`, twice): an
/// `OP_CLOSE` listing a block the file did not have appended it under construction, and
/// one listing fewer blocks removed the others, then refused the close; the active kept
/// the change and logged nothing, so a standby replaying the log no longer matched it.
#[test]
fn close_changing_the_block_list_is_refused_before_it_changes_anything() {
    let ns = active();
    created(&ns);
    let before = namespace(&ns.view());
    let close = EditOp::Close {
        file: FILE,
        blocks: vec![block(BlockId(5), 1, 10)],
    };
    assert_eq!(
        ns.apply_edits(&[close]),
        Err((
            0,
            ReplayError::CloseChangesBlockList {
                file: FILE,
                stored: 0,
                edit: 1
            }
        ))
    );
    assert_eq!(namespace(&ns.view()), before);
    let two = EditOp::UpdateBlocks {
        file: FILE,
        blocks: vec![block(BlockId(4), 1, 0), block(BlockId(5), 1, 0)],
        pipeline: Vec::new(),
    };
    assert_eq!(ns.apply_edits(&[two]), Ok(1));
    let before = namespace(&ns.view());
    let dropping = EditOp::Close {
        file: FILE,
        blocks: vec![block(BlockId(4), 1, 0)],
    };
    assert!(matches!(
        ns.apply_edits(&[dropping]),
        Err((0, ReplayError::CloseChangesBlockList { .. }))
    ));
    assert_eq!(namespace(&ns.view()), before);
}
