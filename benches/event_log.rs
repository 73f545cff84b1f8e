//! What checking an event log costs: a `MiniOzoneCluster` of 3 SCMs and 10 datanodes,
//! recorded through the event log writer while it writes, deletes and repairs keys across
//! leader transfers and a datanode restart, then read back (`parse`: the reader alone)
//! and judged by every monitor (`check`: what `cargo soak check-log` does in its one
//! pass). Throughput in events per second; the log is held in memory, so disk speed is
//! not measured.

use std::io::Cursor;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use hadoop_ref::check::monitor::offline::check_reader;
use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;
use hadoop_ref::story::{EventLogReader, EventLogWriter};
use hadoop_ref::unmodelled::Shared;

/// A writer into a shared buffer.
struct Buffer(Shared<Vec<u8>>);

impl std::io::Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.with(|b| b.extend_from_slice(bytes));
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The event log of a cluster's busy life, and its number of events.
fn cluster_log() -> (Vec<u8>, u64) {
    let buffer = Shared::new(Vec::new());
    let log = EventLogWriter::new(Buffer(buffer.clone()));
    log.recorder().install(|| {
        let cluster = MiniOzoneCluster::builder()
            .scms(3)
            .datanodes(10)
            .build()
            .expect("the cluster starts");
        for round in 0..4 {
            let keys: Vec<_> = (0..10)
                .map(|_| cluster.write_key(4).expect("a key is written"))
                .collect();
            cluster
                .transfer_leadership((round + 1) % 3)
                .expect("leadership moves");
            for key in keys.iter().step_by(2) {
                cluster.delete_key(key).expect("a key is deleted");
            }
            cluster
                .restart_datanode(round)
                .expect("a datanode restarts");
            cluster
                .run_until_quiescent(100)
                .expect("the cluster settles");
            // A container still open is not eligible for a repair: then none is sent.
            if cluster.reconcile(keys[1].container).is_ok() {
                cluster
                    .run_until_quiescent(100)
                    .expect("the repair settles");
            }
        }
    });
    log.flush().expect("in memory");
    let events = log.lines();
    (buffer.with(std::mem::take), events)
}

fn event_log(c: &mut Criterion) {
    let (bytes, events) = cluster_log();
    let mut group = c.benchmark_group("event_log");
    group
        .throughput(Throughput::Elements(events))
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    group.bench_function("parse", |b| {
        b.iter(|| {
            let read = EventLogReader::new(Cursor::new(&bytes))
                .filter(Result::is_ok)
                .count();
            assert_eq!(u64::try_from(read).ok(), Some(events));
        });
    });
    group.bench_function("check", |b| {
        b.iter(|| {
            let check = check_reader(Cursor::new(&bytes)).expect("a well-formed log");
            assert_eq!(u64::try_from(check.events).ok(), Some(events));
        });
    });
    group.finish();
}

criterion_group!(benches, event_log);
criterion_main!(benches);
