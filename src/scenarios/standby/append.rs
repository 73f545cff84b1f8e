//! Appends whose new pipeline leaves a datanode out, racing the standby's tailer, the
//! datanodes' reports (the dropped one's too) and failover; then the replication factor
//! is lowered to 1.
//!
//! **The race (HDFS-2742's end, by another road).** The datanode an append leaves out keeps
//! the block at the old generation stamp and keeps reporting it; a NameNode that still
//! counts it as a location completes the block on it and may keep it as the one replica.
//! **The fix** (`convertLastBlockToUnderConstruction`, `updatePipelineInternal`,
//! `commitBlock`): its expected replica keeps the old stamp, so the pipeline update on the
//! active and the close (forced on replay) drop its location; its reports are corrupt.

use super::cluster::{Actor, close, spawn_datanode, spawn_failovers, spawn_tailer};
use super::edits::{BLOCK, BLOCK_LENGTH, FILE, block, open_file};
use super::invariants::{check_pair_namenodes, check_pair_quiescent};
use crate::namenode::namesystem::{EditOp, NamesystemFactory};
use crate::namenode::{Block, GenerationStamp};
use crate::scenarios::rng::SeededRng;
use crate::scenarios::{Violation, join_all};
use crate::sim::ha_pair::{HaPair, HaPairShape};
use crate::sim::hdfs_datanode::HdfsDataNode;
use crate::sync::{Arc, thread};

/// How big an [`appends_leave_no_stale_location`] run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendClusterShape {
    /// Appends after the file's first close; each leaves one datanode of the last
    /// pipeline out while two or more remain.
    pub appends: usize,
    /// Failovers.
    pub failovers: usize,
    /// Rounds of each datanode (late deletions, full report, heartbeat).
    pub datanode_rounds: usize,
    /// Tailer batches.
    pub tail_rounds: usize,
    /// Edits per tailer batch.
    pub max_txns_per_lock: usize,
}

impl Default for AppendClusterShape {
    fn default() -> Self {
        Self {
            appends: 2,
            failovers: 1,
            datanode_rounds: 2,
            tail_rounds: 5,
            max_txns_per_lock: 2,
        }
    }
}

/// **No stale location** and **no data-loss chain** through appends: a writer creates a
/// file of one block with replication 3 on three datanodes, closes it, then appends to it
/// `appends` times, each time with a pipeline that leaves one datanode of the last one out,
/// its datanodes announcing the new stamp (RECEIVING) or not (HDFS-7217), and finally
/// lowers the replication to 1. The standby's tailer (a few edits a batch), failover and
/// the three datanodes' rounds (the left-out ones keep reporting their old replica) race
/// it. Both NameNodes' invariants are checked after every tailer batch and failover, and
/// every invariant once all is quiet: a left-out datanode never counts as a location of
/// the completed block, and lowering the replication never keeps only its old replica.
pub fn appends_leave_no_stale_location<F: NamesystemFactory>(
    factory: F,
    seed: u64,
    shape: AppendClusterShape,
) -> Result<(), Violation> {
    let mut rng = SeededRng::new(seed);
    let pair = Arc::new(HaPair::new(
        factory,
        HaPairShape {
            max_txns_per_lock: shape.max_txns_per_lock,
            excess_choice_seed: rng.next_u64(),
            ..HaPairShape::default()
        },
    ));
    let mut handles = vec![
        spawn_appender(&pair, &mut rng, shape.appends),
        spawn_tailer(&pair, shape.tail_rounds),
        spawn_failovers(&pair, shape.failovers),
    ];
    for dn in pair.datanodes() {
        handles.push(spawn_datanode(dn, shape.datanode_rounds));
    }
    join_all(handles)?;
    pair.quiesce()?;
    check_pair_quiescent(&pair)
}

/// The writer, with a random stream of its own drawn from `rng`.
fn spawn_appender(pair: &Arc<HaPair>, rng: &mut SeededRng, appends: usize) -> Actor {
    let pair = Arc::clone(pair);
    let mut rng = SeededRng::new(rng.next_u64());
    thread::spawn_named("writer", move || {
        write_and_append(&pair, &mut rng, appends).map(|()| Vec::new())
    })
}

/// Creates, writes and closes the file, appends `appends` times, then sets its
/// replication to 1. A close the active keeps refusing (lease recovery is not modelled)
/// ends the appends there.
fn write_and_append(pair: &HaPair, rng: &mut SeededRng, appends: usize) -> Result<(), Violation> {
    let mut pipeline: Vec<Arc<HdfsDataNode>> = pair.datanodes().to_vec();
    let mut written = block(BLOCK, 1, BLOCK_LENGTH);
    pair.client(&open_file(FILE, 3, block(BLOCK, 1, 0)))?;
    for dn in &pipeline {
        dn.receive_block(block(BLOCK, 1, 0));
        dn.finalize(written);
    }
    let mut closed = close(pair, FILE, vec![written])?;
    for _ in 0..appends {
        if !closed {
            break;
        }
        thread::yield_now();
        if pipeline.len() > 1 {
            pipeline.remove(rng.below(pipeline.len() as u64) as usize);
        }
        let gs = written.gs + 1;
        let announced = rng.below(2) == 0;
        written = append_once(pair, &pipeline, written, gs, announced, |_| Ok(()))?;
        closed = close(pair, FILE, vec![written])?;
    }
    pair.client(&[EditOp::SetReplication {
        file: FILE,
        replication: 1,
    }])?;
    Ok(())
}

/// One append of `BLOCK_LENGTH` bytes to `last` by `pipeline` at stamp `gs`: the reopen
/// and the new stamp (`OP_APPEND`, `OP_SET_GENSTAMP`), the datanodes move their replicas
/// to it (announced as RECEIVING or not), the pipeline update, the datanodes finalize;
/// `between` runs after the reopen and after the update. Returns the finished block.
fn append_once(
    pair: &HaPair,
    pipeline: &[Arc<HdfsDataNode>],
    last: Block,
    gs: GenerationStamp,
    announced: bool,
    mut between: impl FnMut(FailoverPoint) -> Result<(), Violation>,
) -> Result<Block, Violation> {
    pair.client(&[EditOp::Append { file: FILE }, EditOp::SetGenstamp(gs)])?;
    between(FailoverPoint::AfterAppend)?;
    let reopened = Block { gs, ..last };
    for dn in pipeline {
        if announced {
            dn.bump_generation_stamp(reopened);
        } else {
            dn.bump_generation_stamp_unannounced(reopened);
        }
    }
    pair.client(&[EditOp::UpdateBlocks {
        file: FILE,
        blocks: vec![reopened],
        pipeline: pipeline.iter().map(|dn| dn.storage()).collect(),
    }])?;
    between(FailoverPoint::AfterUpdate)?;
    let finished = Block {
        length: last.length + BLOCK_LENGTH,
        ..reopened
    };
    for dn in pipeline {
        dn.finalize(finished);
    }
    Ok(finished)
}

/// Where [`append_leaving_a_datanode_out`] fails over, if at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailoverPoint {
    /// No failover: the first active serves the whole write.
    Never,
    /// After the reopen and the new stamp are logged, before the datanodes move to it.
    AfterAppend,
    /// After the pipeline update, before the close.
    AfterUpdate,
    /// After the close, before the replication is lowered.
    AfterClose,
}

impl FailoverPoint {
    /// Every point, no failover first.
    pub const ALL: [FailoverPoint; 4] = [
        FailoverPoint::Never,
        FailoverPoint::AfterAppend,
        FailoverPoint::AfterUpdate,
        FailoverPoint::AfterClose,
    ];
}

/// **No stale location** and **no data-loss chain** on the append that leaves a datanode
/// out, scripted: B is written at GS 1 on DN1-DN3 and closed, then appended at GS 2 by
/// DN1 and DN2 only (announced as RECEIVING), finalized and closed; DN3 keeps B@1. The
/// standby replays one edit at a time, and with `dn3_reports` DN3 sends a full report of
/// B@1 after every replayed edit and every client step; the pair fails over at
/// `failover`; both NameNodes are checked after every step. Then the replication is
/// lowered to 1 and, once everything landed, B@2 must survive on DN1 or DN2 whatever the
/// excess choice (`excess_choice_seed`).
pub fn append_leaving_a_datanode_out<F: NamesystemFactory>(
    factory: F,
    failover: FailoverPoint,
    dn3_reports: bool,
    excess_choice_seed: u64,
) -> Result<(), Violation> {
    let pair = HaPair::new(
        factory,
        HaPairShape {
            max_txns_per_lock: 1,
            excess_choice_seed,
            ..HaPairShape::default()
        },
    );
    let dns = pair.datanodes();
    // After each client step: the failover if it is this one's, DN3's report, the replay.
    let dn3 = dn3_reports.then_some(&dns[2]);
    let step = |at: Option<FailoverPoint>| -> Result<(), Violation> {
        if at == Some(failover) {
            pair.failover()?;
        }
        if let Some(dn3) = dn3 {
            dn3.full_block_report();
        }
        replay_edit_by_edit(&pair, dn3)
    };
    let first = block(BLOCK, 1, BLOCK_LENGTH);
    pair.client(&open_file(FILE, 3, block(BLOCK, 1, 0)))?;
    for dn in dns {
        dn.receive_block(block(BLOCK, 1, 0));
        dn.finalize(first);
    }
    pair.client(&[EditOp::Close {
        file: FILE,
        blocks: vec![first],
    }])?;
    step(None)?;
    let appended = append_once(&pair, &dns[..2], first, 2, true, |at| step(Some(at)))?;
    pair.client(&[EditOp::Close {
        file: FILE,
        blocks: vec![appended],
    }])?;
    step(Some(FailoverPoint::AfterClose))?;
    pair.client(&[EditOp::SetReplication {
        file: FILE,
        replication: 1,
    }])?;
    pair.quiesce()?;
    check_pair_quiescent(&pair)
}

/// The standby replays the log one edit a batch, `dn3` (if any) reporting its full block
/// list and both NameNodes checked after each.
fn replay_edit_by_edit(pair: &HaPair, dn3: Option<&Arc<HdfsDataNode>>) -> Result<(), Violation> {
    while pair.tail_once()? > 0 {
        if let Some(dn3) = dn3 {
            dn3.full_block_report();
        }
        check_pair_namenodes(pair)?;
    }
    check_pair_namenodes(pair)
}
