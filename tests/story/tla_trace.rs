//! The TLA+ trace of the datanodes' term fencing (`story::tla`): every `StateContext`
//! event the library emits is an action of the trace, each step names its variables'
//! updates at the datanode's path, and a step that lacks a value its action needs is an
//! error, never a hole in the trace.

use std::path::Path;

use hadoop_ref::story::Event;
use hadoop_ref::story::tla::{action, encode_term_fencing_line, write_term_fencing_trace};

use crate::test_util::monitor::ev;

const STATE_CONTEXT: &str = "datanode::state_context";

fn event(step: usize, name: &str, fields: &[(&str, &str)]) -> Event {
    Event {
        step,
        ..ev("dn1", STATE_CONTEXT, name, fields)
    }
}

fn line(event: &Event) -> String {
    let mut line = String::new();
    assert_eq!(encode_term_fencing_line(event, &mut line), Ok(true));
    line
}

#[test]
fn every_state_context_event_of_the_catalogue_is_an_action() {
    // The catalogue is checked against the code (`event_catalogue.rs`).
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/event-log.md"))
            .expect("docs/event-log.md exists");
    let prefix = format!("| `{STATE_CONTEXT}` | `");
    let events: Vec<&str> = doc
        .lines()
        .filter_map(|row| row.strip_prefix(prefix.as_str()))
        .filter_map(|rest| rest.split_once('`').map(|(name, _)| name))
        .collect();
    assert!(events.len() >= 10, "{events:?}");
    for name in events {
        assert!(
            action(name).is_some(),
            "`{name}` has no action in the trace"
        );
    }
}

#[test]
fn commands_join_and_leave_the_queue_and_a_restart_resets_every_variable() {
    let command = [("command", "Close"), ("term", "3")];
    assert_eq!(
        line(&event(5, "command queued", &command)),
        r#"{"clock":5,"event":"QueueCommand","node":"dn1","params":{"term":3,"command":["Close",3]},"queue":[{"op":"AddElement","path":["dn1"],"args":[["Close",3]]}]}"#
    );
    assert_eq!(
        line(&event(6, "command dispatched", &command)),
        r#"{"clock":6,"event":"DispatchCommand","node":"dn1","params":{"term":3,"command":["Close",3]},"queue":[{"op":"RemoveElement","path":["dn1"],"args":[["Close",3]]}]}"#
    );
    assert_eq!(
        line(&event(
            7,
            "restarted: term and queue lost",
            &[("incarnation", "1")]
        )),
        concat!(
            r#"{"clock":7,"event":"Restart","node":"dn1","params":{},"#,
            r#""term":[{"op":"Init","path":["dn1"],"args":[]}],"#,
            r#""heardBeforeInit":[{"op":"Init","path":["dn1"],"args":[]}],"#,
            r#""queue":[{"op":"Init","path":["dn1"],"args":[]}]}"#
        )
    );
}

#[test]
fn a_step_without_the_value_its_action_needs_ends_the_trace_with_an_error() {
    let mut out = Vec::new();
    let events = vec![
        event(1, "term set", &[("term", "Some(2)"), ("why", "init")]),
        event(2, "term set", &[("term", "two"), ("why", "heartbeat")]),
        event(3, "term set", &[("term", "3"), ("why", "heartbeat")]),
    ];
    let error = write_term_fencing_trace(events, &mut out).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
    assert_eq!(error.to_string(), "step 2: no term");
    let written = String::from_utf8(out).unwrap();
    assert_eq!(written.lines().count(), 1, "{written}");
    assert!(written.contains(r#""args":[2]"#), "{written}");
    let mut nameless = event(4, "command queued", &[("term", "3")]);
    let mut line = String::new();
    assert!(
        encode_term_fencing_line(&nameless, &mut line).is_err(),
        "no command"
    );
    nameless.node = None;
    assert!(
        encode_term_fencing_line(&nameless, &mut line).is_err(),
        "no node"
    );
    assert!(line.is_empty(), "nothing written for a step in error");
}

#[test]
fn other_components_and_unknown_events_are_not_steps() {
    let mut other = event(1, "term set", &[("term", "2")]);
    other.component = "scm::ha".into();
    let mut line = String::new();
    assert_eq!(encode_term_fencing_line(&other, &mut line), Ok(false));
    assert_eq!(
        encode_term_fencing_line(&event(2, "something else", &[]), &mut line),
        Ok(false)
    );
    assert!(line.is_empty());
    let stats = write_term_fencing_trace(vec![other], &mut Vec::new()).unwrap();
    assert_eq!((stats.events, stats.lines), (1, 0));
}
