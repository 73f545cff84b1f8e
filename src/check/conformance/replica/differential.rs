//! The HDDS-16811 differential: delete transactions delivered, block deleting passes,
//! reconciliations with a peer (each ending with its scan), scans and datanode restarts,
//! applied to three replicas the implementation's factory starts and to three of this
//! crate's replicas running the reference behavior, from the same generated layout of
//! blocks.
//!
//! **The race** a sequence can show is the logic half of the seed: a block deleted where
//! it had no metadata that leaves no deleted entry in the tree, then copied back by a
//! reconciliation with a peer that has not deleted it yet. **The fix** it holds the
//! implementation to is the reference behavior's (`Hardened` also applies a peer's
//! deletion of a block live here, HDDS-11765: hold an implementation to the behavior it
//! claims).
//!
//! What is compared after every operation is what the invariants read: per replica its
//! state, pending transactions and empty flag, per block its metadata's chunks, its file's
//! length and its tree entry, whether the replicas' data checksums agree, and the
//! operation's outcome (done or failed, a scan's findings). Error messages and checksum
//! values are not: an implementation words its errors as it likes.

use std::fmt::Write as _;

use proptest::prelude::*;

use super::super::differential::{DifferentialConfig, DifferentialReport, Step, explore};
use crate::datanode::container::{
    ContainerBehavior, ContainerError, KeyValueContainerApi, ReplicaFactory, ScanFindings,
    TreeEntry,
};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{DatanodeId, LocalId};
use crate::scenarios::container::SEED_KEY;
use crate::sim::replica_node::transaction;

/// Replicas of each side (dn1..dn3).
const NODES: usize = 3;
/// Blocks of the container (ids 1..=3), two chunks each; transaction `k` deletes block `k`.
const BLOCKS: u64 = 3;
/// Chunks of every block.
const CHUNKS: usize = 2;

/// One operation of the differential's world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// The delete-blocks command brings transaction `tx` (deleting block `tx`) to a node.
    Deliver(usize, LocalId),
    /// A pass of the node's block deleting service.
    DeletePass(usize),
    /// The node reconciles with a peer, then scans.
    Reconcile(usize, usize),
    /// An on-demand scan of the node.
    Scan(usize),
    /// The node's datanode restarts.
    Restart(usize),
}

fn dn(index: usize) -> String {
    DatanodeId(index as u64 + 1).to_string()
}

impl Op {
    fn label(self) -> &'static str {
        match self {
            Op::Deliver(..) => "delete transaction stored",
            Op::DeletePass(_) => "block deleting pass",
            Op::Reconcile(..) => "reconcile, then scan",
            Op::Scan(_) => "on-demand scan",
            Op::Restart(_) => "datanode restarts",
        }
    }

    fn fields(self) -> Vec<(String, String)> {
        let node = |i: usize| ("replica".to_owned(), dn(i));
        match self {
            Op::Deliver(i, tx) => vec![
                node(i),
                ("tx".into(), tx.to_string()),
                ("deletes block".into(), tx.to_string()),
            ],
            Op::Reconcile(i, peer) => vec![node(i), ("peer".into(), dn(peer))],
            Op::DeletePass(i) | Op::Scan(i) | Op::Restart(i) => vec![node(i)],
        }
    }
}

fn op() -> impl Strategy<Value = Op> {
    let node = 0..NODES;
    prop_oneof![
        3 => (node.clone(), 1..=BLOCKS).prop_map(|(i, tx)| Op::Deliver(i, tx)),
        3 => node.clone().prop_map(Op::DeletePass),
        4 => (node.clone(), 1..NODES)
            .prop_map(|(i, other)| Op::Reconcile(i, (i + other) % NODES)),
        1 => node.clone().prop_map(Op::Scan),
        1 => node.prop_map(Op::Restart),
    ]
}

/// Which replicas hold each block: per block a non-empty set of the three, as a mask.
type Layout = [u8; BLOCKS as usize];

fn layout() -> impl Strategy<Value = Layout> {
    prop::array::uniform3(1u8..(1 << NODES))
}

fn holdings(layout: &Layout, node: usize) -> Vec<(LocalId, usize)> {
    (1..=BLOCKS)
        .zip(layout)
        .filter(|(_, mask)| *mask & (1 << node) != 0)
        .map(|(block, _)| (block, CHUNKS))
        .collect()
}

/// One side: three replicas of one factory.
struct Side<R> {
    nodes: Vec<R>,
}

impl<R: KeyValueContainerApi> Side<R> {
    fn start<F: ReplicaFactory<Replica = R>>(factory: &F, layout: &Layout) -> Result<Self, String> {
        let nodes = (0..NODES)
            .map(|i| {
                let blocks = holdings(layout, i);
                factory.create(
                    DatanodeId(i as u64 + 1),
                    ContainerState::QuasiClosed,
                    &blocks,
                )
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| format!("could not start: {error}"))?;
        Ok(Self { nodes })
    }

    /// What the operation returned, shown.
    fn run(&mut self, op: Op) -> String {
        let done = |result: Result<(), ContainerError>| match result {
            Ok(()) => "done".to_owned(),
            Err(_) => "failed".to_owned(),
        };
        let scanned = |result: Result<ScanFindings, ContainerError>| match result {
            Ok(Some(found)) => format!("scan found {found:?}"),
            Ok(None) => "scan already running".to_owned(),
            Err(_) => "failed".to_owned(),
        };
        match op {
            Op::Deliver(i, tx) => {
                done(self.nodes[i].store_delete_transactions(&[transaction(tx, &[tx])]))
            }
            Op::DeletePass(i) => done(self.nodes[i].run_block_deleting_pass()),
            Op::Reconcile(i, peer) => {
                let peer = self.nodes[peer].peer();
                scanned(self.nodes[i].reconcile_container(&[peer]))
            }
            Op::Scan(i) => scanned(self.nodes[i].scan_container()),
            Op::Restart(i) => match self.nodes[i].restart() {
                Ok(node) => {
                    self.nodes[i] = node;
                    "done".to_owned()
                }
                Err(_) => "failed".to_owned(),
            },
        }
    }

    /// What the invariants read after the operation, per replica and per block.
    fn shown(&self, result: String) -> String {
        let mut out = result;
        for node in &self.nodes {
            let state = node
                .state()
                .map_or_else(|_| "unreadable".to_owned(), |s| format!("{s:?}"));
            let empty = node
                .is_empty()
                .map_or("?", |e| if e { " empty" } else { "" });
            let _ = write!(
                out,
                "; {} {state}{empty} pending {} [",
                node.datanode(),
                node.pending_transactions()
            );
            for block in 1..=BLOCKS {
                let _ = write!(out, " {block}:{}", block_view(node, block));
            }
            out.push_str(" ]");
        }
        let roots: Vec<_> = self.nodes.iter().map(|n| n.data_checksum().ok()).collect();
        let agree = roots.windows(2).all(|w| w[0] == w[1]);
        let _ = write!(out, "; data checksums agree: {agree}");
        out
    }

    fn apply(&mut self, op: Op) -> String {
        let result = self.run(op);
        self.shown(result)
    }
}

/// `m2/f16/D`: chunks its metadata lists (`-` none), its file's length (`-` none), its
/// tree entry (`A`bsent, `L`ive, `D`eleted).
fn block_view<R: KeyValueContainerApi>(node: &R, block: LocalId) -> String {
    let metadata = match node.block(block) {
        Ok(Some(data)) => format!("m{}", data.chunks.len()),
        Ok(None) => "-".to_owned(),
        Err(_) => "?".to_owned(),
    };
    let file = match node.block_file_len(block) {
        Ok(Some(len)) => format!("f{len}"),
        Ok(None) => "-".to_owned(),
        Err(_) => "?".to_owned(),
    };
    let entry = match node.tree_entry(block) {
        Ok(TreeEntry::Absent) => "A",
        Ok(TreeEntry::Live) => "L",
        Ok(TreeEntry::Deleted) => "D",
        Err(_) => "?",
    };
    format!("{metadata}/{file}/{entry}")
}

/// Applies generated sequences of delivered delete transactions, deleting passes,
/// reconciliations with a peer (each ending with its scan), scans and datanode restarts
/// (a replica loaded again from what it persisted) to three replicas `factory` starts and
/// to three of this crate's replicas running `reference`, from the same generated layout
/// of three blocks over the three replicas; compares after every operation its outcome,
/// each replica's state, pending transactions and empty flag, each block's metadata,
/// file and tree entry, and whether the replicas' data checksums agree. The first
/// divergence is shrunk and told as a step table. In the production build.
pub fn differential<F: ReplicaFactory>(
    factory: F,
    reference: ContainerBehavior,
    config: &DifferentialConfig,
) -> DifferentialReport {
    let who = (
        SEED_KEY,
        reference.name(),
        std::any::type_name::<F::Replica>().to_owned(),
    );
    let world = (layout(), prop::collection::vec(op(), 1..30));
    explore(who, config, world, |(layout, ops): &(Layout, Vec<Op>)| {
        run(&factory, reference, layout, ops)
    })
}

fn run<F: ReplicaFactory>(
    factory: &F,
    reference: ContainerBehavior,
    layout: &Layout,
    ops: &[Op],
) -> Vec<Step> {
    let holders = (0..NODES)
        .map(|i| {
            let blocks: Vec<String> = holdings(layout, i)
                .iter()
                .map(|(b, _)| b.to_string())
                .collect();
            (dn(i), format!("blocks [{}]", blocks.join(",")))
        })
        .collect();
    let (mut expected, mut actual) = match (
        Side::start(&reference, layout),
        Side::start(factory, layout),
    ) {
        (Ok(expected), Ok(actual)) => (expected, actual),
        (expected, actual) => {
            return vec![Step {
                label: "replicas start".into(),
                fields: holders,
                reference: expected.err().unwrap_or_else(|| "started".into()),
                implementation: actual.err().unwrap_or_else(|| "started".into()),
            }];
        }
    };
    let mut steps = vec![Step {
        label: "replicas start".into(),
        fields: holders,
        reference: expected.shown("started".into()),
        implementation: actual.shown("started".into()),
    }];
    if steps[0].diverges() {
        return steps;
    }
    for op in ops {
        let step = Step {
            label: op.label().into(),
            fields: op.fields(),
            reference: expected.apply(*op),
            implementation: actual.apply(*op),
        };
        let diverged = step.diverges();
        steps.push(step);
        if diverged {
            break;
        }
    }
    steps
}
