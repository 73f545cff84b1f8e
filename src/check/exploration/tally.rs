//! The cheap hook: a `tracing` subscriber that abstracts each event to its kind (its call
//! site) and node as it happens, hashes the execution's sequence incrementally, keeps the
//! ordered pairs of kinds at thread switches, and feeds the case's race windows, without
//! building the story's [`Event`](crate::story::Event) (no allocation once a run has seen
//! its kinds and nodes). It wraps the story's [`Recorder`] when one is wanted as well.

use std::collections::{HashMap, HashSet};
use std::fmt::{self, Write as _};
use std::hash::{BuildHasherDefault, Hasher};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event as TracingEvent, Metadata, Subscriber};

use super::summary::{CoverageSummary, WindowCount};
use super::window::{Captured, MAX_WINDOWS, RaceWindow, Seen, WindowState};
use crate::story::Recorder;
use crate::sync::thread;
use crate::unmodelled::Shared;

/// The crate whose events are counted (its components' `tracing` targets start with it).
const TARGET_PREFIX: &str = "hadoop_ref::";

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

/// An event kind: one call site of the crate, named by its component and message.
struct Kind {
    id: u32,
    component: &'static str,
    name: String,
    /// The windows whose predicates read this kind (bit `i`: window `i`).
    windows: u64,
}

/// What a run counted, and the current execution's state.
pub(super) struct Tally {
    windows: &'static [RaceWindow],
    kinds: HashMap<usize, Kind, Fast>,
    nodes: HashMap<String, u32, Fast>,
    node: String,
    fields: Vec<(&'static str, String)>,
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
            kinds: HashMap::default(),
            nodes: HashMap::default(),
            node: String::new(),
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

    /// One event of the crate, emitted by thread `thread`.
    pub(super) fn observe(&mut self, event: &TracingEvent<'_>, thread: u64) {
        if !self.active {
            return;
        }
        let metadata = event.metadata();
        let site = std::ptr::from_ref(metadata) as usize;
        let first_sight = !self.kinds.contains_key(&site);
        let mut message = String::new();
        let wants_fields = match self.kinds.get(&site) {
            Some(kind) => kind.windows != 0,
            None => true,
        };
        self.node.clear();
        let mut visitor = Visitor {
            node: &mut self.node,
            message: first_sight.then_some(&mut message),
            fields: wants_fields.then_some(&mut self.fields),
            wanted: &self.wanted,
            used: 0,
        };
        event.record(&mut visitor);
        let used = visitor.used;
        if first_sight {
            self.learn(site, metadata.target(), message);
        }
        let Some(kind) = self.kinds.get(&site) else {
            return;
        };
        let node = match self.node.is_empty() {
            true => 0,
            false => intern(&mut self.nodes, &self.node),
        };
        self.hash = mix(self.hash, (u64::from(node) << 32) | u64::from(kind.id));
        if let Some((last_thread, last_kind)) = self.last {
            if last_thread != thread && self.pairs.len() < MAX_DISTINCT {
                self.pairs
                    .insert((u64::from(last_kind) << 32) | u64::from(kind.id));
            }
        }
        self.last = Some((thread, kind.id));
        let open = kind.windows & !self.hit;
        if open == 0 {
            return;
        }
        let fields = Captured(&self.fields[..used]);
        let seen = Seen::new(
            kind.component,
            &kind.name,
            (!self.node.is_empty()).then_some((self.node.as_str(), u64::from(node))),
            thread,
            &fields,
        );
        for (i, window) in self.windows.iter().enumerate() {
            if open & (1 << i) != 0 && (window.step)(&mut self.states[i], &seen) {
                self.hit |= 1 << i;
            }
        }
    }

    fn learn(&mut self, site: usize, target: &'static str, name: String) {
        let windows = self
            .windows
            .iter()
            .enumerate()
            .filter(|(_, w)| w.reads.contains(&name.as_str()))
            .fold(0u64, |mask, (i, _)| mask | (1 << i));
        let id = u32::try_from(self.kinds.len() + 1).unwrap_or(u32::MAX);
        let component = target.strip_prefix(TARGET_PREFIX).unwrap_or(target);
        self.kinds.insert(
            site,
            Kind {
                id,
                component,
                name,
                windows,
            },
        );
    }
}

/// The number of `node`, given on first sight.
fn intern(nodes: &mut HashMap<String, u32, Fast>, node: &str) -> u32 {
    if let Some(&id) = nodes.get(node) {
        return id;
    }
    let id = u32::try_from(nodes.len() + 1).unwrap_or(u32::MAX);
    nodes.insert(node.to_owned(), id);
    id
}

fn mix(hash: u64, value: u64) -> u64 {
    (hash.rotate_left(5) ^ value).wrapping_mul(MIX_K)
}

/// Reads an event's node, its message on first sight, and its other fields when a window
/// wants them, into buffers the tally reuses.
struct Visitor<'a> {
    node: &'a mut String,
    message: Option<&'a mut String>,
    fields: Option<&'a mut Vec<(&'static str, String)>>,
    wanted: &'a [&'static str],
    used: usize,
}

impl Visitor<'_> {
    fn put(&mut self, field: &Field, write: impl FnOnce(&mut String)) {
        match field.name() {
            "message" => {
                if let Some(message) = self.message.as_deref_mut() {
                    write(message);
                }
            }
            "node" => write(self.node),
            name => {
                let Some(fields) = self.fields.as_deref_mut() else {
                    return;
                };
                if !self.wanted.contains(&name) {
                    return;
                }
                if self.used == fields.len() {
                    fields.push((name, String::new()));
                }
                let slot = &mut fields[self.used];
                slot.0 = name;
                slot.1.clear();
                write(&mut slot.1);
                self.used += 1;
            }
        }
    }
}

impl Visit for Visitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, |out| out.push_str(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        // Writing to a String cannot fail.
        self.put(field, |out| {
            let _ = write!(out, "{value:?}");
        });
    }
}

/// The subscriber a coverage run installs: counts into its tally, then hands the event to
/// the story's recorder when the run also wants one (event logs, monitors).
#[derive(Clone)]
pub(super) struct Exploring {
    pub(super) tally: Shared<Tally>,
    pub(super) inner: Option<Recorder>,
}

impl Subscriber for Exploring {
    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(crate::story::EVENT_LEVEL)
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_event() && metadata.target().starts_with(TARGET_PREFIX)
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        // Spans are never enabled (see `enabled`); tracing still wants an id.
        Id::from_u64(1)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &TracingEvent<'_>) {
        let thread = thread::current_key();
        self.tally.with(|tally| tally.observe(event, thread));
        if let Some(recorder) = &self.inner {
            recorder.event(event);
        }
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}
