//! The [`Recorder`]: the event hook (and `tracing` subscriber) that keeps this crate's
//! events per execution, bounded, and hands each to its [sinks](EventSink) as it records
//! it.
//!
//! A sink says which events it takes ([`EventSink::wants`]); the recorder asks once per
//! call site and hands each event only to the sinks that take it. A recorder that keeps
//! nothing does not even write out an event no sink takes: it only numbers it.

use std::collections::VecDeque;
use std::fmt;

use tracing::span::{Attributes, Id, Record};
use tracing::{Event as TracingEvent, Metadata, Subscriber};

use super::event::{Event, Story};
use super::matching;
use super::site::{self, Routing, Site, Sites};
use crate::events::{self, Arg, EventHook, Site as CallSite, TARGET_PREFIX};
use crate::sync::thread;
use crate::unmodelled::Shared;

/// Events kept per execution; older ones are left out (and counted) past this bound, so a
/// long run's story keeps its end, where the violation is.
pub const MAX_EVENTS: usize = 4_096;

/// Where a [`Recorder`] hands every event as it records it, in the order of their steps
/// (under the recorder's lock, outside any checker's model: keep it short, never block).
pub trait EventSink: Send {
    /// One event, with its step.
    fn event(&mut self, event: &Event);

    /// Whether the sink takes the events of `component` named `name` (every event, unless
    /// a sink says otherwise). A recorder asks once per call site (each of this crate's
    /// has one message) and keeps the answer: it must not change over the sink's life.
    ///
    /// ```
    /// use hadoop_ref::story::{Event, EventSink};
    ///
    /// /// Counts the datanodes' term changes, and nothing else.
    /// struct TermSets(usize);
    ///
    /// impl EventSink for TermSets {
    ///     fn event(&mut self, _event: &Event) {
    ///         self.0 += 1;
    ///     }
    ///
    ///     fn wants(&mut self, component: &str, name: &str) -> bool {
    ///         component == "datanode::state_context" && name == "term set"
    ///     }
    /// }
    ///
    /// assert!(!TermSets(0).wants("datanode::heartbeat", "heartbeat response"));
    /// ```
    fn wants(&mut self, component: &str, name: &str) -> bool {
        let _ = (component, name);
        true
    }

    /// The sink's route for the events of `component` named `name`, or `None` if it does
    /// not take them: asked once per call site like [`wants`](EventSink::wants) (which it
    /// asks, by default, giving route 0), and handed back with each of the site's events
    /// ([`routed`](EventSink::routed)), so that a sink that routes events further (the
    /// monitors, each to those that read its kind) decides once per call site, not at
    /// each event.
    fn route(&mut self, component: &str, name: &str) -> Option<u32> {
        self.wants(component, name).then_some(0)
    }

    /// The sink's route for the events of call site `site` (its key,
    /// [`crate::events::Site::key`]) of `component` named `name`, or `None` if it does not
    /// take them: what a recorder asks, once per call site. By default the route of the
    /// kind ([`route`](EventSink::route)); a sink that answers [`met`](EventSink::met) gives
    /// each call site a route of its own.
    fn route_site(&mut self, site: usize, component: &str, name: &str) -> Option<u32> {
        let _ = site;
        self.route(component, name)
    }

    /// One event, of a call site whose [`route_site`](EventSink::route_site) was `route`
    /// (by default, [`event`](EventSink::event)).
    fn routed(&mut self, route: u32, event: &Event) {
        let _ = route;
        self.event(event);
    }

    /// Whether the sink already holds an event equal to the next one of a call site whose
    /// route is `route`, as `same` tells: if it does, it takes that event as the next one
    /// and returns true, and a recorder that keeps nothing hands it nothing more for it,
    /// not even writing the event out. A sink that answers `true` gives each call site a
    /// route of its own ([`route_site`](EventSink::route_site)) and holds an event of that
    /// route only, so `same` compares the step, the node and the field values, not the
    /// name and component (the site's) nor, where the call left no value out, the field
    /// names (the site's, in its order). A sink that remembers the sequences it judged (a
    /// repeated sequence's next event is one of its own) spares the recorder writing each
    /// event of a repeat. `false` by default.
    fn met(&mut self, route: u32, same: &mut dyn FnMut(&Event) -> bool) -> bool {
        let _ = (route, same);
        false
    }
}

/// A boxed sink, as a caller hands one over.
impl<S: EventSink + ?Sized> EventSink for Box<S> {
    fn event(&mut self, event: &Event) {
        (**self).event(event);
    }

    fn wants(&mut self, component: &str, name: &str) -> bool {
        (**self).wants(component, name)
    }

    fn route(&mut self, component: &str, name: &str) -> Option<u32> {
        (**self).route(component, name)
    }

    fn route_site(&mut self, site: usize, component: &str, name: &str) -> Option<u32> {
        (**self).route_site(site, component, name)
    }

    fn routed(&mut self, route: u32, event: &Event) {
        (**self).routed(route, event);
    }

    fn met(&mut self, route: u32, same: &mut dyn FnMut(&Event) -> bool) -> bool {
        (**self).met(route, same)
    }
}

/// A sink shared with its owner, who reads what it gathered after the run.
impl<S: EventSink> EventSink for Shared<S> {
    fn event(&mut self, event: &Event) {
        self.with(|sink| sink.event(event));
    }

    fn wants(&mut self, component: &str, name: &str) -> bool {
        self.with(|sink| sink.wants(component, name))
    }

    fn route(&mut self, component: &str, name: &str) -> Option<u32> {
        self.with(|sink| sink.route(component, name))
    }

    fn route_site(&mut self, site: usize, component: &str, name: &str) -> Option<u32> {
        self.with(|sink| sink.route_site(site, component, name))
    }

    fn routed(&mut self, route: u32, event: &Event) {
        self.with(|sink| sink.routed(route, event));
    }

    fn met(&mut self, route: u32, same: &mut dyn FnMut(&Event) -> bool) -> bool {
        self.with(|sink| sink.met(route, same))
    }
}

/// Keeps this crate's events, as the thread's event hook or a `tracing` subscriber (see the
/// `story` module's docs).
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    kept: Shared<Kept>,
}

/// The recorder's bounded buffer and its sinks.
struct Kept {
    events: VecDeque<Event>,
    left_out: usize,
    capacity: usize,
    sinks: Vec<Box<dyn EventSink>>,
    /// Which sinks take the events of each call site, and (for a recorder that keeps
    /// nothing) each site's event, refilled in place: an inline monitor's run allocates
    /// nothing per event.
    sites: Sites,
    /// The label of each thread that emitted an event since the last [`Recorder::take`],
    /// by its key: a thread's label is formatted once, not at each of its events.
    labels: Vec<(u64, String)>,
}

/// Threads whose labels a recorder keeps between two takes; past it, a label is formatted
/// at each event (a production process's short-lived threads).
const MAX_LABELS: usize = 64;

/// The label of the calling thread (its key `key`), from `labels` or formatted and kept.
fn label_of(labels: &mut Vec<(u64, String)>, key: u64) -> std::borrow::Cow<'_, str> {
    if let Some(at) = labels.iter().position(|(k, _)| *k == key) {
        return std::borrow::Cow::Borrowed(labels[at].1.as_str());
    }
    let label = thread::current_label();
    if labels.len() >= MAX_LABELS {
        return std::borrow::Cow::Owned(label);
    }
    labels.push((key, label));
    std::borrow::Cow::Borrowed(labels[labels.len() - 1].1.as_str())
}

impl Default for Kept {
    fn default() -> Self {
        Self {
            events: VecDeque::new(),
            left_out: 0,
            capacity: MAX_EVENTS,
            sinks: Vec::new(),
            sites: Sites::default(),
            labels: Vec::new(),
        }
    }
}

impl fmt::Debug for Kept {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kept")
            .field("events", &self.events.len())
            .field("left_out", &self.left_out)
            .field("capacity", &self.capacity)
            .field("sinks", &self.sinks.len())
            .finish()
    }
}

impl Recorder {
    /// A recorder that keeps no event in memory and hands each to `sink`.
    pub fn streaming(sink: impl EventSink + 'static) -> Self {
        Self::discarding().with_sink(sink)
    }

    /// A recorder that keeps no event in memory: it only numbers the events and hands
    /// them to the sinks added with [`Recorder::with_sink`].
    pub fn discarding() -> Self {
        let recorder = Self::default();
        recorder.kept.with(|kept| kept.capacity = 0);
        recorder
    }

    /// Also hands every event recorded from now on to `sink`.
    pub fn with_sink(self, sink: impl EventSink + 'static) -> Self {
        self.kept.with(|kept| {
            kept.sinks.push(Box::new(sink));
            kept.sites = Sites::default();
        });
        self
    }

    /// Runs `f` with this recorder taking the calling thread's events: as its event hook
    /// ([`crate::events`]) and its default `tracing` subscriber (for events that come
    /// through `tracing`).
    pub fn install<T>(&self, f: impl FnOnce() -> T) -> T {
        events::with_hook(events::hook(self.clone()), || {
            super::interest::with_scoped_default(self.clone(), f)
        })
    }

    /// Makes this recorder take the events of every thread of the process that has no
    /// hook or subscriber of its own: as the process's event hook ([`crate::events`]) and
    /// its global `tracing` subscriber. Returns false if either was already set (the
    /// other is set all the same).
    pub fn install_globally(&self) -> bool {
        let hooked = events::set_global_hook(events::hook(self.clone())).is_ok();
        let traced = tracing::subscriber::set_global_default(self.clone()).is_ok();
        hooked && traced
    }

    /// The events recorded so far, leaving the recorder empty for the next execution.
    /// The sinks stay; the next event is step 1 again.
    pub fn take(&self) -> Story {
        self.kept.with(|kept| {
            // A checker's next execution numbers its threads afresh.
            kept.labels.clear();
            Story {
                events: std::mem::take(&mut kept.events).into(),
                left_out: std::mem::take(&mut kept.left_out),
            }
        })
    }
}

impl Kept {
    /// Numbers `event` (of the call site keyed `site`) and hands it to the sinks that take
    /// it, then keeps it (within the bound).
    fn push(&mut self, mut event: Event, site: usize) {
        event.step = self.left_out + self.events.len() + 1;
        let sinks = &mut self.sinks;
        let routing = self.sites.routing(site, &event, |component, name| {
            routing_of(sinks, site, component, name)
        });
        hand(sinks, routing, routing.takers, &event);
        if self.events.len() >= self.capacity {
            self.events.pop_front();
            self.left_out += 1;
        }
        self.events.push_back(event);
    }

    /// Numbers `event`; if a sink takes it, hands it to the sinks that take it: to a sink
    /// that already holds an event equal to it ([`EventSink::met`]) as that event, to the
    /// others as its call site's event refilled with it ([`Sites`]). The event of a site no
    /// sink takes is only numbered, and one every taker already holds is not written out.
    fn stream(&mut self, call: &CallSite<'_>, args: &[Arg<'_>]) {
        self.left_out += 1;
        let Kept {
            sinks,
            sites,
            labels,
            left_out,
            ..
        } = self;
        let step = *left_out;
        let (site, filled) = sites.site(call, args, |component, name| {
            routing_of(sinks, call.key, component, name)
        });
        let mut takers = site.routing.takers;
        if takers == 0 {
            return;
        }
        if !filled {
            takers &= !met_by(sinks, site, call, args, step);
            if takers == 0 && sinks.len() <= ROUTED_SINKS {
                return;
            }
            site.refill(call, args);
        }
        // The thread is found out only for an event a sink takes written out.
        let label = label_of(labels, thread::current_key());
        site.event.thread.clear();
        site.event.thread.push_str(&label);
        site.event.step = step;
        hand(sinks, &site.routing, takers, &site.event);
    }
}

/// The sinks taking `site`'s events that already hold an event equal to `args` (step
/// `step`) in all but its thread, and take it as that event ([`EventSink::met`]): a bit
/// set of their indices, as [`Routing::takers`].
fn met_by(
    sinks: &mut [Box<dyn EventSink>],
    site: &Site,
    call: &CallSite<'_>,
    args: &[Arg<'_>],
    step: usize,
) -> u64 {
    // The name, the component and the field names are the route's (`EventSink::met`).
    let mut same =
        |held: &Event| held.step == step && matching::same_node_and_fields(call, args, held);
    let mut met = 0;
    for (at, sink) in sinks.iter_mut().enumerate().take(ROUTED_SINKS) {
        let taker = site.routing.takers & (1 << at) != 0;
        if taker && sink.met(site.routing.routes[at], &mut same) {
            met |= 1 << at;
        }
    }
    met
}

/// Sinks whose answers a recorder keeps; any further sink takes every event.
const ROUTED_SINKS: usize = 64;

/// The `sinks` that take the events of call site `site`, of `component` named `name`, and
/// their routes.
fn routing_of(
    sinks: &mut [Box<dyn EventSink>],
    site: usize,
    component: &str,
    name: &str,
) -> Routing {
    let mut routing = Routing {
        takers: 0,
        routes: vec![0; sinks.len().min(ROUTED_SINKS)],
    };
    for (at, sink) in sinks.iter_mut().enumerate().take(ROUTED_SINKS) {
        if let Some(route) = sink.route_site(site, component, name) {
            routing.takers |= 1 << at;
            routing.routes[at] = route;
        }
    }
    routing
}

/// Hands `event` to the sinks of `takers` (a bit set of sinks `routing` names), each with
/// its route ([`Sites`]).
fn hand(sinks: &mut [Box<dyn EventSink>], routing: &Routing, takers: u64, event: &Event) {
    for (at, sink) in sinks.iter_mut().enumerate() {
        match routing.routes.get(at) {
            Some(&route) if takers & (1 << at) != 0 => sink.routed(route, event),
            // Past the routed sinks, a sink takes every event.
            None => sink.event(event),
            Some(_) => {}
        }
    }
}

impl Subscriber for Recorder {
    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(super::interest::EVENT_LEVEL)
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
        if event.metadata().target().starts_with(TARGET_PREFIX) {
            events::with_tracing_event(event, |site, args| self.record(site, args));
        }
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

impl EventHook for Recorder {
    fn event(&self, site: &CallSite<'_>, args: &[Arg<'_>]) {
        if site.target.starts_with(TARGET_PREFIX) {
            self.record(site, args);
        }
    }
}

impl Recorder {
    /// Records one event of this crate: the values `args` of call site `site`.
    fn record(&self, site: &CallSite<'_>, args: &[Arg<'_>]) {
        self.kept.with(|kept| {
            if kept.capacity == 0 {
                kept.stream(site, args);
                return;
            }
            let label = label_of(&mut kept.labels, thread::current_key()).into_owned();
            let recorded = Event {
                thread: label,
                ..site::event_of(site, args)
            };
            kept.push(recorded, site.key);
        });
    }
}

/// A `tracing` event of this crate as a story's event (its step left 0), with the thread
/// that emits it; `None` for another crate's event.
pub(super) fn event_of(event: &TracingEvent<'_>) -> Option<Event> {
    if !event.metadata().target().starts_with(TARGET_PREFIX) {
        return None;
    }
    Some(events::with_tracing_event(event, |site, args| Event {
        thread: thread::current_label(),
        ..site::event_of(site, args)
    }))
}
