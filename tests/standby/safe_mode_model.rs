//! Property (HDFS-2742, safe-mode recount): on a standby in safe mode, the incremental
//! safe-mode counters (`blockTotal`, `blockSafe`) always equal a recount over the
//! namespace, whatever the interleaving of replayed edit batches and datanode reports.
//! The edits are those an active would log (files created, blocks added, recovered to a
//! new GS, closed, appended to, deleted, replication changed); the reports are what
//! datanodes would send, now or stale, in the active's timeline, so many arrive before
//! their edits.

use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use hadoop_ref::namenode::namesystem::{
    EditOp, FileId, NamenodeConfig, Namesystem, NamesystemBehavior,
};
use hadoop_ref::namenode::pending_messages::ReportedState;
use hadoop_ref::namenode::{Block, BlockId, GenerationStamp, ReplicaState};
use hadoop_ref::scenarios::standby::safe_mode_matches_recount;

use crate::test_util::standby::storage;

const LENGTH: u64 = 512;

/// One step of the generated history; indices are taken modulo what exists.
#[derive(Debug, Clone)]
enum Step {
    Create {
        replication: usize,
    },
    AddBlock {
        file: usize,
    },
    Recover {
        file: usize,
    },
    Close {
        file: usize,
    },
    Append {
        file: usize,
    },
    SetReplication {
        file: usize,
        replication: usize,
    },
    Delete {
        file: usize,
    },
    /// The standby replays what the active logged so far.
    Tail,
    Incremental {
        dn: u64,
        block: usize,
        kind: u8,
        stale: bool,
    },
    FullReport {
        dn: u64,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1..=3usize).prop_map(|replication| Step::Create { replication }),
        any::<usize>().prop_map(|file| Step::AddBlock { file }),
        any::<usize>().prop_map(|file| Step::Recover { file }),
        any::<usize>().prop_map(|file| Step::Close { file }),
        any::<usize>().prop_map(|file| Step::Append { file }),
        (any::<usize>(), 1..=3usize)
            .prop_map(|(file, replication)| Step::SetReplication { file, replication }),
        any::<usize>().prop_map(|file| Step::Delete { file }),
        Just(Step::Tail),
        Just(Step::Tail),
        (1..=3u64, any::<usize>(), 0..3u8, any::<bool>()).prop_map(|(dn, block, kind, stale)| {
            Step::Incremental {
                dn,
                block,
                kind,
                stale,
            }
        }),
        (1..=3u64).prop_map(|dn| Step::FullReport { dn }),
    ]
}

/// The active's side: its namespace, the edits not yet replayed by the standby, and each
/// datanode's replicas.
#[derive(Default)]
struct Active {
    gs: i64,
    next_block: i64,
    next_file: u64,
    files: Vec<(FileId, Vec<Block>, bool)>,
    unreplayed: Vec<EditOp>,
    replicas: BTreeMap<(u64, i64), (Block, ReplicaState)>,
}

impl Active {
    fn file(&mut self, index: usize) -> Option<&mut (FileId, Vec<Block>, bool)> {
        let len = self.files.len();
        (len > 0).then(|| &mut self.files[index % len])
    }

    fn all_blocks(&self) -> Vec<Block> {
        self.files
            .iter()
            .flat_map(|(_, blocks, _)| blocks.iter().copied())
            .collect()
    }

    /// Applies `step`'s edits to the active's model; a step that does not fit its state
    /// is skipped, as the active would refuse it.
    fn edit(&mut self, step: &Step) {
        self.gs += 1;
        let gs = self.gs;
        match *step {
            Step::Create { replication } => {
                self.next_file += 1;
                let file = FileId(self.next_file);
                self.files.push((file, Vec::new(), true));
                self.unreplayed.push(EditOp::AddFile { file, replication });
            }
            Step::AddBlock { file } => self.add_block(file, gs),
            Step::Recover { file } | Step::Append { file } | Step::Close { file } => {
                self.change_last_block(step, file, gs);
            }
            Step::SetReplication { file, replication } => {
                if let Some((file, _, _)) = self.file(file).cloned() {
                    self.unreplayed
                        .push(EditOp::SetReplication { file, replication });
                }
            }
            Step::Delete { file } => {
                if let Some((file, _, _)) = self.file(file).cloned() {
                    self.files.retain(|f| f.0 != file);
                    self.unreplayed.push(EditOp::Delete { file });
                }
            }
            _ => {}
        }
    }

    /// A new last block of an open file, at `gs`; the previous last block is finished.
    fn add_block(&mut self, file: usize, gs: GenerationStamp) {
        self.next_block += 1;
        let id = BlockId(self.next_block);
        let Some((file, blocks, true)) = self.file(file).cloned() else {
            return;
        };
        let penultimate = blocks.last().map(|b| Block {
            length: LENGTH,
            ..*b
        });
        let last = Block { id, gs, length: 0 };
        if let Some(entry) = self.files.iter_mut().find(|f| f.0 == file) {
            if let Some(p) = entry.1.last_mut() {
                p.length = LENGTH;
            }
            entry.1.push(last);
        }
        self.unreplayed.push(EditOp::SetGenstamp(gs));
        self.unreplayed.push(EditOp::AddBlock {
            file,
            penultimate,
            last,
        });
    }

    /// A pipeline recovery (new GS) or a close of an open file, or an append to a closed
    /// one: the step on the file's last block.
    fn change_last_block(&mut self, step: &Step, file: usize, gs: GenerationStamp) {
        let Some((file_id, mut blocks, open)) = self.file(file).cloned() else {
            return;
        };
        if blocks.is_empty() {
            return;
        }
        match step {
            Step::Recover { .. } if open => {
                if let Some(last) = blocks.last_mut() {
                    last.gs = gs;
                }
                self.unreplayed.push(EditOp::SetGenstamp(gs));
                // Replay never reads the pipeline (`OP_UPDATE_BLOCKS` has none).
                self.unreplayed.push(EditOp::UpdateBlocks {
                    file: file_id,
                    blocks: blocks.clone(),
                    pipeline: Vec::new(),
                });
            }
            Step::Close { .. } if open => {
                if let Some(last) = blocks.last_mut() {
                    last.length = LENGTH;
                }
                self.unreplayed.push(EditOp::Close {
                    file: file_id,
                    blocks: blocks.clone(),
                });
            }
            Step::Append { .. } if !open => {
                self.unreplayed.push(EditOp::Append { file: file_id });
            }
            _ => return,
        }
        let now_open = match step {
            Step::Close { .. } => false,
            Step::Append { .. } => true,
            _ => open,
        };
        if let Some(entry) = self.files.iter_mut().find(|f| f.0 == file_id) {
            *entry = (file_id, blocks, now_open);
        }
    }

    /// Datanode `dn` reports block number `block` (of every block so far) in `kind`'s
    /// state, with the block's GS, or one below it when `stale`; what it holds follows.
    fn report_incremental(
        &mut self,
        ns: &Namesystem,
        dn: u64,
        block: usize,
        kind: u8,
        stale: bool,
    ) {
        let blocks = self.all_blocks();
        if blocks.is_empty() {
            return;
        }
        let mut reported = blocks[block % blocks.len()];
        if stale {
            reported.gs -= 1;
        }
        let state = match kind {
            0 => ReportedState::Replica(ReplicaState::Rbw),
            1 => ReportedState::Replica(ReplicaState::Finalized),
            _ => ReportedState::Deleted,
        };
        match state {
            ReportedState::Deleted => {
                self.replicas.remove(&(dn, reported.id.0));
            }
            ReportedState::Replica(replica) => {
                self.replicas
                    .insert((dn, reported.id.0), (reported, replica));
            }
        }
        ns.incremental_report(storage(dn), reported, state);
    }

    /// Datanode `dn` reports everything it holds.
    fn report_full(&self, ns: &Namesystem, dn: u64) {
        let entries: Vec<(Block, ReplicaState)> = self
            .replicas
            .iter()
            .filter(|((holder, _), _)| *holder == dn)
            .map(|(_, replica)| *replica)
            .collect();
        ns.full_report(storage(dn), &entries);
    }
}

fn run(
    behavior: NamesystemBehavior,
    steps: &[Step],
    safe_replication: usize,
) -> Result<(), TestCaseError> {
    let ns = Namesystem::standby(
        NamenodeConfig {
            behavior,
            min_replication: safe_replication,
            safe_replication,
            ..NamenodeConfig::default()
        },
        0,
    );
    let mut active = Active::default();
    for step in steps {
        match *step {
            Step::Tail => {
                let edits = std::mem::take(&mut active.unreplayed);
                let applied = ns.apply_edits(&edits);
                prop_assert_eq!(applied, Ok(edits.len()), "the active's edits replay");
            }
            Step::Incremental {
                dn,
                block,
                kind,
                stale,
            } => active.report_incremental(&ns, dn, block, kind, stale),
            Step::FullReport { dn } => active.report_full(&ns, dn),
            _ => active.edit(step),
        }
        let view = ns.view();
        prop_assert!(view.safe_mode.on, "the standby stays in safe mode");
        if let Err(violation) = safe_mode_matches_recount("standby", &view.safe_mode_check()) {
            return Err(TestCaseError::fail(format!("after {step:?}: {violation}")));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/safe_mode_model.txt",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn safe_mode_counts_equal_recount(
        steps in prop::collection::vec(step(), 1..60),
        safe_replication in 1..=2usize,
    ) {
        run(NamesystemBehavior::Trunk, &steps, safe_replication)?;
    }
}

/// The property can fail: without the completion credit (`BlockManager.completeBlock`
/// crediting the replicas already stored), a replica reported before its block's close
/// leaves the counters behind the recount.
#[test]
fn recount_property_catches_the_early_drain() {
    let steps = [
        Step::Create { replication: 1 },
        Step::AddBlock { file: 0 },
        Step::Incremental {
            dn: 1,
            block: 0,
            kind: 1,
            stale: false,
        },
        Step::Tail,
        Step::Close { file: 0 },
        Step::Tail,
    ];
    assert!(run(NamesystemBehavior::Trunk, &steps, 1).is_ok());
    let caught = run(NamesystemBehavior::LegacyEarlyDrain, &steps, 1).expect_err("caught");
    assert!(caught.to_string().contains("safe-mode recount"), "{caught}");
}
