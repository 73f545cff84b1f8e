//! The random cluster of the container scenarios (HDDS-16811): three replicas whose
//! deleting services, reconciliations and scans run at once, under a checker's schedules.
//!
//! **The race.** Each replica's block deleting service and its reconciliations with random
//! peers work on the same blocks: a block deleted on one replica is copied back from a
//! peer that has not deleted it yet, or its metadata is committed without its file.
//! **The fix** records every deletion in the tree and commits a repair under the read
//! lock only if the tree does not mark the block deleted; the peers' deletions spread
//! through the trees, so a full reconcile round converges.

use super::invariants::{
    deleted_blocks_not_live, deletions_witnessed, live_blocks_present, no_metadata_without_file,
    replica_healthy, replicas_agree_on_the_data_checksum,
};
use super::seed::setup;
use crate::datanode::container::reconcile::PeerDatanode;
use crate::datanode::container::{ContainerBehavior, KeyValueContainerApi, ReplicaFactory};
use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{DatanodeId, LocalId};
use crate::scenarios::rng::SeededRng;
use crate::scenarios::{Violation, join_all};
use crate::sim::replica_node::transaction;
use crate::sync::{Arc, thread};

/// The size of the cluster scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContainerClusterShape {
    /// Blocks of the container (ids 1..=blocks), each with two chunks.
    pub blocks: u64,
    /// How many of them are deleted by transactions (one transaction each).
    pub deleted: u64,
    /// Operations of each datanode's repair thread (reconciliations and scans).
    pub repair_ops: usize,
    /// Deleting passes of each datanode's service thread.
    pub deleting_passes: usize,
}

impl Default for ContainerClusterShape {
    fn default() -> Self {
        Self {
            blocks: 4,
            deleted: 2,
            repair_ops: 2,
            deleting_passes: 2,
        }
    }
}

const CLUSTER_NODES: usize = 3;

/// Three QUASI_CLOSED replicas; each block is on a random non-empty set of them (the
/// lagging replicas reconciliation exists to repair); some blocks are deleted. Per
/// datanode two threads: a service thread that stores the transactions at a random moment
/// and runs deleting passes, and a repair thread that reconciles with random peers and
/// scans. Then quiescence: every transaction stored and executed everywhere, and a full
/// reconcile round (each replica with each peer, in turn). Six spawned threads.
///
/// Checks [`deleted_blocks_not_live`] and [`no_metadata_without_file`] on every replica
/// at quiescence and after the round; after the round also [`live_blocks_present`],
/// [`deletions_witnessed`], [`replica_healthy`] (no scan found a failure) and
/// [`replicas_agree_on_the_data_checksum`]. Not whether each replica's data checksum
/// follows its tree: HDDS-16808's refresh in Ozone's order breaks that whatever this seed
/// does, which is its own case
/// ([`data_checksum_follows_concurrent_tree_writes`](super::beyond_seed::data_checksum_follows_concurrent_tree_writes)).
pub fn deletes_and_repairs_keep_replicas_consistent(
    behavior: ContainerBehavior,
    seed: u64,
    shape: ContainerClusterShape,
) -> Result<(), Violation> {
    deletes_and_repairs_keep_replicas_consistent_on(&behavior, seed, shape)
}

/// [`deletes_and_repairs_keep_replicas_consistent`] over the replicas `factory` starts.
pub fn deletes_and_repairs_keep_replicas_consistent_on<F: ReplicaFactory>(
    factory: &F,
    seed: u64,
    shape: ContainerClusterShape,
) -> Result<(), Violation> {
    let mut rng = SeededRng::new(seed);
    let plan = ClusterPlan::draw(&mut rng, shape);
    let nodes = plan.replicas(factory)?;
    let mut handles = Vec::new();
    for index in 0..CLUSTER_NODES {
        let deliver_after = rng.below(shape.deleting_passes as u64 + 1) as usize;
        let service = spawn_deleting_service(
            nodes[index].clone(),
            plan.txs.clone(),
            deliver_after,
            shape.deleting_passes,
        );
        let ops = draw_repair_ops(&mut rng, index, shape.repair_ops);
        let repair = spawn_repairs(nodes.clone(), index, ops);
        handles.push(service);
        handles.push(repair);
    }
    join_all(handles)?;
    check_at_quiescence(&nodes, &plan)?;
    check_after_full_round(&nodes, &plan)
}

/// What the seed draws before any thread runs: where each block lives, which are deleted.
struct ClusterPlan {
    /// Per datanode, the blocks (id, chunk count) its replica holds.
    holders: Vec<Vec<(LocalId, usize)>>,
    /// The blocks deleted by transactions.
    deleted: Vec<LocalId>,
    /// The blocks of live keys, with their chunk counts.
    live: Vec<(LocalId, usize)>,
    /// One delete transaction per deleted block.
    txs: Vec<DeletedBlocksTransaction>,
}

impl ClusterPlan {
    fn draw(rng: &mut SeededRng, shape: ContainerClusterShape) -> Self {
        let all_blocks: Vec<LocalId> = (1..=shape.blocks).collect();
        let mut holders: Vec<Vec<(LocalId, usize)>> = vec![Vec::new(); CLUSTER_NODES];
        for &block in &all_blocks {
            // A non-empty subset of the three replicas.
            let mask = 1 + rng.below((1 << CLUSTER_NODES) - 1);
            for (node, held) in holders.iter_mut().enumerate() {
                if mask & (1 << node) != 0 {
                    held.push((block, 2));
                }
            }
        }
        let deleted: Vec<LocalId> = all_blocks
            .iter()
            .copied()
            .take(usize::try_from(shape.deleted).unwrap_or(usize::MAX))
            .collect();
        let live = all_blocks
            .iter()
            .filter(|b| !deleted.contains(b))
            .map(|&b| (b, 2))
            .collect();
        let txs = deleted
            .iter()
            .enumerate()
            .map(|(i, &b)| transaction(i as u64 + 1, &[b]))
            .collect();
        Self {
            holders,
            deleted,
            live,
            txs,
        }
    }

    /// dn1..dn3, each holding its blocks, QUASI_CLOSED.
    fn replicas<F: ReplicaFactory>(&self, factory: &F) -> Result<Vec<Arc<F::Replica>>, Violation> {
        self.holders
            .iter()
            .enumerate()
            .map(|(i, held)| {
                factory
                    .create(DatanodeId(i as u64 + 1), ContainerState::QuasiClosed, held)
                    .map(Arc::new)
            })
            .collect::<Result<_, _>>()
            .map_err(setup)
    }
}

/// A datanode's service thread: `passes` deleting passes, the transactions stored before
/// pass `deliver_after` (or after the last).
fn spawn_deleting_service<R: KeyValueContainerApi>(
    node: Arc<R>,
    txs: Vec<DeletedBlocksTransaction>,
    deliver_after: usize,
    passes: usize,
) -> thread::JoinHandle<Result<Vec<()>, Violation>> {
    let name = format!("deleting service {}", node.datanode());
    thread::spawn_named(&name, move || {
        for pass in 0..=passes {
            if pass == deliver_after {
                node.store_delete_transactions(&txs).map_err(setup)?;
            }
            if pass < passes {
                node.run_block_deleting_pass().map_err(setup)?;
            }
        }
        Ok(Vec::<()>::new())
    })
}

/// The repair thread's operations for datanode `index`: a reconciliation with another
/// datanode (three in four) or a scan (`None`).
fn draw_repair_ops(rng: &mut SeededRng, index: usize, count: usize) -> Vec<Option<usize>> {
    (0..count)
        .map(|_| {
            if rng.chance(75) {
                let other = 1 + rng.below(CLUSTER_NODES as u64 - 1) as usize;
                Some((index + other) % CLUSTER_NODES)
            } else {
                None
            }
        })
        .collect()
}

/// A datanode's repair thread: runs `ops` on `nodes[index]`.
fn spawn_repairs<R: KeyValueContainerApi>(
    nodes: Vec<Arc<R>>,
    index: usize,
    ops: Vec<Option<usize>>,
) -> thread::JoinHandle<Result<Vec<()>, Violation>> {
    let name = format!("reconciler {}", nodes[index].datanode());
    thread::spawn_named(&name, move || {
        let node = &nodes[index];
        for op in ops {
            // Failed rounds and scans are outcomes; the invariants judge the end.
            match op {
                Some(peer) => {
                    let _ = node.reconcile_container(&[nodes[peer].peer()]);
                }
                None => {
                    let _ = node.scan_container();
                }
            }
        }
        Ok(Vec::new())
    })
}

/// Quiescence: every transaction stored (a duplicate is acknowledged) and executed
/// everywhere; then no deleted block is live and no metadata lacks its file.
fn check_at_quiescence<R: KeyValueContainerApi>(
    nodes: &[R],
    plan: &ClusterPlan,
) -> Result<(), Violation> {
    for node in nodes {
        node.store_delete_transactions(&plan.txs).map_err(setup)?;
        node.run_block_deleting_pass().map_err(setup)?;
    }
    for node in nodes {
        deleted_blocks_not_live(node, &plan.deleted)?;
        no_metadata_without_file(node)?;
    }
    Ok(())
}

/// A full reconcile round (each replica with every peer), then every invariant.
fn check_after_full_round<R: KeyValueContainerApi>(
    nodes: &[R],
    plan: &ClusterPlan,
) -> Result<(), Violation> {
    for (index, node) in nodes.iter().enumerate() {
        let peers: Vec<Arc<dyn PeerDatanode>> = nodes
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != index)
            .map(|(_, n)| n.peer())
            .collect();
        node.reconcile_container(&peers).map_err(setup)?;
    }
    for node in nodes {
        deleted_blocks_not_live(node, &plan.deleted)?;
        no_metadata_without_file(node)?;
    }
    live_blocks_present(nodes, &plan.live)?;
    for node in nodes {
        deletions_witnessed(node, &plan.deleted)?;
        replica_healthy(node)?;
    }
    replicas_agree_on_the_data_checksum(nodes)
}
