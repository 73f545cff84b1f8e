//! Trace export for TLA+ trace validation, for HDDS-17268's term fencing. In the method
//! of Cirstea, Kuppe, Loillier and Merz (*Validating Traces of Distributed Programs
//! Against TLA+ Specifications*), the implementation logs one JSON object a line: the
//! action the step is (`event`), and for each specification variable it changes, the
//! updates it made, each an operation at a path (`{"op": "Replace", "path": ["dn1"],
//! "args": [4]}`). A trace specification reads the log with `ndJsonDeserialize`, applies
//! each line's updates to its variables, and asks TLC whether the base specification can
//! take every step in turn: a trace it cannot follow is an implementation step the
//! specification does not allow, or a specification that is wrong.
//!
//! This module writes that log from the story's events of each datanode's `StateContext`
//! (this crate's, or an Ozone datanode's own log read through [`super::upstream`]). The
//! variables are functions of the datanode (the path is its name):
//!
//! | variable | what it is upstream |
//! |---|---|
//! | `term` | the term of the leader SCM the datanode follows (`StateContext`'s `termOfLeaderSCM`) |
//! | `heardBeforeInit` | the highest heartbeat term kept while the term was unset (HDDS-17268's patch) |
//! | `queue` | the commands queued and not yet handed out (`addCommand`, `getNextCommand`), each `[kind, term]` |
//!
//! | event | action | updates |
//! |---|---|---|
//! | `heartbeat term received` | `ReceiveHeartbeatTerm` | none |
//! | `term read without the lock` | `ReadTermUnlocked` | none |
//! | `term set` | `SetTerm` | `term` Replace |
//! | `term set without the lock` | `SetTermUnlocked` | `term` Replace |
//! | `heartbeat term recorded for init` | `RecordTermBeforeInit` | `heardBeforeInit` Replace |
//! | `heartbeat term ignored before init` | `IgnoreTermBeforeInit` | none |
//! | `heartbeat term ignored` | `IgnoreHeartbeatTerm` | none |
//! | `term initialised` | `ChooseInitialTerm` | none (the `term set` after it sets it) |
//! | `command queued` | `QueueCommand` | `queue` AddElement |
//! | `command refused: queue full` | `RefuseCommand` | none |
//! | `command dispatched` | `DispatchCommand` | `queue` RemoveElement |
//! | `command dropped as stale` | `DropStaleCommand` | `queue` RemoveElement |
//! | `restarted: term and queue lost` | `Restart` | `term`, `heardBeforeInit`, `queue` Init |
//!
//! Every line also names its datanode (`node`), its place in the run (`clock`, the
//! event's step) and the step's arguments (`params`: the term it carries, the command).
//! A trace specification's `Default(varName)` gives what `Init` resets a variable to.
//!
//! ```
//! use hadoop_ref::story::Event;
//! use hadoop_ref::story::tla::encode_term_fencing_line;
//!
//! let event = Event {
//!     step: 3,
//!     node: Some("dn1".into()),
//!     component: "datanode::state_context".into(),
//!     name: "term set".into(),
//!     fields: vec![("term".into(), 4u64.into()), ("why".into(), "init".into())],
//!     ..Event::default()
//! };
//! let mut line = String::new();
//! assert_eq!(encode_term_fencing_line(&event, &mut line), Ok(true));
//! assert_eq!(
//!     line,
//!     r#"{"clock":3,"event":"SetTerm","node":"dn1","params":{"term":4},"term":[{"op":"Replace","path":["dn1"],"args":[4]}]}"#
//! );
//! ```

use std::fmt;
use std::io::{self, Write};

use super::Event;
use super::json::push_string;

/// The component whose events are exported: the datanode's `StateContext`.
const STATE_CONTEXT: &str = "datanode::state_context";

/// What a step does to one variable of its datanode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Update {
    /// The variable takes the step's term.
    ReplaceTerm(&'static str),
    /// The variable takes its initial value again.
    Init(&'static str),
    /// The step's command joins the queue.
    AddCommand,
    /// The step's command leaves the queue.
    RemoveCommand,
}

/// The action an event of the `StateContext` is, and what it updates; `None` for an
/// event the specification has no action for.
fn action_of(event: &str) -> Option<(&'static str, &'static [Update])> {
    use Update::*;
    const RESTART: [Update; 3] = [Init("term"), Init("heardBeforeInit"), Init("queue")];
    Some(match event {
        "heartbeat term received" => ("ReceiveHeartbeatTerm", &[]),
        "term read without the lock" => ("ReadTermUnlocked", &[]),
        "term set" => ("SetTerm", &[ReplaceTerm("term")]),
        "term set without the lock" => ("SetTermUnlocked", &[ReplaceTerm("term")]),
        "heartbeat term recorded for init" => {
            ("RecordTermBeforeInit", &[ReplaceTerm("heardBeforeInit")])
        }
        "heartbeat term ignored before init" => ("IgnoreTermBeforeInit", &[]),
        "heartbeat term ignored" => ("IgnoreHeartbeatTerm", &[]),
        "term initialised" => ("ChooseInitialTerm", &[]),
        "command queued" => ("QueueCommand", &[AddCommand]),
        "command refused: queue full" => ("RefuseCommand", &[]),
        "command dispatched" => ("DispatchCommand", &[RemoveCommand]),
        "command dropped as stale" => ("DropStaleCommand", &[RemoveCommand]),
        "restarted: term and queue lost" => ("Restart", &RESTART),
        _ => return None,
    })
}

/// The action the `StateContext` event named `event` is in the specification (`SetTerm`
/// for `term set`); `None` for an event it has no action for.
///
/// ```
/// use hadoop_ref::story::tla::action;
///
/// assert_eq!(action("command dispatched"), Some("DispatchCommand"));
/// assert_eq!(action("report processed"), None);
/// ```
pub fn action(event: &str) -> Option<&'static str> {
    action_of(event).map(|(action, _)| action)
}

/// Why an event of the `StateContext` cannot be written as a step: a value its action
/// needs is missing or unreadable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The event's step.
    pub step: usize,
    /// What is missing.
    pub missing: &'static str,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step {}: no {}", self.step, self.missing)
    }
}

impl std::error::Error for Unreadable {}

/// Writes `event` as one line of the trace (no newline) into `out` and returns `true`;
/// `false` (writing nothing) for an event of another component, or one the
/// specification has no action for; an error (writing nothing) for one that lacks a
/// value its action needs.
pub fn encode_term_fencing_line(event: &Event, out: &mut String) -> Result<bool, Unreadable> {
    if event.component != STATE_CONTEXT {
        return Ok(false);
    }
    let Some((action, updates)) = action_of(&event.name) else {
        return Ok(false);
    };
    let unreadable = |missing| Unreadable {
        step: event.step,
        missing,
    };
    let node = event.node.as_deref().ok_or(unreadable("node"))?;
    let term = event.signed("term");
    let command = event.text("command");
    let needs_term = updates.iter().any(|u| !matches!(u, Update::Init(_)));
    let term = match (needs_term, term) {
        (true, None) => return Err(unreadable("term")),
        (_, term) => term,
    };
    if updates
        .iter()
        .any(|u| matches!(u, Update::AddCommand | Update::RemoveCommand))
        && command.is_none()
    {
        return Err(unreadable("command"));
    }
    out.push_str("{\"clock\":");
    out.push_str(&event.step.to_string());
    out.push_str(",\"event\":");
    push_string(out, action);
    out.push_str(",\"node\":");
    push_string(out, node);
    push_params(out, term, command);
    for update in updates {
        push_update(out, *update, node, term, command);
    }
    out.push('}');
    Ok(true)
}

/// The step's arguments: the term it carries, and its command.
fn push_params(out: &mut String, term: Option<i64>, command: Option<&str>) {
    out.push_str(",\"params\":{");
    if let Some(term) = term {
        out.push_str("\"term\":");
        out.push_str(&term.to_string());
    }
    if let (Some(command), Some(term)) = (command, term) {
        out.push_str(",\"command\":");
        push_command(out, command, term);
    }
    out.push('}');
}

/// A command as the `queue` holds it: `[kind, term]`.
fn push_command(out: &mut String, kind: &str, term: i64) {
    out.push('[');
    push_string(out, kind);
    out.push(',');
    out.push_str(&term.to_string());
    out.push(']');
}

/// One variable's update list (of one update) at the datanode's path.
fn push_update(
    out: &mut String,
    update: Update,
    node: &str,
    term: Option<i64>,
    command: Option<&str>,
) {
    let (variable, op) = match update {
        Update::ReplaceTerm(variable) => (variable, "Replace"),
        Update::Init(variable) => (variable, "Init"),
        Update::AddCommand => ("queue", "AddElement"),
        Update::RemoveCommand => ("queue", "RemoveElement"),
    };
    out.push(',');
    push_string(out, variable);
    out.push_str(":[{\"op\":");
    push_string(out, op);
    out.push_str(",\"path\":[");
    push_string(out, node);
    out.push_str("],\"args\":[");
    match (update, term, command) {
        (Update::ReplaceTerm(_), Some(term), _) => out.push_str(&term.to_string()),
        (Update::AddCommand | Update::RemoveCommand, Some(term), Some(command)) => {
            push_command(out, command, term);
        }
        _ => {}
    }
    out.push_str("]}]");
}

/// What [`write_term_fencing_trace`] wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// Events read.
    pub events: u64,
    /// Lines written: the steps of the datanodes' `StateContext`s.
    pub lines: u64,
}

/// Writes the trace of `events` (in their order) to `out`, a line a step; stops at the
/// first event it cannot write ([`Unreadable`], as an [`io::ErrorKind::InvalidData`]
/// error) rather than leave a step out, since a trace with a hole is another run.
pub fn write_term_fencing_trace(
    events: impl IntoIterator<Item = Event>,
    out: &mut impl Write,
) -> io::Result<TraceStats> {
    let mut stats = TraceStats::default();
    let mut line = String::new();
    for event in events {
        stats.events += 1;
        line.clear();
        let written = encode_term_fencing_line(&event, &mut line)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        if written {
            line.push('\n');
            out.write_all(line.as_bytes())?;
            stats.lines += 1;
        }
    }
    out.flush()?;
    Ok(stats)
}
