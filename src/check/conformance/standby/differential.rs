//! The HDFS-2742 differential: a client writing files through the crate's active
//! NameNode, datanodes writing, finalizing and reporting their replicas, the standby's
//! tailer replaying batches, a failover and standby restarts, applied to an implementation
//! and to `Namesystem` running the reference behavior, both in the standby's seat.
//!
//! **The race** a sequence can show is the order problem: a report queued before its
//! block's edits and judged after the block completed (the 2012 queue), or not credited to
//! safe mode. **The fix** it holds the implementation to is the reference behavior's.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use proptest::prelude::*;

use super::super::differential::{DifferentialConfig, DifferentialReport, Step, explore};
use crate::namenode::namesystem::{
    EditOp, FileId, HaState, NamenodeConfig, Namesystem, NamesystemApi, NamesystemBehavior,
    NamesystemFactory,
};
use crate::namenode::pending_messages::ReportedState;
use crate::namenode::{Block, BlockId, DatanodeId, NameNodeId, ReplicaState, StorageId};
use crate::scenarios::standby::SEED_KEY;
use crate::sync::Arc;

const FILES: usize = 2;
const DATANODES: u64 = 3;
const LENGTH: u64 = 4096;

/// One operation of the differential's world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Create(usize),
    Write(u64, usize),
    Finalize(u64, usize),
    Recover(usize),
    Close(usize),
    FullReport(u64),
    Delete(u64, usize),
    RemoveDatanode(u64),
    Tail(usize),
    Failover,
    Restart,
}

impl Op {
    fn label(self) -> &'static str {
        match self {
            Op::Create(_) => "client creates a file",
            Op::Write(..) => "datanode receives the block",
            Op::Finalize(..) => "datanode finalizes",
            Op::Recover(_) => "pipeline recovery",
            Op::Close(_) => "client closes the file",
            Op::FullReport(_) => "full block report",
            Op::Delete(..) => "datanode deletes its replica",
            Op::RemoveDatanode(_) => "datanode declared dead",
            Op::Tail(_) => "standby replays a batch",
            Op::Failover => "failover",
            Op::Restart => "standby restarts",
        }
    }

    fn fields(self) -> Vec<(String, String)> {
        let file = |f: usize| ("file".to_owned(), format!("{f} ({})", block_id(f)));
        let dn = |d: u64| ("datanode".to_owned(), DatanodeId(d).to_string());
        match self {
            Op::Create(f) | Op::Recover(f) | Op::Close(f) => vec![file(f)],
            Op::Write(d, f) | Op::Finalize(d, f) | Op::Delete(d, f) => vec![dn(d), file(f)],
            Op::FullReport(d) | Op::RemoveDatanode(d) => vec![dn(d)],
            Op::Tail(k) => vec![("edits".into(), k.to_string())],
            Op::Failover | Op::Restart => Vec::new(),
        }
    }
}

fn op() -> impl Strategy<Value = Op> {
    let file = 0..FILES;
    let dn = 1..=DATANODES;
    // Weighted so that files get written, finalized, closed and replayed before a failover
    // or a restart of the standby (each about once a sequence) starts it over.
    prop_oneof![
        4 => file.clone().prop_map(Op::Create),
        8 => (dn.clone(), file.clone()).prop_map(|(d, f)| Op::Write(d, f)),
        8 => (dn.clone(), file.clone()).prop_map(|(d, f)| Op::Finalize(d, f)),
        2 => file.clone().prop_map(Op::Recover),
        4 => file.clone().prop_map(Op::Close),
        3 => dn.clone().prop_map(Op::FullReport),
        2 => (dn.clone(), file).prop_map(|(d, f)| Op::Delete(d, f)),
        1 => dn.prop_map(Op::RemoveDatanode),
        8 => (1usize..5).prop_map(Op::Tail),
        1 => Just(Op::Failover),
        1 => Just(Op::Restart),
    ]
}

fn block_id(file: usize) -> BlockId {
    BlockId(100 + file as i64)
}

fn storage(dn: u64) -> StorageId {
    StorageId {
        datanode: DatanodeId(dn),
        index: 0,
    }
}

/// A file the client writes: its one block's stamp, and whether it is closed.
#[derive(Debug, Clone, Copy)]
struct File {
    gs: i64,
    closed: bool,
}

/// What both sides share: the active that logs the client's edits, the log, the
/// datanodes' replicas.
struct World {
    active: Namesystem,
    log: Vec<EditOp>,
    next_gs: i64,
    files: [Option<File>; FILES],
    replicas: BTreeMap<(u64, usize), (Block, ReplicaState)>,
    failed_over: bool,
}

/// One side: a namesystem in the standby's seat and how far it replayed the log.
struct Side<F> {
    factory: F,
    namesystem: Arc<dyn NamesystemApi>,
    position: usize,
}

fn config() -> NamenodeConfig {
    NamenodeConfig {
        namenode_id: Some(NameNodeId(1)),
        ..NamenodeConfig::default()
    }
}

impl<F: NamesystemFactory> Side<F> {
    fn start(factory: F) -> Self {
        Self {
            factory,
            namesystem: factory.create(HaState::Standby, config(), 0),
            position: 0,
        }
    }

    /// What upstream code can observe of the namesystem: its HA state, stamp, safe-mode
    /// counts, queued report count, every block's stamp, length, state and locations, and
    /// the corrupt replicas.
    fn shown(&self, result: &str) -> String {
        let view = self.namesystem.view();
        let s = view.safe_mode;
        let mut out = format!(
            "{result}; {:?} gs={} safe_mode={}:{}/{} queued={}",
            view.ha,
            view.generation_stamp,
            if s.on { "on" } else { "off" },
            s.block_safe,
            s.block_total,
            view.queued.len()
        );
        for (id, stored) in &view.blocks {
            let at: Vec<String> = stored
                .locations
                .iter()
                .map(|s| s.datanode.to_string())
                .collect();
            let _ = write!(
                out,
                " {id}@{}/{} {} [{}]",
                stored.block.gs,
                stored.block.length,
                stored.state,
                at.join(",")
            );
        }
        for (id, flagged) in &view.corrupt {
            let at: Vec<String> = flagged.keys().map(|s| s.datanode.to_string()).collect();
            let _ = write!(out, " corrupt {id} [{}]", at.join(","));
        }
        out
    }
}

impl World {
    fn new() -> Self {
        Self {
            active: Namesystem::active(NamenodeConfig::default(), 0),
            log: Vec::new(),
            next_gs: 1,
            files: [None; FILES],
            replicas: BTreeMap::new(),
            failed_over: false,
        }
    }

    /// The client's edits through the active; logged if it takes them.
    fn client(&mut self, ops: Vec<EditOp>) -> Result<(), String> {
        match self.active.apply_edits(&ops) {
            Ok(_) => {
                self.log.extend(ops);
                Ok(())
            }
            Err((_, error)) => Err(error.to_string()),
        }
    }

    /// A datanode's incremental report of a replica to the active and both sides.
    fn report<A: NamesystemFactory, B: NamesystemFactory>(
        &self,
        sides: (&Side<A>, &Side<B>),
        dn: u64,
        (block, state): (Block, ReplicaState),
    ) {
        self.send(sides, dn, block, ReportedState::Replica(state));
    }

    /// A datanode's incremental report to the active and both sides.
    fn send<A: NamesystemFactory, B: NamesystemFactory>(
        &self,
        sides: (&Side<A>, &Side<B>),
        dn: u64,
        block: Block,
        reported: ReportedState,
    ) {
        self.active.incremental_report(storage(dn), block, reported);
        sides
            .0
            .namesystem
            .incremental_report(storage(dn), block, reported);
        sides
            .1
            .namesystem
            .incremental_report(storage(dn), block, reported);
    }

    /// What the operation does outside the sides; `Err` when it does nothing.
    fn client_or_datanode<A: NamesystemFactory, B: NamesystemFactory>(
        &mut self,
        op: Op,
        sides: (&Side<A>, &Side<B>),
    ) -> Result<String, String> {
        let skip = || Err("nothing to do".to_owned());
        match op {
            Op::Create(f) if self.files[f].is_none() && !self.failed_over => {
                let gs = self.next_gs;
                self.next_gs += 1;
                let (file, last) = (
                    FileId(f as u64),
                    Block {
                        id: block_id(f),
                        gs,
                        length: 0,
                    },
                );
                self.client(vec![
                    EditOp::SetGenstamp(gs),
                    EditOp::AddFile {
                        file,
                        replication: 3,
                    },
                    EditOp::AddBlock {
                        file,
                        penultimate: None,
                        last,
                    },
                ])?;
                self.files[f] = Some(File { gs, closed: false });
                Ok("logged".into())
            }
            Op::Write(dn, f) => match self.files[f] {
                Some(file) if !file.closed && !self.replicas.contains_key(&(dn, f)) => {
                    let replica = (
                        Block {
                            id: block_id(f),
                            gs: file.gs,
                            length: 0,
                        },
                        ReplicaState::Rbw,
                    );
                    self.replicas.insert((dn, f), replica);
                    self.report(sides, dn, replica);
                    Ok("RBW reported".into())
                }
                _ => skip(),
            },
            Op::Finalize(dn, f) => match (self.files[f], self.replicas.get(&(dn, f))) {
                (Some(file), Some((block, ReplicaState::Rbw))) if block.gs == file.gs => {
                    let replica = (
                        Block {
                            length: LENGTH,
                            ..*block
                        },
                        ReplicaState::Finalized,
                    );
                    self.replicas.insert((dn, f), replica);
                    self.report(sides, dn, replica);
                    Ok("FINALIZED reported".into())
                }
                _ => skip(),
            },
            Op::Recover(f) => self.recover(f, sides),
            Op::Close(f) => match self.files[f] {
                Some(file) if !file.closed && !self.failed_over => {
                    let block = Block {
                        id: block_id(f),
                        gs: file.gs,
                        length: LENGTH,
                    };
                    self.client(vec![EditOp::Close {
                        file: FileId(f as u64),
                        blocks: vec![block],
                    }])?;
                    self.files[f] = Some(File {
                        closed: true,
                        ..file
                    });
                    Ok("logged".into())
                }
                _ => skip(),
            },
            Op::FullReport(dn) => {
                let entries: Vec<(Block, ReplicaState)> = self
                    .replicas
                    .iter()
                    .filter(|((d, _), _)| *d == dn)
                    .map(|(_, replica)| *replica)
                    .collect();
                self.active.full_report(storage(dn), &entries);
                sides.0.namesystem.full_report(storage(dn), &entries);
                sides.1.namesystem.full_report(storage(dn), &entries);
                Ok(format!("{} replica(s) reported", entries.len()))
            }
            Op::Delete(dn, f) => match self.replicas.remove(&(dn, f)) {
                Some((block, _)) => {
                    self.send(sides, dn, block, ReportedState::Deleted);
                    Ok("DELETED reported".into())
                }
                None => skip(),
            },
            Op::RemoveDatanode(dn) => {
                self.active.remove_datanode(DatanodeId(dn));
                Ok("the active forgets it".into())
            }
            _ => skip(),
        }
    }

    /// Pipeline recovery: a new stamp for the open file's block, its RBW replicas bumped.
    fn recover<A: NamesystemFactory, B: NamesystemFactory>(
        &mut self,
        f: usize,
        sides: (&Side<A>, &Side<B>),
    ) -> Result<String, String> {
        let file = match self.files[f] {
            Some(file) if !file.closed && !self.failed_over => file,
            _ => return Err("nothing to do".into()),
        };
        let pipeline: Vec<u64> = (1..=DATANODES)
            .filter(|dn| {
                matches!(self.replicas.get(&(*dn, f)), Some((b, ReplicaState::Rbw)) if b.gs == file.gs)
            })
            .collect();
        let gs = self.next_gs;
        self.next_gs += 1;
        self.client(vec![
            EditOp::SetGenstamp(gs),
            EditOp::UpdateBlocks {
                file: FileId(f as u64),
                blocks: vec![Block {
                    id: block_id(f),
                    gs,
                    length: 0,
                }],
                pipeline: pipeline.iter().map(|dn| storage(*dn)).collect(),
            },
        ])?;
        self.files[f] = Some(File { gs, ..file });
        for dn in pipeline {
            if let Some(replica) = self.replicas.get_mut(&(dn, f)) {
                replica.0.gs = gs;
                let replica = *replica;
                self.report(sides, dn, replica);
            }
        }
        Ok("logged, pipeline bumped".into())
    }
}

impl<F: NamesystemFactory> Side<F> {
    /// What the operation does to this side.
    fn apply(&mut self, op: Op, log: &[EditOp], failed_over: bool) -> String {
        match op {
            Op::Tail(k) if !failed_over => {
                let end = (self.position + k).min(log.len());
                match self.namesystem.apply_edits(&log[self.position..end]) {
                    Ok(applied) => {
                        self.position += applied;
                        format!("replayed {applied}")
                    }
                    Err((index, error)) => format!("refused edit {index}: {error}"),
                }
            }
            Op::Failover if !failed_over => {
                let datanodes: Vec<DatanodeId> = (1..=DATANODES).map(DatanodeId).collect();
                let remaining = &log[self.position..];
                self.position = log.len();
                match self.namesystem.transition_to_active(remaining, &datanodes) {
                    Ok(()) => "active".into(),
                    Err(error) => format!("failover failed: {error}"),
                }
            }
            Op::RemoveDatanode(dn) => {
                let purged = self.namesystem.remove_datanode(DatanodeId(dn));
                format!("{purged} queued report(s) purged")
            }
            Op::Restart if !failed_over => {
                *self = Side::start(self.factory);
                "restarted".into()
            }
            _ => "-".into(),
        }
    }
}

/// Applies generated sequences of file creations, datanode writes, finalizations and full
/// reports, pipeline recoveries, closes, tailer batches, a failover and standby restarts to
/// the namesystem `factory` builds and to the crate's `Namesystem` running `reference`,
/// both as the standby of an active that logs the client's edits; compares after every
/// operation each side's result, HA state, generation stamp, safe-mode counts, queued
/// report count, blocks (stamp, length, state, locations) and corrupt replicas. The first
/// divergence is shrunk and told as a step table. In the production build.
pub fn differential<F: NamesystemFactory>(
    factory: F,
    reference: NamesystemBehavior,
    config: &DifferentialConfig,
) -> DifferentialReport {
    let who = (
        SEED_KEY,
        reference.name(),
        std::any::type_name::<F>().to_owned(),
    );
    let ops = prop::collection::vec(op(), 1..80);
    explore(who, config, ops, |ops: &Vec<Op>| {
        run(factory, reference, ops)
    })
}

fn run<F: NamesystemFactory>(factory: F, reference: NamesystemBehavior, ops: &[Op]) -> Vec<Step> {
    let mut world = World::new();
    let mut expected = Side::start(reference);
    let mut actual = Side::start(factory);
    let mut steps = Vec::new();
    for op in ops {
        let outside = world.client_or_datanode(*op, (&expected, &actual));
        let (log, failed_over) = (&world.log, world.failed_over);
        let (on_reference, on_implementation) = (
            expected.apply(*op, log, failed_over),
            actual.apply(*op, log, failed_over),
        );
        if *op == Op::Failover {
            world.failed_over = true;
        }
        let outside = outside.unwrap_or_else(|skipped| skipped);
        let mut fields = op.fields();
        fields.push(("world".into(), outside));
        let step = Step {
            label: op.label().into(),
            fields,
            reference: expected.shown(&on_reference),
            implementation: actual.shown(&on_implementation),
        };
        let diverged = step.diverges();
        steps.push(step);
        if diverged {
            break;
        }
    }
    steps
}
