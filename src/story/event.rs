//! A recorded protocol event and the story of one execution.

use super::value::FieldValue;

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
    /// The key fields, in the order the component wrote them, each typed as it was
    /// recorded ([`FieldValue`]).
    pub fields: Vec<(String, FieldValue)>,
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
    pub fn value(&self, name: &str) -> Option<&FieldValue> {
        self.fields
            .iter()
            .find(|(field, _)| field == name)
            .map(|(_, value)| value)
    }

    /// Field `name` when it is text (a reason, an outcome, a state, a list).
    pub fn text(&self, name: &str) -> Option<&str> {
        self.value(name).and_then(FieldValue::as_text)
    }

    /// Field `name` when it is a non-negative integer (an id, a term, a count).
    pub fn number(&self, name: &str) -> Option<u64> {
        self.value(name).and_then(FieldValue::as_u64)
    }

    /// Field `name` when it is an integer.
    pub fn signed(&self, name: &str) -> Option<i64> {
        self.value(name).and_then(FieldValue::as_i64)
    }

    /// Field `name` when it is a flag.
    pub fn flag(&self, name: &str) -> Option<bool> {
        self.value(name).and_then(FieldValue::as_bool)
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
