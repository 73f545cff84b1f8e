//! The disk store's commit (issue: every commit rewrote and fsynced the whole database
//! file, 1.2 / 14 / 182 ms at 1k / 10k / 100k blocks, so a repair of 100k blocks was
//! quadratic): one batch putting one block's metadata, durable when it returns, on a
//! replica already holding N = 1k, 10k, 100k blocks. Goal: at 100k at least 50× under
//! 182 ms, and sub-linear growth in N.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

use hadoop_ref::datanode::container::disk::DiskStore;
use hadoop_ref::datanode::container::store::{BlockData, ChunkInfo, ContainerStore, MetadataBatch};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::sim::replica_node::CONTAINER;

const SIZES: [u64; 3] = [1_000, 10_000, 100_000];

/// Block `id` with one 4 KiB chunk, as reconciliation commits it.
fn block(id: u64) -> BlockData {
    BlockData::new(id, [ChunkInfo::for_data(0, &[7; 4096], 1024)])
}

fn commit_one_block(c: &mut Criterion) {
    let mut group = c.benchmark_group("disk_commit_one_block");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for n in SIZES {
        // Under the target directory: a real disk, where the fsync costs what it costs.
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a temporary directory");
        let store = DiskStore::open(dir.path(), CONTAINER, ContainerState::Closed)
            .expect("the replica opens");
        store
            .commit(MetadataBatch {
                put_blocks: (0..n).map(block).collect(),
                ..MetadataBatch::default()
            })
            .expect("the replica fills");
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            let mut next = n;
            b.iter(|| {
                next += 1;
                store
                    .commit(MetadataBatch {
                        put_blocks: vec![block(next)],
                        ..MetadataBatch::default()
                    })
                    .expect("the commit is durable");
            });
        });
    }
    group.finish();
}

criterion_group!(benches, commit_one_block);
criterion_main!(benches);
