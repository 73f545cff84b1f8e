//! The [`Recorder`]: a `tracing` subscriber that keeps this crate's events per execution,
//! bounded, and hands each to its [sinks](EventSink) as it records it.

use std::collections::VecDeque;
use std::fmt;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event as TracingEvent, Metadata, Subscriber};

use super::event::{Event, Story};
use crate::sync::thread;
use crate::unmodelled::Shared;

/// Events kept per execution; older ones are left out (and counted) past this bound, so a
/// long run's story keeps its end, where the violation is.
pub const MAX_EVENTS: usize = 4_096;

/// The crate whose events are recorded (its components' `tracing` targets start with it).
const TARGET_PREFIX: &str = "hadoop_ref::";

/// Where a [`Recorder`] hands every event as it records it, in the order of their steps
/// (under the recorder's lock, outside any checker's model: keep it short, never block).
pub trait EventSink: Send {
    /// One event, with its step.
    fn event(&mut self, event: &Event);
}

/// A boxed sink, as a caller hands one over.
impl<S: EventSink + ?Sized> EventSink for Box<S> {
    fn event(&mut self, event: &Event) {
        (**self).event(event);
    }
}

/// A sink shared with its owner, who reads what it gathered after the run.
impl<S: EventSink> EventSink for Shared<S> {
    fn event(&mut self, event: &Event) {
        self.with(|sink| sink.event(event));
    }
}

/// A `tracing` subscriber that keeps this crate's events (see the `story` module's docs).
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
    /// A recorder that keeps nothing refills this one event for each event it hands its
    /// sinks, reusing its strings: an inline monitor's run allocates nothing per event.
    scratch: Event,
}

impl Default for Kept {
    fn default() -> Self {
        Self {
            events: VecDeque::new(),
            left_out: 0,
            capacity: MAX_EVENTS,
            sinks: Vec::new(),
            scratch: Event::default(),
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
        self.kept.with(|kept| kept.sinks.push(Box::new(sink)));
        self
    }

    /// Runs `f` with this recorder as the calling thread's default subscriber.
    pub fn install<T>(&self, f: impl FnOnce() -> T) -> T {
        super::interest::with_scoped_default(self.clone(), f)
    }

    /// The events recorded so far, leaving the recorder empty for the next execution.
    /// The sinks stay; the next event is step 1 again.
    pub fn take(&self) -> Story {
        self.kept.with(|kept| Story {
            events: std::mem::take(&mut kept.events).into(),
            left_out: std::mem::take(&mut kept.left_out),
        })
    }

    fn push(&self, mut event: Event) {
        self.kept.with(|kept| {
            event.step = kept.left_out + kept.events.len() + 1;
            for sink in &mut kept.sinks {
                sink.event(&event);
            }
            if kept.capacity == 0 {
                kept.left_out += 1;
                return;
            }
            if kept.events.len() >= kept.capacity {
                kept.events.pop_front();
                kept.left_out += 1;
            }
            kept.events.push_back(event);
        });
    }
}

impl Subscriber for Recorder {
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
        if !event.metadata().target().starts_with(TARGET_PREFIX) {
            return;
        }
        let streamed = self.kept.with(|kept| {
            if kept.capacity > 0 {
                return false;
            }
            refill(&mut kept.scratch, event);
            kept.left_out += 1;
            kept.scratch.step = kept.left_out;
            for sink in &mut kept.sinks {
                sink.event(&kept.scratch);
            }
            true
        });
        if !streamed && let Some(event) = event_of(event) {
            self.push(event);
        }
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

/// A `tracing` event of this crate as a story's event (its step left 0), with the thread
/// that emits it; `None` for another crate's event.
pub(super) fn event_of(event: &TracingEvent<'_>) -> Option<Event> {
    let metadata = event.metadata();
    if !metadata.target().starts_with(TARGET_PREFIX) {
        return None;
    }
    let mut fields = Fields::default();
    event.record(&mut fields);
    Some(Event {
        step: 0,
        thread: thread::current_label(),
        node: fields.node,
        component: component_of(metadata.target()),
        name: fields.message.unwrap_or_else(|| metadata.name().to_owned()),
        fields: fields.rest,
    })
}

/// Rewrites `scratch` as the story's event of `event` (this crate's), as [`event_of`]
/// makes it, reusing its strings' buffers.
fn refill(scratch: &mut Event, event: &TracingEvent<'_>) {
    let metadata = event.metadata();
    scratch.thread.clear();
    scratch.thread.push_str(&thread::current_label());
    scratch.component.clear();
    scratch
        .component
        .push_str(component_of_str(metadata.target()));
    let mut refill = Refill {
        event: scratch,
        node: false,
        message: false,
        fields: 0,
    };
    event.record(&mut refill);
    let Refill {
        node,
        message,
        fields,
        ..
    } = refill;
    scratch.fields.truncate(fields);
    if !node {
        scratch.node = None;
    }
    if !message {
        scratch.name.clear();
        scratch.name.push_str(metadata.name());
    }
}

/// An event's fields written over a previous event's strings.
struct Refill<'a> {
    event: &'a mut Event,
    node: bool,
    message: bool,
    fields: usize,
}

impl Refill<'_> {
    /// The string `field`'s value goes in, emptied.
    fn slot(&mut self, field: &Field) -> &mut String {
        let slot = match field.name() {
            "message" => {
                self.message = true;
                &mut self.event.name
            }
            "node" => {
                self.node = true;
                self.event.node.get_or_insert_with(String::new)
            }
            name => {
                let at = self.fields;
                self.fields += 1;
                if at == self.event.fields.len() {
                    self.event.fields.push((String::new(), String::new()));
                }
                let (key, value) = &mut self.event.fields[at];
                key.clear();
                key.push_str(name);
                value
            }
        };
        slot.clear();
        slot
    }
}

impl Visit for Refill<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.slot(field).push_str(value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        use std::fmt::Write as _;
        // Writing into a String cannot fail.
        let _ = write!(self.slot(field), "{value:?}");
    }
}

/// `hadoop_ref::datanode::state_context` → `datanode::state_context`, borrowed.
fn component_of_str(target: &str) -> &str {
    target.strip_prefix(TARGET_PREFIX).unwrap_or(target)
}

/// `hadoop_ref::datanode::state_context` → `datanode::state_context`.
fn component_of(target: &str) -> String {
    target
        .strip_prefix(TARGET_PREFIX)
        .unwrap_or(target)
        .to_owned()
}

/// An event's fields, split into its message, its node and the rest.
#[derive(Default)]
struct Fields {
    message: Option<String>,
    node: Option<String>,
    rest: Vec<(String, String)>,
}

impl Fields {
    fn put(&mut self, field: &Field, value: String) {
        match field.name() {
            "message" => self.message = Some(value),
            "node" => self.node = Some(value),
            name => self.rest.push((name.to_owned(), value)),
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put(field, format!("{value:?}"));
    }
}
