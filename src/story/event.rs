//! A recorded protocol event and the story of one execution.

/// One protocol event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// Its place in the execution, from 1.
    pub step: usize,
    /// The thread that emitted it (its name, or its id when unnamed).
    pub thread: String,
    /// The node it happened on, when the component said (`node` field).
    pub node: Option<String>,
    /// The component: the emitting module below the crate (`datanode::state_context`).
    pub component: String,
    /// What happened (the event's message): `heartbeat received`, `command dropped`.
    pub name: String,
    /// The key fields, in the order the component wrote them.
    pub fields: Vec<(String, String)>,
}

impl Event {
    /// Where it happened: `node · thread`, or the thread alone.
    pub fn place(&self) -> String {
        match &self.node {
            Some(node) => format!("{node} · {}", self.thread),
            None => self.thread.clone(),
        }
    }

    /// The value of field `name`, if the event has it.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(field, _)| field == name)
            .map(|(_, value)| value.as_str())
    }
}

/// The events of one execution, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Story {
    /// The events kept (at most [`MAX_EVENTS`](super::MAX_EVENTS)), oldest first.
    pub events: Vec<Event>,
    /// Older events left out to keep the bound.
    pub left_out: usize,
}

/// A field's value as a component wrote it, without the `Some(…)` that the `Debug` of an
/// option wraps it in, trimmed: `4` for `4` and for `Some(4)`.
pub(crate) fn without_some(text: &str) -> &str {
    let text = text.trim();
    text.strip_prefix("Some(")
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or(text)
}
