//! HDFS-17905 on the standby: queued datanode reports of a block the namespace removed.
//!
//! **The race.** A replica reported with a generation stamp newer than every edit of its
//! block (a pipeline recovery whose client died before `updatePipeline`) waits in the
//! standby's queue; the file is deleted, and no edit will change that block again: the
//! entry never drains (on an observer, which never fails over, it stays for ever).
//! **The fix** (`BlockManager.removeBlock`): removing a block drops its queued reports.
//! The liveness property [`standby_queue_empties`] checks it once a heal phase (every
//! file deleted, the cluster quiescent) is over; a violation lists what never drained.

use std::fmt::Write as _;

use super::cluster::{Actor, close, spawn_datanode, spawn_tailer};
use super::edits::{BLOCK_LENGTH, block};
use super::invariants::check_pair_quiescent;
use crate::namenode::namesystem::{EditOp, FileId, NamesystemFactory, NamesystemView};
use crate::namenode::{Block, BlockId};
use crate::scenarios::rng::SeededRng;
use crate::scenarios::{Violation, join_all};
use crate::sim::ha_pair::{HaPair, HaPairShape};
use crate::sim::hdfs_datanode::HdfsDataNode;
use crate::sync::{Arc, thread};

/// The JIRA every violation of this leak names.
pub const LEAK_SEED_KEY: &str = "HDFS-17905";

/// The property [`standby_queue_empties`] checks.
pub const STANDBY_QUEUE_EMPTIES: &str = "the standby's queue empties";

/// Files the writer creates; the last one's pipeline recovery is always abandoned.
const FILES: u64 = 3;

/// Rounds of each datanode (late deletions, full report, heartbeat) and of the tailer.
const ROUNDS: usize = 3;

/// The block of the file written after the deletes.
const LATER_BLOCK: BlockId = BlockId(1_000);

/// The file written after the deletes.
const LATER_FILE: FileId = FileId(1_000);

/// **The standby's queue empties** (liveness, HDFS-17905): once the heal phase is over
/// (every edit tailed, every report landed), the standby holds no postponed report. A
/// violation is the story of what never happened: each entry left, and whether its block
/// is still in the namespace (waiting for an edit) or was removed (no edit will come).
pub fn standby_queue_empties(nn: &str, view: &NamesystemView) -> Result<(), Violation> {
    if view.queued.is_empty() {
        return Ok(());
    }
    let mut detail = format!(
        "{nn} still holds {} queued report(s) after the heal phase (GS counter {}):",
        view.queued.len(),
        view.generation_stamp
    );
    for entry in &view.queued {
        let fate = match view.blocks.get(&entry.block.id) {
            Some(stored) => format!("its block is at {} and no edit moved it", stored.block),
            None => "its block was removed from the namespace, no edit will drain it".into(),
        };
        // Writing to a String cannot fail.
        let _ = write!(
            detail,
            " {} {} {} never drained ({fate});",
            entry.storage.datanode, entry.state, entry.block
        );
    }
    Err(Violation {
        seed: LEAK_SEED_KEY,
        property: STANDBY_QUEUE_EMPTIES,
        detail,
    })
}

/// **The standby's queue empties** after a heal phase, with the safety invariants of a
/// quiet pair. A writer creates files whose block is sometimes recovered to a new GS
/// (`OP_SET_GENSTAMP`, the datanodes bump, `OP_UPDATE_BLOCKS`) and sometimes abandoned
/// after the datanodes bumped (the client dies before `updatePipeline`; always for the
/// last file), while the standby's tailer and three datanodes run. Then the heal phase:
/// the active deletes every file, a client writes one more (so the standby's GS counter
/// passes every stamp logged), the standby catches up, and every datanode takes and runs
/// its commands (their incremental reports land at once). The heal phase's bound excludes
/// the next full block report (`dfs.blockreport.intervalMsec`, 6 h by default): a full
/// report of a replica the datanode still holds would drop its pair's entries
/// (HDFS-17477), so the leak would last until then rather than for ever; a datanode that
/// no longer holds the replica never reports it again.
pub fn deleted_blocks_leave_no_queued_reports<F: NamesystemFactory>(
    factory: F,
    seed: u64,
) -> Result<(), Violation> {
    let mut rng = SeededRng::new(seed);
    let pair = Arc::new(HaPair::new(factory, HaPairShape::default()));
    let mut handles = vec![spawn_writer(&pair, &mut rng), spawn_tailer(&pair, ROUNDS)];
    for dn in pair.datanodes() {
        handles.push(spawn_datanode(dn, ROUNDS));
    }
    join_all(handles)?;
    heal(&pair)?;
    crate::events::debug!(
        why = "heal phase over: every file deleted, every edit tailed, every report landed",
        "cluster quiescent"
    );
    let (_, standby) = pair.roles();
    standby_queue_empties(
        &format!("{} (standby)", standby.id()),
        &standby.namesystem().view(),
    )?;
    check_pair_quiescent(&pair)
}

/// The heal phase of [`deleted_blocks_leave_no_queued_reports`].
fn heal(pair: &HaPair) -> Result<(), Violation> {
    let files: Vec<FileId> = pair.active_view().files.keys().copied().collect();
    for file in files {
        pair.client(&[EditOp::Delete { file }])?;
    }
    let gs = pair.highest_logged_genstamp() + 1;
    pair.client(&[
        EditOp::SetGenstamp(gs),
        EditOp::AddFile {
            file: LATER_FILE,
            replication: 2,
        },
        EditOp::AddBlock {
            file: LATER_FILE,
            penultimate: None,
            last: block(LATER_BLOCK, gs, 0),
        },
    ])?;
    let finished = block(LATER_BLOCK, gs, BLOCK_LENGTH);
    for dn in &pair.datanodes()[..2] {
        dn.receive_block(finished);
        dn.finalize(finished);
    }
    close(pair, LATER_FILE, vec![finished])?;
    pair.catch_up()?;
    for _ in 0..2 {
        for dn in pair.datanodes() {
            dn.heartbeat()?;
            dn.execute_deletions();
        }
    }
    pair.catch_up()?;
    Ok(())
}

/// How the writer's client ends a block's write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recovery {
    /// No pipeline recovery.
    None,
    /// Recovered to a new GS, then finalized and closed.
    Completed,
    /// The datanodes bumped to a new GS, then the client died: no `updatePipeline`, no
    /// close.
    Abandoned,
}

/// The writer, with a random stream of its own drawn from `rng`.
fn spawn_writer(pair: &Arc<HaPair>, rng: &mut SeededRng) -> Actor {
    let pair = Arc::clone(pair);
    let mut rng = SeededRng::new(rng.next_u64());
    thread::spawn_named("writer", move || {
        let mut gs = 0;
        for f in 0..FILES {
            let recovery = match (f + 1 == FILES, rng.below(3)) {
                (true, _) | (false, 2) => Recovery::Abandoned,
                (false, 1) => Recovery::Completed,
                (false, _) => Recovery::None,
            };
            gs = write_file(&pair, &mut rng, FileId(f), gs, recovery)?;
            thread::yield_now();
        }
        Ok(Vec::new())
    })
}

/// Writes file `file` of one block (id `file + 1`) through a pipeline of two datanodes,
/// the last GS logged being `gs`; returns the last GS it logged.
fn write_file(
    pair: &HaPair,
    rng: &mut SeededRng,
    file: FileId,
    mut gs: i64,
    recovery: Recovery,
) -> Result<i64, Violation> {
    gs += 1;
    let mut current = block(BlockId(file.0 as i64 + 1), gs, 0);
    pair.client(&[
        EditOp::SetGenstamp(gs),
        EditOp::AddFile {
            file,
            replication: 2,
        },
        EditOp::AddBlock {
            file,
            penultimate: None,
            last: current,
        },
    ])?;
    let skip = rng.below(pair.datanodes().len() as u64) as usize;
    let pipeline: Vec<&Arc<HdfsDataNode>> = pair
        .datanodes()
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != skip)
        .map(|(_, dn)| dn)
        .collect();
    for dn in &pipeline {
        dn.receive_block(current);
    }
    if recovery != Recovery::None {
        gs += 1;
        current.gs = gs;
        pair.client(&[EditOp::SetGenstamp(gs)])?;
        for dn in &pipeline {
            dn.bump_generation_stamp(current);
        }
        if recovery == Recovery::Abandoned {
            return Ok(gs);
        }
        pair.client(&[EditOp::UpdateBlocks {
            file,
            blocks: vec![current],
            pipeline: pipeline.iter().map(|dn| dn.storage()).collect(),
        }])?;
    }
    let finished = Block {
        length: BLOCK_LENGTH,
        ..current
    };
    for dn in &pipeline {
        dn.finalize(finished);
    }
    close(pair, file, vec![finished])?;
    Ok(gs)
}
