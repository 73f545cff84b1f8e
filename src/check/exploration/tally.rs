//! The cheap hook's count: each event abstracted to its kind (its call site) and node as
//! it happens, the execution's sequence hashed incrementally, the ordered pairs of kinds
//! kept at thread switches, and the case's race windows fed, without building the story's
//! [`Event`](crate::story::Event) (no allocation once a run has seen its kinds and
//! nodes).

use std::collections::{HashMap, HashSet};
use std::fmt::{self, Write as _};
use std::hash::{BuildHasherDefault, Hasher};

use tracing::Event as TracingEvent;
use tracing::field::{Field, Visit};

use super::summary::{CoverageSummary, WindowCount};
use super::window::{Captured, MAX_WINDOWS, RaceWindow, Seen, WindowState};
use crate::story::FieldValue;

/// The crate whose events are counted (its components' `tracing` targets start with it).
pub(super) const TARGET_PREFIX: &str = "hadoop_ref::";

/// Most distinct sequences and pairs kept per run: past it, new ones are counted as
/// overflow rather than kept (memory stays bounded on an unbounded soak).
pub const MAX_DISTINCT: usize = 1 << 20;

/// A multiply-rotate hasher for the tally's integer keys (std's SipHash costs more than
/// the rest of the hook).
#[derive(Default, Clone, Copy)]
pub(super) struct Mix(u64);

const MIX_K: u64 = 0x517c_c1b7_2722_0a95;

impl Hasher for Mix {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(MIX_K);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

type Fast = BuildHasherDefault<Mix>;

/// What the hook reads of one field of a call site.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Nothing: no window reads it (or it is the message, read once when the site is
    /// first seen).
    Skip,
    /// The event's node.
    Node,
    /// A field some window reads: captured while a window of the kind is open.
    Read,
}

/// An event kind: one call site of the crate, named by its component and message.
struct Kind {
    id: u32,
    component: &'static str,
    name: String,
    /// The windows whose predicates read this kind (bit `i`: window `i`).
    windows: u64,
    /// What the hook reads of each of the call site's fields, by the field's index: the
    /// names are compared once, when the site is first seen, not at each event.
    slots: Box<[Slot]>,
}

/// What a run counted, and the current execution's state.
pub(super) struct Tally {
    windows: &'static [RaceWindow],
    /// The index in `kinds` of each call site seen (keyed by its metadata's address).
    sites: HashMap<usize, usize, Fast>,
    kinds: Vec<Kind>,
    nodes: Nodes,
    node: NodeText,
    fields: Vec<(&'static str, FieldValue)>,
    /// The fields any window reads.
    wanted: Vec<&'static str>,
    executions: u64,
    sequences: HashSet<u64, Fast>,
    pairs: HashSet<u64, Fast>,
    overflow: u64,
    reached: Vec<u64>,
    hash: u64,
    last: Option<(u64, u32)>,
    states: Vec<WindowState>,
    hit: u64,
    /// Between an execution's start and end: events outside one are not counted.
    active: bool,
}

impl Tally {
    pub(super) fn new(windows: &'static [RaceWindow]) -> Self {
        let windows = &windows[..windows.len().min(MAX_WINDOWS)];
        Self {
            windows,
            sites: HashMap::default(),
            kinds: Vec::new(),
            nodes: Nodes::default(),
            node: NodeText::default(),
            fields: Vec::new(),
            wanted: windows
                .iter()
                .flat_map(|w| w.fields.iter().copied())
                .collect(),
            executions: 0,
            sequences: HashSet::default(),
            pairs: HashSet::default(),
            overflow: 0,
            reached: vec![0; windows.len()],
            hash: 0,
            last: None,
            states: vec![WindowState::default(); windows.len()],
            hit: 0,
            active: false,
        }
    }

    /// At an execution's start.
    pub(super) fn start(&mut self) {
        self.active = true;
        self.hash = 0;
        self.last = None;
        self.hit = 0;
        self.states.fill(WindowState::default());
    }

    /// At an execution's end: its sequence and the windows it reached are counted.
    pub(super) fn end(&mut self) {
        if !std::mem::take(&mut self.active) {
            return;
        }
        self.executions += 1;
        if self.sequences.len() < MAX_DISTINCT {
            self.sequences.insert(self.hash);
        } else if !self.sequences.contains(&self.hash) {
            self.overflow += 1;
        }
        for (i, reached) in self.reached.iter_mut().enumerate() {
            if self.hit & (1 << i) != 0 {
                *reached += 1;
            }
        }
    }

    pub(super) fn summary(&self) -> CoverageSummary {
        CoverageSummary {
            executions: self.executions,
            sequences: self.sequences.len() as u64,
            racing_pairs: self.pairs.len() as u64,
            overflow: self.overflow,
            windows: self
                .windows
                .iter()
                .zip(&self.reached)
                .map(|(window, &reached)| WindowCount {
                    seed: window.seed,
                    name: window.name,
                    reached,
                })
                .collect(),
        }
    }

    /// One event of the crate, emitted by thread `thread`. Its node is read at every
    /// event; the fields the windows read only while one of its kind's windows is open.
    pub(super) fn observe(&mut self, event: &TracingEvent<'_>, thread: u64) {
        if !self.active {
            return;
        }
        let site = std::ptr::from_ref(event.metadata()) as usize;
        let index = match self.sites.get(&site) {
            Some(&index) => index,
            None => self.learn(site, event),
        };
        let kind = &self.kinds[index];
        let open = kind.windows & !self.hit;
        self.node.clear();
        let mut visitor = Visitor {
            slots: &kind.slots,
            node: &mut self.node,
            fields: (open != 0).then_some(&mut self.fields),
            used: 0,
        };
        event.record(&mut visitor);
        let used = visitor.used;
        let node = match self.node.text.is_empty() {
            true => 0,
            false => self.nodes.intern(&self.node),
        };
        self.hash = mix(self.hash, (u64::from(node) << 32) | u64::from(kind.id));
        if let Some((last_thread, last_kind)) = self.last
            && last_thread != thread
            && self.pairs.len() < MAX_DISTINCT
        {
            self.pairs
                .insert((u64::from(last_kind) << 32) | u64::from(kind.id));
        }
        self.last = Some((thread, kind.id));
        if open == 0 {
            return;
        }
        let fields = Captured(&self.fields[..used]);
        let seen = Seen::new(
            kind.component,
            &kind.name,
            (!self.node.text.is_empty()).then_some((self.node.text.as_str(), u64::from(node))),
            thread,
            &fields,
        );
        for (i, window) in self.windows.iter().enumerate() {
            if open & (1 << i) != 0 && (window.step)(&mut self.states[i], &seen) {
                self.hit |= 1 << i;
            }
        }
    }

    /// Learns the kind of a call site on its first event: its message, the windows that
    /// read it, and what to read of each of its fields. Returns its index in `kinds`.
    fn learn(&mut self, site: usize, event: &TracingEvent<'_>) -> usize {
        let metadata = event.metadata();
        let mut name = String::new();
        event.record(&mut Message(&mut name));
        let windows = self
            .windows
            .iter()
            .enumerate()
            .filter(|(_, w)| w.reads.contains(&name.as_str()))
            .fold(0u64, |mask, (i, _)| mask | (1 << i));
        let slots = metadata
            .fields()
            .iter()
            .map(|field| match field.name() {
                "message" => Slot::Skip,
                "node" => Slot::Node,
                name if self.wanted.contains(&name) => Slot::Read,
                _ => Slot::Skip,
            })
            .collect();
        let id = u32::try_from(self.kinds.len() + 1).unwrap_or(u32::MAX);
        let target = metadata.target();
        let component = target.strip_prefix(TARGET_PREFIX).unwrap_or(target);
        self.kinds.push(Kind {
            id,
            component,
            name,
            windows,
            slots,
        });
        self.sites.insert(site, self.kinds.len() - 1);
        self.kinds.len() - 1
    }
}

/// The nodes a run has seen, numbered from 1 in the order first seen. A run has a few
/// (the nodes of one cluster): they are looked for by their hashes in order, which costs
/// less than a hash map's lookup.
#[derive(Default)]
struct Nodes {
    /// Each node's hash and text, by its number less one.
    hashes: Vec<u64>,
    texts: Vec<String>,
}

impl Nodes {
    /// The number of `node`, given on first sight.
    fn intern(&mut self, node: &NodeText) -> u32 {
        let known = self
            .hashes
            .iter()
            .zip(&self.texts)
            .position(|(&hash, text)| hash == node.hash && *text == node.text);
        let at = known.unwrap_or_else(|| {
            self.hashes.push(node.hash);
            self.texts.push(node.text.clone());
            self.texts.len() - 1
        });
        u32::try_from(at + 1).unwrap_or(u32::MAX)
    }
}

/// An event's node as it is written, hashed as it is written (FNV-1a).
#[derive(Default)]
struct NodeText {
    text: String,
    hash: u64,
}

impl NodeText {
    const BASIS: u64 = 0xcbf2_9ce4_8422_2325;

    fn clear(&mut self) {
        self.text.clear();
        self.hash = Self::BASIS;
    }
}

impl fmt::Write for NodeText {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        self.text.push_str(text);
        self.hash = text.bytes().fold(self.hash, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        });
        Ok(())
    }
}

fn mix(hash: u64, value: u64) -> u64 {
    (hash.rotate_left(5) ^ value).wrapping_mul(MIX_K)
}

/// Reads an event's message (a call site's name, on its first sight).
struct Message<'a>(&'a mut String);

impl Visit for Message<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            // Writing to a String cannot fail.
            let _ = write!(self.0, "{value:?}");
        }
    }
}

/// Reads an event's node, and the fields its kind's slots say a window reads when those
/// are wanted, into buffers the tally reuses.
struct Visitor<'a> {
    slots: &'a [Slot],
    node: &'a mut NodeText,
    fields: Option<&'a mut Vec<(&'static str, FieldValue)>>,
    used: usize,
}

impl Visitor<'_> {
    /// The value slot of `field`, a field a window reads, if its windows are open now.
    fn value(&mut self, field: &Field) -> Option<&mut FieldValue> {
        let fields = self.fields.as_deref_mut()?;
        if self.used == fields.len() {
            fields.push((field.name(), FieldValue::default()));
        }
        let slot = &mut fields[self.used];
        slot.0 = field.name();
        self.used += 1;
        Some(&mut slot.1)
    }

    /// Writes `field`'s text with `write`: the node's, or a field's a window reads.
    fn put_text(&mut self, field: &Field, write: impl FnOnce(&mut dyn fmt::Write)) {
        let value = match self.slots.get(field.index()) {
            Some(Slot::Node) => return write(self.node),
            Some(Slot::Read) => self.value(field),
            Some(Slot::Skip) | None => return,
        };
        let Some(value) = value else {
            return;
        };
        write(value.emptied_text());
    }

    /// Keeps `field`'s value, typed, if a window reads it (a node is written as text).
    fn put(&mut self, field: &Field, value: FieldValue) {
        match self.slots.get(field.index()) {
            Some(Slot::Node) => {
                let _ = write!(self.node, "{value}");
            }
            Some(Slot::Read) => {
                if let Some(slot) = self.value(field) {
                    *slot = value;
                }
            }
            Some(Slot::Skip) | None => {}
        }
    }
}

// Writing to the hook's buffers cannot fail. Integers and flags are kept as values.
impl Visit for Visitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put_text(field, |out| {
            let _ = out.write_str(value);
        });
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, FieldValue::U64(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, FieldValue::signed(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, FieldValue::Bool(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put_text(field, |out| {
            let _ = write!(out, "{value:?}");
        });
    }
}
