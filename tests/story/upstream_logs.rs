//! The readers of upstream's own logs: every statement a format claims, written as
//! upstream writes it (its format string with values in), yields the events the format
//! says, with fields of the glossary; the accepted layouts are taken apart; a line of no statement is skipped and
//! counted; an over-long or non-UTF-8 line is an error naming its line, and no input
//! makes a reader panic.

use std::collections::BTreeSet;
use std::io::Cursor;
use std::path::Path;

use hadoop_ref::story::upstream::layout::{self, Level};
use hadoop_ref::story::upstream::{
    MAX_UPSTREAM_LINE_BYTES, ReadStats, Statement, UpstreamFormat, UpstreamReader, hdfs_namenode,
    node_from_file_name, ozone_datanode, ozone_scm,
};
use hadoop_ref::story::{Event, LogError};
use proptest::prelude::*;

/// `template` with each `{}` replaced by the next of `values`.
fn fill(template: &str, values: &[&str]) -> String {
    let mut out = String::new();
    let mut values = values.iter();
    let mut pieces = template.split("{}").peekable();
    while let Some(piece) = pieces.next() {
        out.push_str(piece);
        if pieces.peek().is_some() {
            out.push_str(values.next().expect("a value for every {}"));
        }
    }
    out
}

/// A line of Ozone's layout, `%d{ISO8601} [%t] %-5p %c{2}: %m`.
fn ozone_line(second: u32, thread: &str, level: Level, logger: &str, message: &str) -> String {
    format!(
        "2025-03-01 10:00:{second:02},250 [{thread}] {:<5} {logger}: {message}",
        level.word()
    )
}

fn read(format: UpstreamFormat, text: &str) -> (Vec<Event>, ReadStats) {
    let mut reader = UpstreamReader::new(format, "p1", Cursor::new(text.to_owned()));
    let events = reader
        .by_ref()
        .map(|r| r.expect("a readable log").event)
        .collect();
    (events, reader.stats())
}

/// Feeds each statement, as a line of its class's logger, and checks what it yields.
fn each_statement_yields_what_it_claims<I: std::fmt::Debug>(
    format: UpstreamFormat,
    statements: &[Statement<I>],
    samples: &[&[&str]],
    context_only: &[&str],
) {
    assert_eq!(
        statements.len(),
        samples.len(),
        "a sample for every statement"
    );
    let glossary = crate::test_util::glossary_fields();
    for (statement, values) in statements.iter().zip(samples) {
        let class = if statement.class.is_empty() {
            "Main"
        } else {
            statement.class
        };
        let message = fill(statement.template, values);
        let text = if class == layout::CONTAINER_LOG {
            format!("2025-03-01 10:00:01,000 | INFO  | {message} | \n")
        } else {
            ozone_line(1, "t", statement.level, &format!("pkg.{class}"), &message) + "\n"
        };
        let (events, stats) = read(format, &text);
        assert_eq!(stats.matched, 1, "{:?} matched: {text}", statement.id);
        let claimed: BTreeSet<(&str, &str)> = statement.yields.iter().copied().collect();
        for event in &events {
            let key = (event.component.as_str(), event.name.as_str());
            assert!(claimed.contains(&key), "{:?} yielded {key:?}", statement.id);
            assert_eq!(event.node.as_deref(), Some("p1"));
            for (field, _) in &event.fields {
                assert!(glossary.contains(field), "{key:?}: field {field}");
            }
        }
        let quiet = context_only.contains(&statement.template);
        assert_eq!(events.is_empty(), quiet, "{:?}: {events:?}", statement.id);
    }
}

#[test]
fn every_datanode_statement_yields_the_events_it_claims() {
    let command = "replicateContainerCommand: cmdID: 8, encodedToken: \"\", term: 3, deadlineMsSinceEpoch: 0, containerId=5, replicaIndex=0, targetNode=dn2, priority=NORMAL";
    let task = format!("DONE {command}");
    let samples: &[&[&str]] = &[
        &[" "],
        &[command, "3", "4"],
        &["5000"],
        &["5", "3", "4"],
        &["5", "1700000000000", "1690000000000"],
        &[&task, "3", "4"],
        &[&task, "1970-01-01T00:00:00Z", "2025-03-01T10:00:00Z"],
        &[&task],
        &[&task],
        &["5", "dn2", "1a2b"],
        &["0", "7", "5", "dn2"],
        &["2", "7", "5", "dn2"],
        &["7", "5", "dn2", "1", "2"],
        &["5", "1", "1", "Original data checksum 1a2b was not updated"],
        &[
            "KeyValueContainerData #5 (CLOSED, non-empty, ri=0, origin=[dn_a, pipeline_b])",
            "3",
        ],
        &[
            "KeyValueContainerData #5 (CLOSED, non-empty, ri=0, origin=[dn_a, pipeline_b])",
            "3",
        ],
        &["7"],
        &["5", "0", "12", "DELETED"],
        &["5", "0", "12", "DELETED"],
        &["5", "0", "0", "/data/hdds", "0"],
        &["5", "1a2b"],
        &["5", "9f9f", "1a2b"],
        &["5", "0", "1a2b"],
        &["5", "2025-03-01T10:00:01Z"],
        &["5", "1 error(s): MISSING_DATA_FILE"],
    ];
    let context = [
        ozone_datanode::STATEMENTS[14].template,
        ozone_datanode::STATEMENTS[15].template,
    ];
    each_statement_yields_what_it_claims(
        UpstreamFormat::OzoneDatanode,
        ozone_datanode::STATEMENTS,
        samples,
        &context,
    );
}

const CLOSE: &str = "closeContainerCommand: cmdID: 7, encodedToken: \"\", term: 2, deadlineMsSinceEpoch: 0, containerID: 5, pipelineID: PipelineID=ab, force: false";

#[test]
fn every_proposed_datanode_statement_yields_the_events_it_claims() {
    let delete_blocks = "deleteBlocksCommand: cmdID: 8, encodedToken: \"\", term: 2, deadlineMsSinceEpoch: 0, deletedBlocksTransaction: [{ txnID: 1, containerID: 5, deleteBlockCount: 1, count: 0 }]";
    let delete_container = "deleteContainerCommand: cmdID: 9, encodedToken: \"\", term: 2, deadlineMsSinceEpoch: 0, containerID: 5, replicaIndex: 0, force: false";
    let samples: &[&[&str]] = &[
        &["2"],
        &["1", "2"],
        &["2", "kept for init"],
        &[CLOSE],
        &[CLOSE, "2"],
        &[CLOSE, "done"],
        &[delete_blocks, "done"],
        &[delete_container, "failed: container is not empty"],
        &["7", "5", "dn2", "committed"],
    ];
    each_statement_yields_what_it_claims(
        UpstreamFormat::OzoneDatanode,
        ozone_datanode::PROPOSED,
        samples,
        &[],
    );
}

#[test]
fn every_proposed_scm_statement_yields_the_events_it_claims() {
    let samples: &[&[&str]] = &[
        &[
            "#5",
            "PipelineID=ab",
            "[u1(dn1/10.0.0.1), u2(dn2/10.0.0.2)]",
        ],
        &["u1(dn1/10.0.0.1)", "[#5, #6]"],
        &["u1(dn1/10.0.0.1)", "[#5]"],
        &["#5", "OPEN", "CLOSING"],
        &["3", "2", "0", "0", "0"],
    ];
    each_statement_yields_what_it_claims(
        UpstreamFormat::OzoneScm,
        ozone_scm::PROPOSED,
        samples,
        &[],
    );
}

#[test]
fn every_proposed_namenode_statement_yields_the_events_it_claims() {
    let samples: &[&[&str]] = &[
        &[
            "CloseOp [length=0, inodeId=16386, path=/f, replication=3, mtime=1, atime=1, blockSize=134217728, blocks=[blk_1073741825_1001], permissions=hdfs:supergroup:rw-r--r--, aclEntries=null, clientName=, clientMachine=, overwrite=false, storagePolicyId=0, erasureCodingPolicyId=0, opCode=OP_CLOSE, txid=12]",
        ],
        &["1", "1", "1", "1", "0"],
    ];
    each_statement_yields_what_it_claims(
        UpstreamFormat::HdfsNamenode,
        hdfs_namenode::PROPOSED,
        samples,
        &[],
    );
}

#[test]
fn every_scm_statement_yields_the_events_it_claims() {
    let samples: &[&[&str]] = &[
        &[" "],
        &["false", "0", "true", "2"],
        &["false", "true"],
        &["ContainerInfo{id=#5, state=OPEN, stateEnterTime=0, pipelineID=Pipeline-ab, owner=om1}"],
        &["Pipeline{ Id: ab, Nodes: [], State:OPEN}"],
        &["Pipeline{ Id: ab, Nodes: [], State:OPEN}"],
    ];
    // Readiness needs a leadership first: alone, it yields nothing.
    let context = [ozone_scm::STATEMENTS[2].template];
    each_statement_yields_what_it_claims(
        UpstreamFormat::OzoneScm,
        ozone_scm::STATEMENTS,
        samples,
        &context,
    );
}

#[test]
fn every_namenode_statement_yields_the_events_it_claims() {
    let dn = "127.0.0.1:9866";
    let samples: &[&[&str]] = &[
        &[" "],
        &[],
        &[],
        &[],
        &["3"],
        &[],
        &["blk_1073741825_1001", dn, "1024", "FINALIZED"],
        &["blk_1073741825_1001", dn, "1024", "FINALIZED"],
        &[
            "blk_1073741825_1002",
            "FINALIZED",
            dn,
            "generation stamp is in the future",
        ],
        &["blk_1073741825_1001", dn, "RBW"],
        &[
            "blk_1073741825_1001",
            dn,
            "/10.0.0.5",
            " because reported RBW replica with genstamp 1001 does not match COMPLETE block's genstamp in block map 1002",
        ],
        &[
            "blk_1073741825_1001",
            dn,
            "null",
            " because reported RBW replica with genstamp 1001 does not match COMPLETE block's genstamp in block map 1002",
        ],
        &[dn, "blk_1073741825_1001", "1024"],
        &["blk_1073741825_1001", dn],
        &["blk_1073741825_1001", dn, "1024"],
        &["blk_1073741825_1001", dn],
        &[
            "CloseOp [length=0, inodeId=16386, path=/f, replication=3, mtime=1, atime=1, blockSize=134217728, blocks=[blk_1073741825_1001], permissions=hdfs:supergroup:rw-r--r--, aclEntries=null, clientName=, clientMachine=, overwrite=false, storagePolicyId=0, erasureCodingPolicyId=0, opCode=OP_CLOSE, txid=12]",
        ],
    ];
    // Context: the catch-up's end, a report taken from the queue, a restart without marks.
    let context = [
        hdfs_namenode::STATEMENTS[0].template,
        hdfs_namenode::STATEMENTS[5].template,
        hdfs_namenode::STATEMENTS[9].template,
    ];
    each_statement_yields_what_it_claims(
        UpstreamFormat::HdfsNamenode,
        hdfs_namenode::STATEMENTS,
        samples,
        &context,
    );
}

#[test]
fn the_shipped_layouts_are_taken_apart() {
    let ozone = layout::parse(
        "2025-03-01 10:00:01,250 [Datanode State Machine Thread - 0] WARN  statemachine.StateContext: a: b",
    )
    .unwrap();
    assert_eq!(
        (ozone.thread, ozone.level, ozone.logger, ozone.message),
        (
            "Datanode State Machine Thread - 0",
            Level::Warn,
            "statemachine.StateContext",
            "a: b"
        )
    );
    assert_eq!(ozone.class(), "StateContext");
    assert_eq!(ozone.time_ms, 1_740_823_201_250);
    let hadoop = layout::parse(
        "2025-03-01 10:00:01,250 INFO org.apache.hadoop.hdfs.server.namenode.FSNamesystem: m",
    )
    .unwrap();
    assert_eq!((hadoop.thread, hadoop.class()), ("", "FSNamesystem"));
    let console = layout::parse("25/03/01 10:00:01 DEBUG BlockStateChange: m").unwrap();
    assert_eq!(
        (console.time_ms, console.logger),
        (1_740_823_201_000, "BlockStateChange")
    );
    let log4j2 = layout::parse("2025-03-01T10:00:01.250 [main] INFO x.Y: m").unwrap();
    assert_eq!(log4j2.time_ms, ozone.time_ms);
    let container = layout::parse(
        "2025-03-01 10:00:01,250 | INFO  | ID=5 | Index=0 | State=DELETED | Empty container deleted | ",
    )
    .unwrap();
    assert_eq!(
        (container.logger, container.message),
        (
            layout::CONTAINER_LOG,
            "ID=5 | Index=0 | State=DELETED | Empty container deleted"
        )
    );
    for not_a_line in [
        "\tat org.apache.hadoop.Foo.bar(Foo.java:12)",
        "STARTUP_MSG: Starting NameNode",
        "2025-13-01 10:00:01,250 INFO x.Y: m",
        "2025-03-01 10:00:01,250 NOTICE x.Y: m",
        "2025-03-01 10:00:01,250 [unclosed INFO x.Y: m",
        "",
    ] {
        assert_eq!(layout::parse(not_a_line), None, "{not_a_line}");
    }
}

#[test]
fn lines_of_no_statement_are_skipped_and_counted() {
    let text = [
        ozone_line(
            1,
            "main",
            Level::Info,
            "ozone.HddsDatanodeService",
            "STARTUP_MSG: ",
        ),
        "/************************************************************".to_owned(),
        "STARTUP_MSG: Starting HddsDatanodeService".to_owned(),
        ozone_line(
            2,
            "main",
            Level::Info,
            "ozone.Other",
            "Ozone container server started.",
        ),
        ozone_line(
            3,
            "t",
            Level::Warn,
            "statemachine.StateContext",
            "Ignore command as command queue crosses max limit 5000.",
        ),
        "java.io.IOException: boom".to_owned(),
    ]
    .join("\n");
    let (events, stats) = read(UpstreamFormat::OzoneDatanode, &text);
    assert_eq!(
        stats,
        ReadStats {
            lines: 6,
            log_lines: 3,
            matched: 2
        }
    );
    assert_eq!(stats.skipped(), 4);
    let steps: Vec<_> = events.iter().map(|e| (e.step, e.name.as_str())).collect();
    assert_eq!(
        steps,
        [
            (1, "restarted: term and queue lost"),
            (2, "command refused: queue full")
        ]
    );
}

#[test]
fn an_over_long_or_non_utf8_line_is_an_error_naming_it() {
    let good = ozone_line(1, "t", Level::Info, "x.Y", "m");
    let long = format!(
        "{good}\n{}\n{good}\n",
        "x".repeat(MAX_UPSTREAM_LINE_BYTES + 1)
    );
    let error = UpstreamReader::new(UpstreamFormat::OzoneScm, "s", Cursor::new(long))
        .find_map(Result::err)
        .unwrap();
    assert!(
        matches!(error, LogError::LineTooLong { line: 2, .. }),
        "{error}"
    );
    let mut bytes = format!("{good}\n{good}\n").into_bytes();
    bytes.extend_from_slice(b"2025-03-01 10:00:01,000 INFO x.Y: \xff\n");
    let error = UpstreamReader::new(UpstreamFormat::HdfsNamenode, "n", Cursor::new(bytes))
        .find_map(Result::err)
        .unwrap();
    assert!(matches!(error, LogError::NotUtf8 { line: 3 }), "{error}");
    assert!(error.to_string().starts_with("line 3"));
}

#[test]
fn the_node_comes_from_upstreams_file_names() {
    for (file, node) in [
        ("logs/ozone-hadoop-datanode-dn1.log", "dn1"),
        ("dn-container-dn1.log", "dn1"),
        (
            "hadoop-hdfs-namenode-nn-1.example.com.log.3",
            "nn-1.example.com",
        ),
        ("ozone-root-scm-scm2.log", "scm2"),
        ("excerpt.log", "excerpt"),
        ("plain", "plain"),
    ] {
        assert_eq!(node_from_file_name(Path::new(file)), node, "{file}");
    }
}

#[test]
fn every_event_a_format_yields_is_in_the_catalogue() {
    let rows = crate::test_util::catalogue_events();
    let yields = ozone_datanode::STATEMENTS
        .iter()
        .chain(ozone_datanode::PROPOSED)
        .flat_map(|s| s.yields)
        .chain(
            ozone_scm::STATEMENTS
                .iter()
                .chain(ozone_scm::PROPOSED)
                .flat_map(|s| s.yields),
        )
        .chain(
            hdfs_namenode::STATEMENTS
                .iter()
                .chain(hdfs_namenode::PROPOSED)
                .flat_map(|s| s.yields),
        );
    for (component, event) in yields {
        assert!(
            crate::test_util::in_catalogue(&rows, component, event),
            "{component} {event}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: Some(Box::new(proptest::test_runner::FileFailurePersistence::Direct(
            "proptest-regressions/story_upstream_logs.txt",
        ))),
        ..ProptestConfig::default()
    })]

    /// Any bytes, in any format, are read without a panic: records, or an error naming a
    /// line that exists.
    #[test]
    fn any_bytes_are_read_without_a_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        format in 0usize..3,
    ) {
        let lines = bytes.split(|&b| b == b'\n').count();
        let format = UpstreamFormat::ALL[format];
        for record in UpstreamReader::new(format, "p", Cursor::new(bytes)) {
            match record {
                Ok(record) => prop_assert!(record.line >= 1 && record.line <= lines),
                Err(error) => prop_assert!(error.line() >= 1 && error.line() <= lines),
            }
        }
    }

    /// Lines that look like upstream's, with arbitrary text after the logger, are read
    /// without a panic.
    #[test]
    fn log_lines_with_any_message_are_read_without_a_panic(
        messages in proptest::collection::vec("(?s).{0,80}", 1..20),
        format in 0usize..3,
    ) {
        let loggers = ["x.StateContext", "x.KeyValueHandler", "x.SCMContext", "BlockStateChange", "x.BlockManager", "x.FSEditLogLoader"];
        let text: String = messages
            .iter()
            .enumerate()
            .map(|(i, m)| ozone_line(1, "t", Level::Debug, loggers[i % loggers.len()], m) + "\n")
            .collect();
        let format = UpstreamFormat::ALL[format];
        for record in UpstreamReader::new(format, "p", Cursor::new(text)) {
            prop_assert!(record.is_ok());
        }
    }
}
