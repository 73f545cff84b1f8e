//! The cheap hook's count: each event abstracted to its kind (its call site) and node as
//! it happens, the execution's sequence hashed incrementally, the ordered pairs of kinds
//! kept at thread switches, and the case's race windows fed, without building the story's
//! [`Event`](crate::story::Event) (no allocation once a run has seen its kinds and
//! nodes).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

use super::summary::{CoverageSummary, WindowCount};
use super::window::{Captured, MAX_WINDOWS, RaceWindow, Seen, WindowState};
use crate::events::{Arg, Site};
use crate::story::{FieldValue, write_arg};

/// Most distinct sequences kept per run: past it, new ones are counted as overflow rather
/// than kept (memory stays bounded on an unbounded soak). Pairs of kinds are bounded by
/// the code's call sites.
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
    component: String,
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
    pairs: Pairs,
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
            pairs: Pairs::default(),
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
            racing_pairs: self.pairs.count,
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

    /// One event of the crate (the values `args` of call site `site`), emitted by thread
    /// `thread`. Its node is read at every event; the fields the windows read only while
    /// one of its kind's windows is open.
    pub(super) fn observe(&mut self, site: &Site<'_>, args: &[Arg<'_>], thread: u64) {
        if !self.active {
            return;
        }
        let index = match self.sites.get(&site.key) {
            Some(&index) => index,
            None => self.learn(site),
        };
        let kind = &self.kinds[index];
        let open = kind.windows & !self.hit;
        let mut node = 0;
        let mut used = 0;
        for (at, (slot, arg)) in kind.slots.iter().zip(args).enumerate() {
            match slot {
                _ if matches!(arg, Arg::Absent) => {}
                Slot::Node => node = self.nodes.number(arg, &mut self.node),
                Slot::Read if open != 0 => {
                    if used == self.fields.len() {
                        self.fields.push(("", FieldValue::default()));
                    }
                    self.fields[used].0 = site.fields[at];
                    self.fields[used].1.assign(arg);
                    used += 1;
                }
                Slot::Read | Slot::Skip => {}
            }
        }
        self.hash = mix(self.hash, (u64::from(node) << 32) | u64::from(kind.id));
        if let Some((last_thread, last_kind)) = self.last
            && last_thread != thread
        {
            self.pairs.insert(last_kind, kind.id);
        }
        self.last = Some((thread, kind.id));
        if open == 0 {
            return;
        }
        let fields = Captured(&self.fields[..used]);
        let seen = Seen::new(
            &kind.component,
            &kind.name,
            self.nodes.text(node).map(|text| (text, u64::from(node))),
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
    fn learn(&mut self, site: &Site<'_>) -> usize {
        let name = site.name.to_owned();
        let windows = self
            .windows
            .iter()
            .enumerate()
            .filter(|(_, w)| w.reads.contains(&name.as_str()))
            .fold(0u64, |mask, (i, _)| mask | (1 << i));
        let slots = site
            .fields
            .iter()
            .map(|&field| match field {
                "node" => Slot::Node,
                name if self.wanted.contains(&name) => Slot::Read,
                _ => Slot::Skip,
            })
            .collect();
        let id = u32::try_from(self.kinds.len() + 1).unwrap_or(u32::MAX);
        self.kinds.push(Kind {
            id,
            component: site.component().to_owned(),
            name,
            windows,
            slots,
        });
        self.sites.insert(site.key, self.kinds.len() - 1);
        self.kinds.len() - 1
    }
}

/// The ordered pairs of kinds seen at a thread switch: a bit per pair, a row per first
/// kind. Kinds are the crate's call sites, so the rows are bounded by the code (a few
/// hundred kinds, a few kilobytes).
#[derive(Default)]
struct Pairs {
    rows: Vec<Vec<u64>>,
    count: u64,
}

/// Kinds whose pairs are counted (far more than the crate has call sites).
const MAX_PAIR_KINDS: usize = 4_096;

impl Pairs {
    /// Counts the pair (`first`, `then`) if it is new.
    fn insert(&mut self, first: u32, then: u32) {
        let (Ok(row), Ok(bit)) = (usize::try_from(first), usize::try_from(then)) else {
            return;
        };
        if row >= MAX_PAIR_KINDS || bit >= MAX_PAIR_KINDS {
            return;
        }
        if row >= self.rows.len() {
            self.rows.resize_with(row + 1, Vec::new);
        }
        let words = &mut self.rows[row];
        if bit / 64 >= words.len() {
            words.resize(bit / 64 + 1, 0);
        }
        let mask = 1u64 << (bit % 64);
        if words[bit / 64] & mask == 0 {
            words[bit / 64] |= mask;
            self.count += 1;
        }
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
    /// The nodes named by an id, by its prefix and number: found without writing them.
    ids: Vec<(&'static str, u64, u32)>,
}

impl Nodes {
    /// The number of the node `arg` names (0 for an empty one), given on first sight;
    /// `scratch` is where its text is written when it is not known by its id.
    fn number(&mut self, arg: &Arg<'_>, scratch: &mut NodeText) -> u32 {
        if let Arg::Id { prefix, number } = *arg
            && let Some(&(_, _, known)) = self.ids.iter().find(|(known_prefix, known_number, _)| {
                *known_number == number
                    && (std::ptr::eq(*known_prefix, prefix) || *known_prefix == prefix)
            })
        {
            return known;
        }
        scratch.clear();
        write_arg(scratch, arg);
        if scratch.text.is_empty() {
            return 0;
        }
        let known = self.intern(scratch);
        if let Arg::Id { prefix, number } = *arg
            && self.ids.len() < MAX_NODE_IDS
        {
            self.ids.push((prefix, number, known));
        }
        known
    }

    /// The text of node `number` (none for 0).
    fn text(&self, number: u32) -> Option<&str> {
        let at = usize::try_from(number).ok()?.checked_sub(1)?;
        self.texts.get(at).map(String::as_str)
    }

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

/// Node ids a run keeps by their prefix and number (past it, an id is written out and
/// looked for by its text): the nodes of one cluster, with room to spare.
const MAX_NODE_IDS: usize = 256;

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
