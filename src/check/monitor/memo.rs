//! Judging each distinct event sequence once. A checker runs a small scenario's
//! executions by the ten thousand, and most of them emit a sequence of protocol events an
//! earlier one already emitted: a scripted case has one sequence, a race of two threads a
//! handful. A monitor's verdict is a function of the events alone (their steps, nodes,
//! components, names and fields; [`Monitor`](super::Monitor)), so a sequence judged once
//! is judged for every execution that repeats it.
//!
//! [`JudgedOnce`] keeps the sequences it judged as a tree of events (a trie: a path from
//! the root is a sequence's start, and the node a sequence ends at holds its violations).
//! An execution walks the tree as its events come, comparing each with the children of
//! the node it is at; an event that matches none starts a new branch. At the execution's
//! end, a node that holds violations gives them (a repeat); otherwise the [`MonitorSet`]
//! judges the path's events and the node keeps what it found. Matching compares what a
//! monitor reads of an event (all but its thread), so a repeat is exact: no hash stands
//! in for the events. Behind a recorder that keeps nothing, the comparison is made on the
//! `tracing` call's own values before the event is written out ([`EventSink::met`]): the
//! events of a repeat are never written, only compared.
//!
//! A run whose executions seldom repeat (a cluster's: every one differs) would keep its
//! events for nothing. Once [`PROBE_EXECUTIONS`] executions met fewer than one repeat in
//! four, the tree is dropped and the set judges the events as they come, as a bare
//! [`MonitorSet`] does, for the rest of the run. The tree keeps at most
//! [`MAX_EVENTS_KEPT`] events: an execution that would grow it past them is judged as its
//! events come, and the tree starts afresh at the next execution.
//!
//! ```
//! use hadoop_ref::check::monitor::MonitorSet;
//! use hadoop_ref::check::monitor::memo::JudgedOnce;
//! use hadoop_ref::story::{Event, EventSink};
//!
//! let mut monitors = JudgedOnce::new(MonitorSet::all());
//! for _ in 0..3 {
//!     monitors.reset();
//!     monitors.event(&Event {
//!         step: 1,
//!         node: Some("dn1".into()),
//!         component: "datanode::state_context".into(),
//!         name: "term set".into(),
//!         fields: vec![("term".into(), "4".into())],
//!         ..Event::default()
//!     });
//!     assert!(monitors.violations().is_empty());
//! }
//! assert_eq!((monitors.executions(), monitors.repeats()), (3, 2));
//! ```

use std::fmt;

use super::MonitorSet;
use super::judgement::Judgement;
use crate::story::fast_hash::FastMap;
use crate::story::{Event, EventSink};

/// Events the tree of judged sequences keeps, over all its sequences.
pub const MAX_EVENTS_KEPT: usize = 1 << 16;

/// Executions after which a [`JudgedOnce`] that met fewer than one repeat in four stops
/// keeping sequences.
pub const PROBE_EXECUTIONS: u64 = 16;

/// The root of the tree: a node with no event.
const ROOT: usize = 0;

/// A [`MonitorSet`] that judges each distinct event sequence once (see the module's
/// docs): an [`EventSink`] to install on a recorder, reset at each execution's start and
/// asked for its [violations](JudgedOnce::violations) at its end.
pub struct JudgedOnce {
    set: MonitorSet,
    /// The tree of judged sequences; `nodes[ROOT]` is the root.
    nodes: Vec<Node>,
    /// Where this execution's events led, while it walks the tree.
    at: usize,
    /// Whether this execution's events go to the set as they come.
    direct: bool,
    /// Whether executions walk the tree (until the probe finds few repeats).
    remembering: bool,
    executions: u64,
    repeats: u64,
    /// The route given each call site ([`EventSink::route_site`]), by its key: its index
    /// in `site_routes`.
    sites: FastMap<usize, u32>,
    /// The set's route of each call site's kind, by the site's route.
    site_routes: Vec<u32>,
    /// The routes given by kind ([`EventSink::route`]).
    kinds: Vec<(String, String, u32)>,
}

/// One event of the tree: the event, the node before it and those after it, and the
/// violations of the sequence that ends here, once judged.
#[derive(Default)]
struct Node {
    event: Event,
    /// The route of the event's call site ([`EventSink::route_site`]; `None` for an event
    /// handed over without one): a site's own, so that a node is met by route.
    route: Option<u32>,
    parent: usize,
    children: Vec<usize>,
    judged: Option<Vec<Judgement>>,
}

impl fmt::Debug for JudgedOnce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JudgedOnce")
            .field("set", &self.set)
            .field("events_kept", &self.nodes.len().saturating_sub(1))
            .field("remembering", &self.remembering)
            .field("executions", &self.executions)
            .field("repeats", &self.repeats)
            .finish()
    }
}

impl JudgedOnce {
    /// Judges with `set`, remembering each sequence's violations.
    pub fn new(set: MonitorSet) -> Self {
        Self {
            set,
            nodes: vec![Node::default()],
            at: ROOT,
            direct: false,
            remembering: true,
            executions: 0,
            repeats: 0,
            sites: FastMap::default(),
            site_routes: Vec::new(),
            kinds: Vec::new(),
        }
    }

    /// Starts another execution.
    pub fn reset(&mut self) {
        self.set.reset();
        if self.nodes.len() >= MAX_EVENTS_KEPT {
            self.nodes.truncate(1);
            self.nodes[ROOT] = Node::default();
        }
        self.at = ROOT;
        self.direct = !self.remembering;
    }

    /// The verdicts that are violations over the execution's events (what
    /// [`MonitorSet::violations`] gives), judged now or remembered from its sequence.
    pub fn violations(&mut self) -> Vec<Judgement> {
        self.executions += 1;
        if self.direct {
            return self.set.violations();
        }
        if let Some(violations) = &self.nodes[self.at].judged {
            self.repeats += 1;
            return violations.clone();
        }
        self.judge_path();
        let violations = self.set.violations();
        self.nodes[self.at].judged = Some(violations.clone());
        self.probe();
        violations
    }

    /// Executions judged.
    pub fn executions(&self) -> u64 {
        self.executions
    }

    /// Executions whose sequence was judged before (their violations remembered).
    pub fn repeats(&self) -> u64 {
        self.repeats
    }

    /// Hands the set the events of the path from the root to where the execution is.
    fn judge_path(&mut self) {
        let mut path = Vec::new();
        let mut at = self.at;
        while at != ROOT {
            path.push(at);
            at = self.nodes[at].parent;
        }
        for &at in path.iter().rev() {
            self.set.observe(&self.nodes[at].event);
        }
    }

    /// After [`PROBE_EXECUTIONS`] executions, stops remembering if few repeated.
    fn probe(&mut self) {
        if self.executions >= PROBE_EXECUTIONS && self.repeats * 4 < self.executions {
            self.remembering = false;
            self.nodes = vec![Node::default()];
        }
    }

    /// The child of the node the execution is at that `same` accepts.
    fn child_where(&self, mut same: impl FnMut(&Node) -> bool) -> Option<usize> {
        self.nodes[self.at]
            .children
            .iter()
            .copied()
            .find(|&child| same(&self.nodes[child]))
    }

    /// A new route, standing for the set's route `kind`.
    fn new_route(&mut self, kind: u32) -> Option<u32> {
        let route = u32::try_from(self.site_routes.len()).ok()?;
        self.site_routes.push(kind);
        Some(route)
    }

    /// Walks to the child of the current node that `event` is, making it if there is none.
    fn walk(&mut self, route: Option<u32>, event: &Event) {
        if let Some(child) = self.child_where(|held| same_for_monitors(&held.event, event)) {
            self.at = child;
            return;
        }
        if self.nodes.len() >= MAX_EVENTS_KEPT {
            // The tree is full: this execution is judged as it comes.
            self.judge_path();
            self.set.observe(event);
            self.direct = true;
            return;
        }
        let child = self.nodes.len();
        self.nodes.push(Node {
            event: event.clone(),
            route,
            parent: self.at,
            ..Node::default()
        });
        self.nodes[self.at].children.push(child);
        self.at = child;
    }
}

impl EventSink for JudgedOnce {
    fn event(&mut self, event: &Event) {
        if self.direct {
            self.set.observe(event);
        } else {
            self.walk(None, event);
        }
    }

    fn wants(&mut self, component: &str, name: &str) -> bool {
        self.set.wants(component, name)
    }

    /// A route of the kind's own, as for a call site of its own (asked by whoever routes
    /// by kind, not by call site).
    fn route(&mut self, component: &str, name: &str) -> Option<u32> {
        let kind = self.set.route(component, name)?;
        let known = self
            .kinds
            .iter()
            .find(|(c, n, _)| c == component && n == name);
        if let Some(&(_, _, route)) = known {
            return Some(route);
        }
        let route = self.new_route(kind)?;
        self.kinds
            .push((component.to_owned(), name.to_owned(), route));
        Some(route)
    }

    /// A route of the call site's own (its kind's route in the set behind it), so that
    /// [`met`](EventSink::met) meets an event of the same call site only.
    fn route_site(&mut self, site: usize, component: &str, name: &str) -> Option<u32> {
        let kind = self.set.route(component, name)?;
        if let Some(&route) = self.sites.get(&site) {
            return Some(route);
        }
        let route = self.new_route(kind)?;
        self.sites.insert(site, route);
        Some(route)
    }

    fn routed(&mut self, route: u32, event: &Event) {
        let kind = usize::try_from(route)
            .ok()
            .and_then(|at| self.site_routes.get(at));
        match (kind, self.direct) {
            (Some(&kind), true) => self.set.routed(kind, event),
            (Some(_), false) => self.walk(Some(route), event),
            (None, true) => self.set.observe(event),
            (None, false) => self.walk(None, event),
        }
    }

    /// While walking the tree: whether a child of the node the execution is at is an
    /// event of `route` (a call site's own, [`route_site`](EventSink::route_site)) that
    /// `same` compares with, and if so walks to it.
    fn met(&mut self, route: u32, same: &mut dyn FnMut(&Event) -> bool) -> bool {
        if self.direct {
            return false;
        }
        let found = self.child_where(|node| node.route == Some(route) && same(&node.event));
        if let Some(child) = found {
            self.at = child;
        }
        found.is_some()
    }
}

/// Whether a monitor reads `a` and `b` alike: all their parts but the thread are equal.
fn same_for_monitors(a: &Event, b: &Event) -> bool {
    a.step == b.step
        && a.name == b.name
        && a.component == b.component
        && a.node == b.node
        && a.fields == b.fields
}
