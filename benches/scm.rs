//! SCM pending allocations (HDDS-16891): the rebuild an SCM runs when it becomes the
//! serving leader, for 10k, 100k and 1M OPEN containers over 10k datanodes; and container
//! allocation throughput (one random pipeline of 3 333 per allocation) with 1 and 2 client
//! threads. Both run `ScmBehavior::Hardened`. Goal: 1M containers rebuilt in under
//! 1 s on a 2-core machine, growing linearly.
//!
//! `scm_trait_vs_concrete`: one allocation, the container reports of its three replicas
//! and a pending read on a serving leader, on `StorageContainerManager` itself, through
//! `PendingContainerTrackerApi` monomorphised (as the scenarios call it), and through
//! `&dyn PendingContainerTrackerApi` (goal: within noise).

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

use hadoop_ref::clock::ManualClock;
use hadoop_ref::hdds::container::{ContainerReplicaReport, ContainerState};
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, PipelineId, ScmId};
use hadoop_ref::hdds::report::StorageReport;
use hadoop_ref::scm::ha::{ScmDb, Snapshot};
use hadoop_ref::scm::{
    ContainerInfo, DatanodeDetails, LifeCycleState, PendingContainerTrackerApi, Pipeline,
    ScmBehavior, ScmConfig, StorageContainerManager,
};
use hadoop_ref::sim::ratis::SimulatedRatis;
use hadoop_ref::sync::{Arc, thread};
use hadoop_ref::unmodelled::Stopwatch;

const DATANODES: u64 = 10_000;
const CONTAINER_SIZE: u64 = 5 << 30;

fn pipelines() -> Vec<Pipeline> {
    (0..DATANODES / 3)
        .map(|p| Pipeline {
            id: PipelineId(p),
            nodes: (0..3).map(|i| DatanodeId(p * 3 + i)).collect(),
        })
        .collect()
}

/// A serving leader over 10k datanodes with room for a million containers each, and
/// `open` OPEN containers spread over the pipelines (loaded from its database).
fn leader(open: u64) -> (StorageContainerManager, SimulatedRatis) {
    let pipelines = pipelines();
    let containers: BTreeMap<ContainerId, ContainerInfo> = (0..open)
        .map(|c| {
            let info = ContainerInfo {
                id: ContainerId(c),
                state: LifeCycleState::Open,
                pipeline: pipelines[(c % pipelines.len() as u64) as usize].id,
                sequence_id: 0,
            };
            (info.id, info)
        })
        .collect();
    let db = Arc::new(ScmDb::new());
    db.install(Snapshot {
        index: 0,
        containers,
        ..Snapshot::default()
    });
    let ring = SimulatedRatis::new();
    let config = ScmConfig {
        container_size: CONTAINER_SIZE,
        ..ScmConfig::with_pipelines(pipelines)
    };
    let scm = StorageContainerManager::new(
        ScmId(1),
        ScmBehavior::Hardened,
        config,
        ring.log(),
        db,
        ManualClock::new(0).shared(),
    )
    .expect("valid config");
    for dn in 0..DATANODES {
        scm.register_datanode(
            &DatanodeDetails::new(DatanodeId(dn)),
            vec![StorageReport::new(CONTAINER_SIZE << 20, 0, 0)],
        );
    }
    (scm, ring)
}

fn rebuild(c: &mut Criterion) {
    let mut group = c.benchmark_group("rebuild_10k_datanodes");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    for open in [10_000u64, 100_000, 1_000_000] {
        let (scm, _ring) = leader(open);
        group.throughput(Throughput::Elements(open));
        group.bench_with_input(BenchmarkId::from_parameter(open), &open, |b, _| {
            b.iter(|| scm.rebuild_pending_allocations());
        });
    }
    group.finish();
}

fn allocation(c: &mut Criterion) {
    let mut group = c.benchmark_group("allocate_container");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    for threads in [1u64, 2] {
        group.throughput(Throughput::Elements(threads));
        group.bench_with_input(
            BenchmarkId::new("threads", threads),
            &threads,
            |b, &threads| {
                b.iter_custom(|iterations| {
                    let (scm, ring) = leader(0);
                    scm.exit_safe_mode();
                    scm.notify_leader_changed(ring.elect(ScmId(1)));
                    scm.notify_leader_ready();
                    let scm = Arc::new(scm);
                    let stopwatch = Stopwatch::start();
                    let handles: Vec<_> = (0..threads)
                        .map(|_| {
                            let scm = Arc::clone(&scm);
                            thread::spawn(move || {
                                for _ in 0..iterations {
                                    scm.allocate_container().expect("room for every container");
                                }
                            })
                        })
                        .collect();
                    for handle in handles {
                        handle.join().expect("allocation thread");
                    }
                    stopwatch.elapsed()
                });
            },
        );
    }
    group.finish();
}

/// A serving leader over 10k datanodes, no container yet.
fn serving_leader() -> (StorageContainerManager, SimulatedRatis) {
    let (scm, ring) = leader(0);
    scm.exit_safe_mode();
    scm.notify_leader_changed(ring.elect(ScmId(1)));
    scm.notify_leader_ready();
    (scm, ring)
}

/// One allocation, its replicas' container reports, and a pending read: on the concrete
/// type, through the boundary trait monomorphised, and through `&dyn`.
fn trait_vs_concrete(c: &mut Criterion) {
    let mut group = c.benchmark_group("scm_trait_vs_concrete");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    let (concrete, _ring) = serving_leader();
    group.bench_function("concrete", |b| {
        b.iter(|| {
            let id = concrete.allocate_container().expect("room");
            let pipeline = concrete.container(id).expect("applied").pipeline;
            let mut pending = 0;
            for dn in (0..3).map(|i| DatanodeId(pipeline.0 * 3 + i)) {
                let report = ContainerReplicaReport::new(id, ContainerState::Open, dn);
                concrete
                    .process_container_report(dn, &[report])
                    .expect("known");
                pending += concrete.pending(dn).expect("registered").len();
            }
            black_box(pending)
        })
    });
    let (generic, _ring) = serving_leader();
    group.bench_function("generic_PendingContainerTrackerApi", |b| {
        b.iter(|| round_trip(&generic))
    });
    let (dynamic, _ring) = serving_leader();
    let dynamic: &dyn PendingContainerTrackerApi = &dynamic;
    group.bench_function("dyn_PendingContainerTrackerApi", |b| {
        b.iter(|| round_trip(dynamic))
    });
    group.finish();
}

/// [`trait_vs_concrete`]'s round through the boundary trait.
fn round_trip<S: PendingContainerTrackerApi + ?Sized>(scm: &S) -> usize {
    let id = scm.allocate_container().expect("room");
    let pipeline = scm.container(id).expect("applied").pipeline;
    let mut pending = 0;
    for dn in (0..3).map(|i| DatanodeId(pipeline.0 * 3 + i)) {
        let report = ContainerReplicaReport::new(id, ContainerState::Open, dn);
        scm.process_container_report(dn, &[report]).expect("known");
        pending += scm.pending(dn).expect("registered").len();
    }
    black_box(pending)
}

criterion_group!(benches, rebuild, allocation, trait_vs_concrete);
criterion_main!(benches);
