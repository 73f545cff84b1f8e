//! The random HA cluster of the standby scenarios (HDFS-2742): the stress test of the
//! seed's report (`TestDNFencingWithReplication`) in small. A writer, a replication
//! toggler, the standby's tailer, periodic failover and three datanodes run at once; the
//! NameNodes' invariants are checked as they go, and all of them once all is quiet.

use super::edits::{BLOCK_LENGTH, block};
use super::invariants::{check_pair_namenodes, check_pair_quiescent};
use crate::namenode::edit_log::EditLogError;
use crate::namenode::namesystem::{EditOp, FileId, NamesystemFactory, ReplayError};
use crate::namenode::{Block, BlockId, GenerationStamp};
use crate::scenarios::rng::SeededRng;
use crate::scenarios::{Violation, join_all};
use crate::sim::ha_pair::{HaPair, HaPairShape, PairError};
use crate::sim::hdfs_datanode::HdfsDataNode;
use crate::sync::{Arc, thread};

/// How big a [`failovers_lose_no_replica_and_keep_counts`] run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StandbyClusterShape {
    /// Files the writer creates.
    pub files: u64,
    /// Replication toggles (1 ↔ 2).
    pub toggles: usize,
    /// Failovers.
    pub failovers: usize,
    /// Rounds of each datanode (late deletions, full report, heartbeat).
    pub datanode_rounds: usize,
    /// Tailer batches.
    pub tail_rounds: usize,
    /// Edits per tailer batch.
    pub max_txns_per_lock: usize,
}

impl Default for StandbyClusterShape {
    fn default() -> Self {
        Self {
            files: 3,
            toggles: 3,
            failovers: 2,
            datanode_rounds: 3,
            tail_rounds: 6,
            max_txns_per_lock: usize::MAX,
        }
    }
}

/// One actor of the cluster, on its own thread.
pub(super) type Actor = thread::JoinHandle<Result<Vec<()>, Violation>>;

/// **No data-loss chain**, **no false corruption**, **location completeness**,
/// **standby is passive**, **safe-mode recount** and **queue soundness** in a random HA
/// cluster: a writer, a replication toggler (1 ↔ 2 on the files created so far), the
/// standby's tailer, three datanodes with periodic full reports, heartbeats and late
/// deletions, and periodic failover. The NameNodes' invariants are checked after every
/// tailer batch and failover, and every invariant once all is quiet.
pub fn failovers_lose_no_replica_and_keep_counts<F: NamesystemFactory>(
    factory: F,
    seed: u64,
    shape: StandbyClusterShape,
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
        spawn_writer(&pair, &mut rng, shape.files),
        spawn_toggler(&pair, &mut rng, shape.toggles),
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
fn spawn_writer(pair: &Arc<HaPair>, rng: &mut SeededRng, files: u64) -> Actor {
    let pair = Arc::clone(pair);
    let mut rng = SeededRng::new(rng.next_u64());
    thread::spawn_named("writer", move || {
        write_files(&pair, &mut rng, files).map(|()| Vec::new())
    })
}

/// The replication toggler: `toggles` times, sets a random file created so far to
/// replication 1 or 2 in turn.
fn spawn_toggler(pair: &Arc<HaPair>, rng: &mut SeededRng, toggles: usize) -> Actor {
    let pair = Arc::clone(pair);
    let mut rng = SeededRng::new(rng.next_u64());
    thread::spawn_named(
        "replication toggler",
        move || -> Result<Vec<()>, Violation> {
            for toggle in 0..toggles {
                let created = pair.active_view().files.len() as u64;
                if created > 0 {
                    let file = FileId(rng.below(created));
                    let replication = 1 + toggle % 2;
                    pair.client(&[EditOp::SetReplication { file, replication }])?;
                }
                thread::yield_now();
            }
            Ok(Vec::new())
        },
    )
}

/// The standby's tailer (`EditLogTailer.doTailEdits`), checking both NameNodes after
/// every batch that applied edits.
pub(super) fn spawn_tailer(pair: &Arc<HaPair>, rounds: usize) -> Actor {
    let pair = Arc::clone(pair);
    thread::spawn_named("edit tailer", move || -> Result<Vec<()>, Violation> {
        for _ in 0..rounds {
            if pair.tail_once()? > 0 {
                check_pair_namenodes(&pair)?;
            }
            thread::yield_now();
        }
        Ok(Vec::new())
    })
}

/// The failover controller, checking both NameNodes after every failover.
pub(super) fn spawn_failovers(pair: &Arc<HaPair>, failovers: usize) -> Actor {
    let pair = Arc::clone(pair);
    thread::spawn_named(
        "failover controller",
        move || -> Result<Vec<()>, Violation> {
            for _ in 0..failovers {
                thread::yield_now();
                pair.failover()?;
                check_pair_namenodes(&pair)?;
            }
            Ok(Vec::new())
        },
    )
}

/// A datanode's rounds: its late deletions, a full report, a heartbeat.
pub(super) fn spawn_datanode(dn: &Arc<HdfsDataNode>, rounds: usize) -> Actor {
    let name = format!("datanode {}", dn.storage().datanode);
    let dn = Arc::clone(dn);
    thread::spawn_named(&name, move || -> Result<Vec<()>, Violation> {
        for _ in 0..rounds {
            dn.execute_deletions();
            dn.full_block_report();
            dn.heartbeat()?;
            thread::yield_now();
        }
        Ok(Vec::new())
    })
}

/// The writer: creates `files` files of one or two blocks with replication 2, each block
/// written by a pipeline of two datanodes, sometimes recovered to a new GS before it is
/// finalized (`OP_SET_GENSTAMP`, datanodes bump, then the block-list update).
fn write_files(pair: &HaPair, rng: &mut SeededRng, files: u64) -> Result<(), Violation> {
    let dns = pair.datanodes();
    let mut gs: GenerationStamp = 0;
    let mut next_block = 0_i64;
    for f in 0..files {
        let file = FileId(f);
        pair.client(&[EditOp::AddFile {
            file,
            replication: 2,
        }])?;
        let blocks = 1 + rng.below(2);
        let mut done: Vec<Block> = Vec::new();
        for _ in 0..blocks {
            gs += 1;
            next_block += 1;
            let mut current = block(BlockId(next_block), gs, 0);
            pair.client(&[
                EditOp::SetGenstamp(gs),
                EditOp::AddBlock {
                    file,
                    penultimate: done.last().copied(),
                    last: current,
                },
            ])?;
            let skip = rng.below(dns.len() as u64) as usize;
            let pipeline: Vec<&Arc<HdfsDataNode>> = dns
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != skip)
                .map(|(_, d)| d)
                .collect();
            for dn in &pipeline {
                dn.receive_block(current);
            }
            if rng.below(2) == 0 {
                gs += 1;
                current.gs = gs;
                pair.client(&[EditOp::SetGenstamp(gs)])?;
                for dn in &pipeline {
                    dn.bump_generation_stamp(current);
                }
                let mut list = done.clone();
                list.push(current);
                pair.client(&[EditOp::UpdateBlocks {
                    file,
                    blocks: list,
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
            done.push(finished);
        }
        close(pair, file, done)?;
        thread::yield_now();
    }
    Ok(())
}

/// The client closes `file`: the active refuses while a block is only COMMITTED (fewer
/// than `minReplication` FINALIZED replicas reported to it, e.g. dropped by a legacy
/// standby before a failover), and the client retries a few times, then leaves the file
/// open (lease recovery, which would close it, is not modelled). Returns whether the file
/// closed.
pub(super) fn close(pair: &HaPair, file: FileId, blocks: Vec<Block>) -> Result<bool, Violation> {
    let op = [EditOp::Close { file, blocks }];
    for _ in 0..CLOSE_ATTEMPTS {
        match pair.client(&op) {
            Err(PairError::ClientEdits {
                error:
                    EditLogError::Replay {
                        error: ReplayError::FileNotComplete { .. },
                        ..
                    },
                ..
            }) => thread::yield_now(),
            other => return other.map(|()| true).map_err(Violation::from),
        }
    }
    Ok(false)
}

/// How many times the writer asks the active to close a file.
const CLOSE_ATTEMPTS: usize = 3;
