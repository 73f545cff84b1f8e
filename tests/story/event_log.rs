//! The event log format: what the writer writes the reader reads back, event for event;
//! a malformed log is an error naming its line, never a panic; the recorder's sinks see
//! every event, even those its bounded story leaves out.

use std::io::Cursor;

use hadoop_ref::story::log::{MAX_LINE_BYTES, encode_line, parse_line};
use hadoop_ref::story::{
    self, Event, EventLogReader, EventLogWriter, FieldValue, LogError, MAX_EVENTS, Recorder,
    SCHEMA_VERSION, read_fields,
};
use hadoop_ref::unmodelled::Shared;
use proptest::prelude::*;

fn event(step: usize, node: Option<&str>, fields: &[(&str, &str)]) -> Event {
    Event {
        step,
        thread: "endpoint scm1".into(),
        node: node.map(str::to_owned),
        component: "datanode::state_context".into(),
        name: "term set".into(),
        fields: read_fields(fields.iter().copied()),
    }
}

fn read_all(text: &str) -> Result<Vec<Event>, LogError> {
    EventLogReader::new(Cursor::new(text.to_owned()))
        .map(|r| r.map(|record| record.event))
        .collect()
}

#[test]
fn a_written_line_is_versioned_and_reads_back_as_the_event() {
    let original = event(7, Some("dn1"), &[("term", "3"), ("why", "heartbeat")]);
    let mut line = String::new();
    encode_line(&original, Some(1712), &mut line);
    assert_eq!(
        line,
        r#"{"v":2,"seq":7,"time_ms":1712,"node":"dn1","thread":"endpoint scm1","component":"datanode::state_context","event":"term set","fields":{"term":3,"why":"heartbeat"}}"#
    );
    let record = parse_line(&line, 1).unwrap();
    assert_eq!(
        (record.event, record.time_ms, record.line),
        (original, Some(1712), 1)
    );
    assert_eq!(SCHEMA_VERSION, 2);
}

#[test]
fn a_hand_written_line_needs_only_the_required_keys() {
    let events = read_all(
        "\n{\"seq\": 3, \"v\": 1, \"thread\": \"t\", \"component\": \"c\", \"event\": \"e\", \"extra\": [1]}\n",
    );
    // An unknown key may hold anything but a nested value: arrays are refused.
    assert!(matches!(events, Err(LogError::Malformed { line: 2, .. })));
    let events = read_all(
        "{\"v\":1,\"seq\":3,\"thread\":\"t\",\"component\":\"c\",\"event\":\"e\",\"node\":null,\"fields\":{\"n\":5,\"ok\":true,\"s\":\"x\"},\"future\":\"k\"}",
    )
    .unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].node, None);
    assert_eq!(events[0].number("n"), Some(5));
    assert_eq!(events[0].flag("ok"), Some(true));
}

#[test]
fn malformed_logs_name_their_line() {
    let good = "{\"v\":1,\"seq\":1,\"thread\":\"t\",\"component\":\"c\",\"event\":\"e\"}\n";
    let cases: [(&str, usize, &str); 7] = [
        ("{\"v\":1,\"seq\":2,\"thread\":\"t\"", 2, "not an event"),
        (
            "{\"v\":3,\"seq\":2,\"thread\":\"t\",\"component\":\"c\",\"event\":\"e\"}",
            2,
            "schema version 3",
        ),
        (
            "{\"v\":1,\"seq\":1,\"thread\":\"t\",\"component\":\"c\",\"event\":\"e\"}",
            2,
            "seq 1 after seq 1",
        ),
        (
            "{\"v\":1,\"seq\":2,\"component\":\"c\",\"event\":\"e\"}",
            2,
            "key `thread` is missing",
        ),
        (
            "{\"v\":1,\"seq\":-2,\"thread\":\"t\",\"component\":\"c\",\"event\":\"e\"}",
            2,
            "key `seq`",
        ),
        ("[1, 2]", 2, "expected `{`"),
        (
            "{\"v\":1,\"seq\":2,\"thread\":\"\\ud800\",\"component\":\"c\",\"event\":\"e\"}",
            2,
            "surrogate",
        ),
    ];
    for (bad, line, says) in cases {
        let error = read_all(&format!("{good}{bad}\n{good}")).unwrap_err();
        assert_eq!(error.line(), line, "{bad}: {error}");
        let text = error.to_string();
        assert!(text.starts_with(&format!("line {line}")), "{text}");
        assert!(text.contains(says), "{bad}: {text}");
    }
}

#[test]
fn a_line_longer_than_the_cap_is_refused_not_read_whole() {
    let long = format!(
        "{{\"v\":1,\"seq\":1,\"thread\":\"{}\",\"component\":\"c\",\"event\":\"e\"}}\n",
        "x".repeat(MAX_LINE_BYTES)
    );
    let error = read_all(&long).unwrap_err();
    assert!(
        matches!(error, LogError::LineTooLong { line: 1, .. }),
        "{error}"
    );
}

#[test]
fn bytes_that_are_not_utf8_name_their_line() {
    let mut bytes =
        b"{\"v\":1,\"seq\":1,\"thread\":\"t\",\"component\":\"c\",\"event\":\"e\"}\n".to_vec();
    bytes.extend_from_slice(b"{\"v\":1,\xff}\n");
    let error = EventLogReader::new(Cursor::new(bytes))
        .find_map(Result::err)
        .unwrap();
    assert!(matches!(error, LogError::NotUtf8 { line: 2 }), "{error}");
}

#[test]
fn the_writer_logs_every_event_a_recorder_sees_beyond_its_bound() {
    let buffer = Shared::new(Vec::new());
    let log = EventLogWriter::new(SharedBuffer(buffer.clone()));
    let recorder = Recorder::default().with_sink(log.clone());
    recorder.install(|| {
        for term in 0..MAX_EVENTS + 3 {
            tracing::debug!(target: "hadoop_ref::datanode::state_context", node = "dn1", term, "term set");
        }
    });
    log.flush().unwrap();
    let story = recorder.take();
    assert_eq!(story.left_out, 3);
    let text = buffer.with(|b| String::from_utf8(b.clone()).unwrap());
    let events = read_all(&text).unwrap();
    assert_eq!(events.len(), MAX_EVENTS + 3);
    assert_eq!(events.last(), story.events.last());
    assert_eq!(log.lines(), u64::try_from(MAX_EVENTS + 3).unwrap());
}

#[test]
fn a_streaming_recorder_keeps_nothing_and_numbers_every_event() {
    let buffer = Shared::new(Vec::new());
    let log = EventLogWriter::new(SharedBuffer(buffer.clone())).with_time(|| 42);
    let ((), story) = story::record(|| {
        log.recorder().install(|| {
            tracing::debug!(target: "hadoop_ref::scm::container_manager", node = "scm1", "started");
            tracing::debug!(target: "hadoop_ref::scm::container_manager", node = "scm2", "started");
        });
    });
    assert!(
        story.events.is_empty(),
        "the streaming recorder was the default"
    );
    log.flush().unwrap();
    let text = buffer.with(|b| String::from_utf8(b.clone()).unwrap());
    let records: Vec<_> = EventLogReader::new(Cursor::new(text))
        .collect::<Result<_, _>>()
        .unwrap();
    let steps: Vec<_> = records.iter().map(|r| (r.event.step, r.time_ms)).collect();
    assert_eq!(steps, [(1, Some(42)), (2, Some(42))]);
}

/// A writer into a shared buffer, to read what the log wrote.
struct SharedBuffer(Shared<Vec<u8>>);

impl std::io::Write for SharedBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.with(|b| b.extend_from_slice(bytes));
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn text_strategy() -> impl Strategy<Value = String> {
    proptest::string::string_regex("(?s).{0,40}").unwrap()
}

/// Any field value, as a recorder keeps one (a signed value only when negative).
fn value_strategy() -> impl Strategy<Value = FieldValue> {
    prop_oneof![
        any::<u64>().prop_map(FieldValue::U64),
        any::<i64>().prop_map(FieldValue::signed),
        any::<bool>().prop_map(FieldValue::Bool),
        text_strategy().prop_map(FieldValue::Text),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: Some(Box::new(proptest::test_runner::FileFailurePersistence::Direct(
            "proptest-regressions/story_event_log.txt",
        ))),
        ..ProptestConfig::default()
    })]

    /// Any event, with any text in its names and values, reads back as written.
    #[test]
    fn any_event_reads_back_as_written(
        step in 1usize..1_000_000,
        node in proptest::option::of(text_strategy()),
        thread in text_strategy(),
        name in text_strategy(),
        fields in proptest::collection::vec((text_strategy(), value_strategy()), 0..5),
    ) {
        let original = Event { step, thread, node, component: "c".into(), name, fields };
        let mut line = String::new();
        encode_line(&original, None, &mut line);
        prop_assert!(!line.contains('\n'));
        let read = parse_line(&line, 9).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(read.event, original);
    }

    /// Any bytes at all are read without a panic: records or an error naming a line.
    #[test]
    fn any_bytes_are_read_without_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let lines = bytes.split(|&b| b == b'\n').count();
        for record in EventLogReader::new(Cursor::new(bytes)) {
            match record {
                Ok(record) => prop_assert!(record.line <= lines),
                Err(error) => prop_assert!(error.line() >= 1 && error.line() <= lines),
            }
        }
    }
}

#[test]
fn the_writer_is_a_layer_beside_another_subscriber() {
    use tracing_subscriber::Layer;

    let buffer = Shared::new(Vec::new());
    let log = EventLogWriter::new(SharedBuffer(buffer.clone()));
    let story = Recorder::default();
    let layered = log.clone().with_subscriber(story.clone());
    tracing::subscriber::with_default(layered, || {
        tracing::debug!(target: "hadoop_ref::scm::container_manager::leadership", node = "scm1", term = 2, "became leader");
        tracing::debug!(target: "another_crate", "not ours");
        tracing::debug!(target: "hadoop_ref::sim::scm_endpoint", node = "scm2", term = 3, "became leader");
    });
    log.flush().unwrap();
    let text = buffer.with(|b| String::from_utf8(b.clone()).unwrap());
    let logged = read_all(&text).unwrap();
    let kept = story.take().events;
    assert_eq!(logged.len(), 2);
    assert_eq!(
        logged, kept,
        "the layer logs what the subscriber under it records"
    );
}

/// A line of schema version 1 (every value a string, a command as its whole text) reads
/// as version 2 writes the event: typed values, the command's kind and container apart.
#[test]
fn a_version_1_line_reads_as_version_2_writes_it() {
    let v1 = r#"{"v":1,"seq":4,"node":"dn1","thread":"t","component":"datanode::dispatcher","event":"command run","fields":{"command":"DeleteContainer { container: ContainerId(3), force: true }","term":"Some(2)","outcome":"Executed","partial":"true"}}"#;
    let event = parse_line(v1, 1).unwrap().event;
    assert_eq!(event.text("command"), Some("DeleteContainer"));
    assert_eq!(event.number("container"), Some(3));
    assert_eq!(event.number("term"), Some(2));
    assert_eq!(event.flag("partial"), Some(true));
    assert_eq!(event.text("outcome"), Some("Executed"));
    let mut line = String::new();
    encode_line(&event, None, &mut line);
    assert_eq!(parse_line(&line, 1).unwrap().event, event);
    assert!(
        line.starts_with(&format!("{{\"v\":{SCHEMA_VERSION},")),
        "{line}"
    );
}
