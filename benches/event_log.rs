//! What checking an event log costs: a `MiniOzoneCluster` of 3 SCMs and 10 datanodes,
//! recorded through the event log writer while it writes, deletes and repairs keys across
//! leader transfers and a datanode restart, then read back (`parse`: the reader alone)
//! and judged by every monitor (`check`: what `cargo soak check-log` does in its one
//! pass). Throughput in events per second; the log is held in memory, so disk speed is
//! not measured.
//!
//! And what the monitors cost inline, over the same events already recorded (`inline`):
//! every monitor given every event it wants (`all`, as `check` but without reading),
//! only those its verdict reads (`verdicts_only`, the soak's set), and a sequence judged
//! before walked again by [`JudgedOnce`] (`repeat`: what a repeated execution costs).
//!
//! And what `check-log` costs against reading the same files line by line, the limit of
//! reading them (`files`): the cluster's log cut into event logs of 64 events (as the
//! soak writes them, many small files), whole (one large file), and a datanode's upstream
//! log split in two files merged by their timestamps (`--merge`). `lines` reads every
//! line of the files and nothing more; `check` is what `check-log` does with them, one
//! checker for all the files (`LogChecker`). Throughput in events (lines for the merge).
//!
//! And what reading upstream's own logs costs (`upstream_logs`): a NameNode's and a
//! datanode's log written as upstream writes them, mostly lines of no statement the
//! parsers map (RPC, audit, heartbeats) with the ones they map mixed in (a standby's
//! replica reports and their outcomes, replayed edits at TRACE; deleting tasks, repairs,
//! replication tasks), read by the format's reader alone (`parse`) and judged
//! (`check`). Throughput in lines per second.

use std::io::Cursor;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use hadoop_ref::check::monitor::MonitorSet;
use hadoop_ref::check::monitor::memo::JudgedOnce;
use hadoop_ref::check::monitor::offline::{LogChecker, LogSource, check_reader, check_reader_as};
use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;
use hadoop_ref::story::upstream::{UpstreamFormat, UpstreamReader};
use hadoop_ref::story::{Event, EventLogReader, EventLogWriter, EventSink, LogFormat, LogRecord};
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
        let mut record = LogRecord {
            event: Event::default(),
            time_ms: None,
            line: 0,
        };
        b.iter(|| {
            let mut reader = EventLogReader::new(Cursor::new(&bytes));
            let mut read = 0;
            while reader.read_into(&mut record).expect("a well-formed log") {
                read += 1;
            }
            assert_eq!(read, events);
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

/// Hands `sink` the events it wants, as a recorder does.
fn hand(sink: &mut impl EventSink, events: &[Event]) {
    for event in events {
        if sink.wants(&event.component, &event.name) {
            sink.event(event);
        }
    }
}

fn inline(c: &mut Criterion) {
    let (bytes, _) = cluster_log();
    let events: Vec<Event> = EventLogReader::new(Cursor::new(&bytes))
        .map(|record| record.expect("a well-formed log").event)
        .collect();
    let mut group = c.benchmark_group("inline");
    group
        .throughput(Throughput::Elements(events.len() as u64))
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    for (name, mut set) in [
        ("all", MonitorSet::all()),
        ("verdicts_only", MonitorSet::verdicts_only()),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                set.reset();
                hand(&mut set, &events);
                set.violations()
            });
        });
    }
    let mut judged = JudgedOnce::new(MonitorSet::verdicts_only());
    group.bench_function("repeat", |b| {
        b.iter(|| {
            judged.reset();
            hand(&mut judged, &events);
            judged.violations()
        });
    });
    assert!(
        judged.repeats() + 1 >= judged.executions(),
        "every pass after the first repeats"
    );
    group.finish();
}

/// A line of Hadoop's layout at `n` milliseconds past 10:00.
fn hadoop_line(out: &mut String, n: usize, level: &str, logger: &str, message: &str) {
    use std::fmt::Write as _;
    let (s, ms) = ((n / 1000) % 60, n % 1000);
    let _ = writeln!(
        out,
        "2025-03-01 10:00:{s:02},{ms:03} {level} {logger}: {message}"
    );
}

/// A standby NameNode's log of `blocks` blocks: each replayed (TRACE), reported twice
/// by three datanodes (DEBUG), stored, with nine unmapped lines for each mapped one.
fn namenode_log(blocks: usize) -> (Vec<u8>, u64) {
    const BM: &str = "org.apache.hadoop.hdfs.server.blockmanagement.BlockManager";
    const LOADER: &str = "org.apache.hadoop.hdfs.server.namenode.FSEditLogLoader";
    let mut out = String::new();
    let mut n = 0;
    let mut line = |out: &mut String, level: &str, logger: &str, message: &str| {
        n += 1;
        hadoop_line(out, n, level, logger, message);
    };
    line(
        &mut out,
        "INFO",
        "org.apache.hadoop.hdfs.server.namenode.FSNamesystem",
        "Starting services required for standby state",
    );
    for b in 0..blocks {
        let id = 1_073_741_825 + b;
        let op = format!(
            "CloseOp [length=0, inodeId={b}, path=/data/part-{b}, replication=3, mtime=1, atime=1, blockSize=134217728, blocks=[blk_{id}_1001], permissions=hdfs:supergroup:rw-r--r--, aclEntries=null, clientName=, clientMachine=, overwrite=false, storagePolicyId=0, erasureCodingPolicyId=0, opCode=OP_CLOSE, txid={b}]"
        );
        line(
            &mut out,
            "TRACE",
            LOADER,
            &format!("replaying edit log: {op}"),
        );
        for dn in 1..=3 {
            let report = format!(
                "Reported block blk_{id}_1001 on 10.0.0.{dn}:9866 size 1024 replicaState = FINALIZED"
            );
            line(&mut out, "DEBUG", BM, &report);
            line(&mut out, "DEBUG", BM, &report);
            let stored = format!(
                "BLOCK* addStoredBlock: blockMap updated: 10.0.0.{dn}:9866 is added to blk_{id}_1001 size 1024"
            );
            line(&mut out, "DEBUG", "BlockStateChange", &stored);
        }
        for i in 0..90 {
            let other = format!(
                "IPC Server handler {} on default port 8020, call Call#{b} Retry#0 org.apache.hadoop.hdfs.protocol.ClientProtocol.getFileInfo from 10.0.1.{i}:4{i:04}",
                i % 10
            );
            line(&mut out, "INFO", "org.apache.hadoop.ipc.Server", &other);
        }
    }
    let lines = out.lines().count() as u64;
    (out.into_bytes(), lines)
}

/// An Ozone line (`%d{ISO8601} [%t] %-5p %c{2}: %m`) at `n` milliseconds past 10:00.
fn ozone_line(out: &mut String, n: usize, thread: &str, level: &str, logger: &str, message: &str) {
    use std::fmt::Write as _;
    let (s, ms) = ((n / 1000) % 60, n % 1000);
    let _ = writeln!(
        out,
        "2025-03-01 10:00:{s:02},{ms:03} [{thread}] {level:<5} {logger}: {message}"
    );
}

/// A datanode's log of `containers` containers: a deleting task over four blocks and a
/// replication of each, with nine unmapped lines for each mapped one.
fn datanode_log(containers: usize) -> (Vec<u8>, u64) {
    let mut out = String::new();
    let mut n = 0;
    let mut line = |out: &mut String, thread: &str, level: &str, logger: &str, message: &str| {
        n += 1;
        ozone_line(out, n, thread, level, logger, message);
    };
    for c in 0..containers {
        let data = format!(
            "KeyValueContainerData #{c} (CLOSED, non-empty, ri=0, origin=[dn_a, pipeline_b]), delBlocks: 4"
        );
        line(
            &mut out,
            "BlockDeletingService#0",
            "DEBUG",
            "background.BlockDeletingTask",
            &data,
        );
        for b in 0..4 {
            line(
                &mut out,
                "BlockDeletingService#0",
                "DEBUG",
                "background.BlockDeletingTask",
                &format!("Deleting block {}", c * 4 + b),
            );
        }
        let task = format!(
            "Successful DONE replicateContainerCommand: cmdID: {c}, encodedToken: \"\", term: 2, deadlineMsSinceEpoch: 0, containerId={c}, replicaIndex=0, targetNode=dn2, priority=NORMAL"
        );
        line(
            &mut out,
            "ContainerReplicationThread-0",
            "INFO",
            "replication.ReplicationSupervisor",
            &task,
        );
        for i in 0..54 {
            let other = format!("Executing cycle Number : {}", c * 54 + i);
            line(
                &mut out,
                "Datanode State Machine Daemon Thread",
                "DEBUG",
                "statemachine.DatanodeStateMachine",
                &other,
            );
        }
    }
    let lines = out.lines().count() as u64;
    (out.into_bytes(), lines)
}

fn upstream_logs(c: &mut Criterion) {
    let logs = [
        (
            "namenode",
            UpstreamFormat::HdfsNamenode,
            namenode_log(2_000),
        ),
        (
            "datanode",
            UpstreamFormat::OzoneDatanode,
            datanode_log(3_000),
        ),
    ];
    let mut group = c.benchmark_group("upstream_logs");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    for (name, format, (bytes, lines)) in &logs {
        group.throughput(Throughput::Elements(*lines));
        group.bench_function(format!("{name}/parse"), |b| {
            b.iter(|| {
                let mut reader = UpstreamReader::new(*format, "p", Cursor::new(bytes));
                let events = reader.by_ref().filter(Result::is_ok).count();
                assert!(events > 0);
                assert_eq!(u64::try_from(reader.stats().lines).ok(), Some(*lines));
            });
        });
        group.bench_function(format!("{name}/check"), |b| {
            b.iter(|| {
                let check = check_reader_as(LogFormat::Upstream(*format), "p", Cursor::new(bytes))
                    .expect("a readable log");
                assert!(check.events > 0);
            });
        });
    }
    group.finish();
}

/// Reads every line of the files at `paths` and nothing more; returns the lines.
fn read_lines(paths: &[std::path::PathBuf]) -> u64 {
    use std::io::BufRead;
    let mut line = Vec::new();
    let mut lines = 0;
    for path in paths {
        let file = std::fs::File::open(path).expect("a written file");
        let mut reader = std::io::BufReader::new(file);
        loop {
            line.clear();
            let read = reader.read_until(b'\n', &mut line).expect("readable");
            if read == 0 {
                break;
            }
            lines += 1;
        }
    }
    lines
}

/// Writes `chunks` of lines as files named `NAME.NNNNN.EXT` in `dir`; their paths.
fn write_files<'a>(
    dir: &std::path::Path,
    name: &str,
    ext: &str,
    chunks: impl Iterator<Item = &'a [&'a str]>,
) -> Vec<std::path::PathBuf> {
    chunks
        .enumerate()
        .map(|(i, lines)| {
            let path = dir.join(format!("{name}.{i:05}.{ext}"));
            let mut text = lines.join("\n");
            text.push('\n');
            std::fs::write(&path, text).expect("a scratch file");
            path
        })
        .collect()
}

fn files(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let (bytes, events) = cluster_log();
    let text = String::from_utf8(bytes).expect("UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    let small = write_files(dir.path(), "small", "ndjson", lines.chunks(64));
    let large = write_files(dir.path(), "large", "ndjson", std::iter::once(&lines[..]));
    let (datanode, datanode_lines) = datanode_log(3_000);
    let datanode = String::from_utf8(datanode).expect("UTF-8");
    // Two halves, every other line: each half is in time order, as a process's log is.
    let halves: Vec<Vec<&str>> = (0..2)
        .map(|half| datanode.lines().skip(half).step_by(2).collect())
        .collect();
    let merged = write_files(dir.path(), "dn1", "log", halves.iter().map(Vec::as_slice));
    let mut group = c.benchmark_group("files");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    for (name, paths) in [("small_files", &small), ("one_file", &large)] {
        group.throughput(Throughput::Elements(events));
        group.bench_function(format!("{name}/lines"), |b| {
            b.iter(|| assert_eq!(read_lines(paths), events));
        });
        group.bench_function(format!("{name}/check"), |b| {
            let mut checker = LogChecker::default();
            b.iter(|| {
                let mut checked = 0;
                for path in paths {
                    let source = LogSource::new(LogFormat::Ndjson, path);
                    checked += checker.check_run(&[source]).expect("a log").events;
                }
                assert_eq!(u64::try_from(checked).ok(), Some(events));
            });
        });
    }
    group.throughput(Throughput::Elements(datanode_lines));
    group.bench_function("merge/lines", |b| {
        b.iter(|| assert_eq!(read_lines(&merged), datanode_lines));
    });
    group.bench_function("merge/check", |b| {
        let format = LogFormat::Upstream(UpstreamFormat::OzoneDatanode);
        let sources: Vec<LogSource> = merged
            .iter()
            .map(|path| LogSource::new(format, path).with_node("dn1"))
            .collect();
        let mut checker = LogChecker::default();
        b.iter(|| assert!(checker.check_run(&sources).expect("logs").events > 0));
    });
    group.finish();
}

criterion_group!(benches, event_log, inline, upstream_logs, files);
criterion_main!(benches);
