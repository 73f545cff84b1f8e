//! HA standby (HDFS-2742): a full block report of 100k and 1M blocks, with 0%, 1% and 10%
//! of its entries from the future (a GS the standby has not replayed), processed by a
//! standby in steady state (every other replica already a location). Goal: at least 1M
//! replicas/s, and the memory a report leaves behind proportional to the entries it
//! queued, never to the report.
//!
//! `standby_report_trait_vs_concrete`: one 100k-entry report on `Namesystem` itself and
//! through `Arc<dyn NamesystemApi>`, the boundary the NameNode calls (goal: within noise).
//!
//! Time per report is criterion's; memory is measured once per case with a counting
//! allocator and printed: the bytes the report kept (the queued entries), the bytes per
//! queued entry, and the transient peak while it ran.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

use hadoop_ref::namenode::DatanodeId;
use hadoop_ref::namenode::namesystem::{EditOp, FileId, NamenodeConfig, Namesystem, NamesystemApi};
use hadoop_ref::namenode::{Block, BlockId, ReplicaState, StorageId};
use hadoop_ref::sync::Arc;
use hadoop_ref::unmodelled::CountingAllocator;

#[global_allocator]
static HEAP: CountingAllocator = CountingAllocator::new();

const LENGTH: u64 = 128 << 20;
const GS: i64 = 1_000;
const STORAGE: StorageId = StorageId {
    datanode: DatanodeId(1),
    index: 0,
};

/// A standby that replayed one closed file of `blocks` blocks at GS 1000.
fn standby_with(blocks: usize) -> Namesystem {
    let ns = Namesystem::standby(NamenodeConfig::default(), 0);
    let file = FileId(1);
    let block = |id: usize, length| Block {
        id: BlockId(id as i64),
        gs: GS,
        length,
    };
    let mut edits = Vec::with_capacity(blocks + 3);
    edits.push(EditOp::SetGenstamp(GS));
    edits.push(EditOp::AddFile {
        file,
        replication: 3,
    });
    for id in 0..blocks {
        edits.push(EditOp::AddBlock {
            file,
            penultimate: id.checked_sub(1).map(|p| block(p, LENGTH)),
            last: block(id, 0),
        });
    }
    edits.push(EditOp::Close {
        file,
        blocks: (0..blocks).map(|id| block(id, LENGTH)).collect(),
    });
    assert_eq!(ns.apply_edits(&edits), Ok(edits.len()));
    ns
}

/// `total` entries: the replicas of the namespace's first blocks, FINALIZED, and
/// `future_pct` percent of entries for blocks the standby has not replayed yet.
fn report(total: usize, future_pct: usize) -> (Vec<(Block, ReplicaState)>, usize) {
    let future = total * future_pct / 100;
    let present = total - future;
    let entries = (0..present)
        .map(|id| Block {
            id: BlockId(id as i64),
            gs: GS,
            length: LENGTH,
        })
        .chain((0..future).map(|i| Block {
            id: BlockId((total + i) as i64),
            gs: GS + 1,
            length: LENGTH,
        }))
        .map(|b| (b, ReplicaState::Finalized))
        .collect();
    (entries, present)
}

fn full_block_report(c: &mut Criterion) {
    let mut group = c.benchmark_group("standby_full_block_report");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(8));
    for total in [100_000usize, 1_000_000] {
        for future_pct in [0usize, 1, 10] {
            let (entries, present) = report(total, future_pct);
            let ns = standby_with(present);
            // Steady state: the present replicas are locations already.
            ns.full_report(STORAGE, &entries[..present]);
            let before = HEAP.live_bytes();
            HEAP.reset_peak();
            ns.full_report(STORAGE, &entries);
            let kept = HEAP.live_bytes().saturating_sub(before);
            let peak = HEAP.peak_bytes().saturating_sub(before);
            let queued = ns.queue_metrics().count;
            eprintln!(
                "standby report {total} entries, {future_pct}% future: {queued} queued, \
                 {kept} bytes kept ({} per queued entry), transient peak {peak} bytes \
                 (report itself {} bytes)",
                kept.checked_div(queued).unwrap_or(0),
                std::mem::size_of_val(entries.as_slice()),
            );
            group.throughput(Throughput::Elements(total as u64));
            group.bench_with_input(
                BenchmarkId::new(format!("{future_pct}pct_future"), total),
                &entries,
                |b, entries| b.iter(|| ns.full_report(STORAGE, black_box(entries))),
            );
        }
    }
    group.finish();
}

/// The same 100k-entry steady-state report (1% future) through the boundary trait, as the
/// NameNode and its tailer call it (`Arc<dyn NamesystemApi>`), and on the concrete type.
/// Goal: within noise.
fn full_block_report_through_the_boundary(c: &mut Criterion) {
    let mut group = c.benchmark_group("standby_report_trait_vs_concrete");
    group.sample_size(20);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(6));
    let total = 100_000;
    let (entries, present) = report(total, 1);
    let concrete = standby_with(present);
    concrete.full_report(STORAGE, &entries[..present]);
    let boundary: Arc<dyn NamesystemApi> = Arc::new(standby_with(present));
    boundary.full_report(STORAGE, &entries[..present]);
    group.throughput(Throughput::Elements(total as u64));
    group.bench_function("concrete", |b| {
        b.iter(|| concrete.full_report(STORAGE, black_box(&entries)))
    });
    group.bench_function("dyn_NamesystemApi", |b| {
        b.iter(|| boundary.full_report(STORAGE, black_box(&entries)))
    });
    group.finish();
}

criterion_group!(
    benches,
    full_block_report,
    full_block_report_through_the_boundary
);
criterion_main!(benches);
