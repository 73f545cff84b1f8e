//! Container reconciliation (HDDS-16811): the cost of the patched commit's check that the
//! tree does not mark a repaired block deleted, with the tree manager's generation check
//! against re-reading and parsing the tree file for every block (the seed's patch), for a
//! replica whose tree has N = 1k, 10k, 100k entries; and whole repairs of a replica
//! holding N blocks and missing N others. Goal: at 100k the check costs at least 100×
//! less with the generation check, and the check overhead of repairing 100k blocks stays
//! under 1 s. `replica_trait_vs_concrete`: a repair of 1k missing blocks and a read of
//! every block's metadata and tree entry, on the concrete `ReplicaNode` and through the
//! `KeyValueContainerApi` boundary (goal: within noise).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

use hadoop_ref::datanode::container::{
    ContainerBehavior, ContainerConfig, KeyValueContainerApi, TreeEntry,
};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::DatanodeId;
use hadoop_ref::hdds::ids::LocalId;
use hadoop_ref::sim::replica_node::{CONTAINER, ReplicaNode};
use hadoop_ref::unmodelled::Stopwatch;

const SIZES: [u64; 3] = [1_000, 10_000, 100_000];

fn config(generation_check: bool) -> ContainerConfig {
    ContainerConfig {
        tree_generation_check: generation_check,
        ..ContainerConfig::new(ContainerBehavior::Hardened)
    }
}

/// A replica holding blocks `first..first + count`, one chunk each, its tree built.
fn replica(dn: u64, generation_check: bool, first: LocalId, count: u64) -> ReplicaNode {
    let blocks: Vec<(LocalId, usize)> = (first..first + count).map(|b| (b, 1)).collect();
    ReplicaNode::new(
        DatanodeId(dn),
        config(generation_check),
        ContainerState::QuasiClosed,
        &blocks,
    )
    .expect("the bench replica builds")
}

fn mode(generation_check: bool) -> &'static str {
    if generation_check {
        "generation"
    } else {
        "reread"
    }
}

/// Time per commit check, measured directly, and the check overhead of repairing `n`
/// blocks (n checks) extrapolated from it.
fn report_check_overhead() {
    for n in SIZES {
        let mut per_check_s = [0.0f64; 2];
        for (i, generation_check) in [true, false].into_iter().enumerate() {
            let node = replica(1, generation_check, 1, n);
            let container = node.container().expect("replica present");
            // Enough checks for a stable figure, few enough to keep the bench short.
            let checks = if generation_check {
                n
            } else {
                (2_000_000 / n).clamp(10, n)
            };
            let stopwatch = Stopwatch::start();
            for k in 0..checks {
                black_box(
                    container
                        .tree_marks_deleted(1 + k % n)
                        .expect("tree readable"),
                );
            }
            per_check_s[i] = stopwatch.elapsed().as_secs_f64() / checks as f64;
        }
        let [generation, reread] = per_check_s;
        println!(
            "check overhead, tree of {n} entries: generation {:.3} µs/check, reread {:.1} µs/check \
             ({:.0}x); repairing {n} blocks: {:.2} ms vs {:.1} s",
            generation * 1e6,
            reread * 1e6,
            reread / generation,
            generation * n as f64 * 1e3,
            reread * n as f64,
        );
    }
}

fn commit_check(c: &mut Criterion) {
    report_check_overhead();
    let mut group = c.benchmark_group("commit_check");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(1));
    for n in SIZES {
        for generation_check in [true, false] {
            let node = replica(1, generation_check, 1, n);
            let container = node.container().expect("replica present");
            group.bench_with_input(BenchmarkId::new(mode(generation_check), n), &n, |b, &n| {
                let mut k = 0;
                b.iter(|| {
                    k = (k + 1) % n;
                    black_box(container.tree_marks_deleted(1 + k).expect("tree readable"))
                });
            });
        }
    }
    group.finish();
}

fn repair(c: &mut Criterion) {
    let mut group = c.benchmark_group("repair_missing_blocks");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(2));
    // Re-reading per block is quadratic: 10k would take about a minute per sample.
    for (n, modes) in [
        (1_000u64, &[true, false][..]),
        (10_000, &[true][..]),
        (100_000, &[true][..]),
    ] {
        let peer = replica(2, true, 1, 2 * n);
        group.throughput(Throughput::Elements(n));
        for &generation_check in modes {
            group.bench_with_input(BenchmarkId::new(mode(generation_check), n), &n, |b, &n| {
                b.iter_batched(
                    || replica(1, generation_check, 1, n),
                    |local| {
                        let report = local
                            .handler
                            .reconcile_without_scan(CONTAINER, &[peer.peer()])
                            .expect("reconciliation runs");
                        assert_eq!(report.committed().len() as u64, n);
                    },
                    BatchSize::PerIteration,
                );
            });
        }
    }
    group.finish();
}

/// A repair of `TRAIT_BLOCKS` missing blocks and a read of every block, on the concrete
/// type and through the boundary trait monomorphised.
fn trait_vs_concrete(c: &mut Criterion) {
    const TRAIT_BLOCKS: u64 = 1_000;
    let mut group = c.benchmark_group("replica_trait_vs_concrete");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(TRAIT_BLOCKS));
    let peer = replica(2, true, 1, 2 * TRAIT_BLOCKS);
    let fresh = || replica(1, true, 1, TRAIT_BLOCKS);
    group.bench_function("concrete", |b| {
        b.iter_batched(
            fresh,
            |local| {
                let report = local
                    .handler
                    .reconcile_without_scan(CONTAINER, &[peer.peer()])
                    .expect("reconciliation runs");
                let mut live = 0;
                for block in 1..=2 * TRAIT_BLOCKS {
                    let marked = local.tree_entry_deleted(block).expect("tree readable");
                    let data = local.store.get_block(block).expect("readable");
                    live += usize::from(data.is_some() && marked != Some(true));
                }
                black_box((report.committed().len(), live))
            },
            BatchSize::PerIteration,
        );
    });
    group.bench_function("generic_KeyValueContainerApi", |b| {
        b.iter_batched(
            fresh,
            |local| repair_through(&local, &peer, TRAIT_BLOCKS),
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

/// [`trait_vs_concrete`]'s repair and read through the boundary trait.
fn repair_through<R: KeyValueContainerApi>(local: &R, peer: &R, blocks: u64) -> usize {
    local
        .reconcile_without_scan(&[peer.peer()])
        .expect("reconciliation runs");
    let mut live = 0;
    for block in 1..=2 * blocks {
        let entry = local.tree_entry(block).expect("tree readable");
        let data = local.block(block).expect("readable");
        live += usize::from(data.is_some() && entry != TreeEntry::Deleted);
    }
    black_box(live)
}

criterion_group!(benches, commit_check, repair, trait_vs_concrete);
criterion_main!(benches);
