//! A named race window: a predicate over an execution's protocol events, declared with
//! the case it belongs to, in the seed's terms.

use std::fmt;

use crate::story::{Event, FieldValue, Story};

/// Most race windows one case declares (a window's bit in a per-kind mask).
pub const MAX_WINDOWS: usize = 64;

/// A race window of a seed: the interleaving its defect needs, as a predicate over the
/// events of one execution. A run reaches it when one execution's events match.
#[derive(Clone, Copy)]
pub struct RaceWindow {
    /// The seed's key (`HDDS-17268`).
    pub seed: &'static str,
    /// The window, in the seed's terms ("heartbeat term before init, then a stale
    /// command").
    pub name: &'static str,
    /// The events the predicate reads (their messages): only those are handed to it, so
    /// an execution pays for the windows of the events it emits only.
    pub reads: &'static [&'static str],
    /// The fields the predicate reads: only those are formatted.
    pub fields: &'static [&'static str],
    /// Fed every event `reads` names, in order, with state kept for the execution;
    /// returns true once the window is reached (later events are not fed).
    pub step: fn(&mut WindowState, &Seen<'_>) -> bool,
}

impl fmt::Debug for RaceWindow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.seed, self.name)
    }
}

impl RaceWindow {
    /// `SEED: name`.
    pub fn label(&self) -> String {
        format!("{}: {}", self.seed, self.name)
    }

    /// Whether the execution whose events are `story` reaches this window: the
    /// predicate over a recorded story (what a test or a replay checks).
    pub fn reached_by(&self, story: &Story) -> bool {
        let mut state = WindowState::default();
        story
            .events
            .iter()
            .filter(|event| self.reads.contains(&event.name.as_str()))
            .any(|event| (self.step)(&mut state, &Seen::of(event)))
    }
}

/// A window predicate's memory over one execution: a few numbers (terms, keys of blocks
/// or threads) and a stage, reset at each execution's start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowState {
    /// How far the predicate got (0 at the start).
    pub stage: u32,
    /// Values the predicate keeps (a term, a [`Seen::key`]).
    pub slots: [u64; 4],
}

/// What a window predicate sees of an event: its names and place, and its fields on
/// demand, typed as the component recorded them.
#[derive(Clone, Copy)]
pub struct Seen<'a> {
    /// The emitting module below the crate (`datanode::state_context`).
    pub component: &'a str,
    /// The event's message (`command queued`).
    pub name: &'a str,
    /// The node, when the event names one.
    pub node: Option<&'a str>,
    /// The emitting thread (a number that tells the execution's threads apart).
    pub thread: u64,
    node_key: u64,
    fields: &'a dyn FieldSource,
}

impl fmt::Debug for Seen<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Seen")
            .field("component", &self.component)
            .field("name", &self.name)
            .field("node", &self.node)
            .field("thread", &self.thread)
            .finish_non_exhaustive()
    }
}

/// Where a [`Seen`] reads its fields from.
pub trait FieldSource {
    /// The value of field `name`, if the event has it.
    fn get(&self, name: &str) -> Option<&FieldValue>;
}

impl FieldSource for Event {
    fn get(&self, name: &str) -> Option<&FieldValue> {
        self.value(name)
    }
}

/// Fields captured by name into reused slots (the cheap hook's).
#[derive(Debug, Clone, Copy)]
pub struct Captured<'a>(pub &'a [(&'static str, FieldValue)]);

impl FieldSource for Captured<'_> {
    fn get(&self, name: &str) -> Option<&FieldValue> {
        self.0
            .iter()
            .find(|(field, _)| *field == name)
            .map(|(_, value)| value)
    }
}

impl<'a> Seen<'a> {
    /// An event as seen by the cheap hook: its fields read from `fields`, its node keyed
    /// by `node_key` (a number of the node, 0 for none, the same for every event of it).
    pub fn new(
        component: &'a str,
        name: &'a str,
        node: Option<(&'a str, u64)>,
        thread: u64,
        fields: &'a dyn FieldSource,
    ) -> Self {
        Self {
            component,
            name,
            node: node.map(|(node, _)| node),
            thread,
            node_key: node.map_or(0, |(_, key)| key),
            fields,
        }
    }

    /// A recorded event (its thread keyed by its label).
    pub fn of(event: &'a Event) -> Self {
        Self {
            component: &event.component,
            name: &event.name,
            node: event.node.as_deref(),
            thread: hash_text(&event.thread),
            node_key: event.node.as_deref().map_or(0, hash_text),
            fields: event,
        }
    }

    /// The value of field `name`.
    pub fn value(&self, name: &str) -> Option<&FieldValue> {
        self.fields.get(name)
    }

    /// Field `name` when it is text (an operation, a state, a reason, a list).
    pub fn text(&self, name: &str) -> Option<&str> {
        self.value(name).and_then(FieldValue::as_text)
    }

    /// Field `name` when it is a non-negative integer (a term, a count, an id).
    pub fn number(&self, name: &str) -> Option<u64> {
        self.value(name).and_then(FieldValue::as_u64)
    }

    /// A key of field `name`'s value (to compare a block or container with a later
    /// event's), 0 when the event lacks it.
    pub fn key(&self, name: &str) -> u64 {
        self.value(name).map_or(0, value_key)
    }

    /// Whether field `name`, a comma-separated list of ids as a component writes one
    /// (`c2,c3`; a text log's list of one id may read as its number), holds an item whose
    /// id has the [`key`](Self::key) `key`.
    pub fn lists_key(&self, name: &str, key: u64) -> bool {
        match self.value(name) {
            Some(FieldValue::Text(list)) => list
                .split(',')
                .any(|item| crate::story::list_item_id(item).map_or(0, number_key) == key),
            Some(single) => value_key(single) == key,
            None => false,
        }
    }

    /// A key of the node (0 when the event names none).
    pub fn node_key(&self) -> u64 {
        self.node_key
    }
}

/// A key of a value: its number's, or its text's.
fn value_key(value: &FieldValue) -> u64 {
    match value {
        FieldValue::U64(n) => number_key(*n),
        // The same key for a number written signed: an HDFS block id.
        FieldValue::I64(n) => number_key(u64::from_ne_bytes(n.to_ne_bytes())),
        FieldValue::Bool(b) => number_key(u64::from(*b)) ^ 0x5bd1_e995,
        FieldValue::Text(text) => hash_text(text),
    }
}

/// A key of a number (a multiply-rotate mix), never 0.
fn number_key(n: u64) -> u64 {
    (n.rotate_left(17) ^ 0x9e37_79b9_7f4a_7c15)
        .wrapping_mul(0x517c_c1b7_2722_0a95)
        .max(1)
}

/// A hash of a text (FNV-1a: short keys, hashed per event), never 0, so 0 stays "none".
pub(super) fn hash_text(text: &str) -> u64 {
    text.bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
        .max(1)
}
