//! The story of a failure: the protocol events the components emit, recorded per execution
//! and printed as a step table ending at the violation, or drawn as an HTML swimlane
//! timeline ([`timeline`]).
//!
//! Components emit `tracing` events at their protocol steps (a heartbeat's term, a command
//! queued or dropped, a report processed, an edit applied, …) and know nothing of this
//! module. A [`Recorder`] keeps them, in the order they happened, with the thread that
//! emitted each. A checker run installs it around the whole run and takes each
//! execution's story ([`Recorder::install`], [`Recorder::take`]): loom runs all of an
//! execution's threads on the OS thread that installed it, and shuttle starts every task
//! with the dispatcher its run was started under. In production, [`record`] installs it
//! around a closure and the facade's [`crate::sync::thread::spawn`] hands it to every
//! thread the closure starts. With no recorder installed nothing is recorded, and an event
//! costs `tracing`'s check of its call site.
//!
//! A recorder also hands every event, as it is recorded, to its [sinks](EventSink): the
//! event log writer ([`EventLogWriter`], the NDJSON format of [`log`]) and the online
//! monitors of the checking layer. [`Recorder::streaming`] keeps nothing in memory and
//! only feeds its sink: what a production process installs to write its event log.
//!
//! The recorder lives outside the checkers' model (its lock is `std`'s, through
//! [`crate::unmodelled::Shared`]), so recording adds no scheduling point: an execution
//! explores the same interleavings with and without it.
//!
//! # Example
//!
//! ```
//! # hadoop_ref::sync::run_example(|| {
//! use hadoop_ref::clock::SystemClock;
//! use hadoop_ref::datanode::state_context::{
//!     StateContext, StateContextBehavior, StateContextConfig,
//! };
//! use hadoop_ref::hdds::ids::ScmId;
//! use hadoop_ref::story;
//!
//! let context = StateContext::new(
//!     StateContextBehavior::SeedPatch,
//!     StateContextConfig::default(),
//!     &[(ScmId(1), false)],
//!     SystemClock::shared(),
//! )?;
//! let (result, story) = story::record(|| context.update_term_from_heartbeat(4));
//! result?;
//! let names: Vec<&str> = story.events.iter().map(|e| e.name.as_str()).collect();
//! assert_eq!(names, ["heartbeat term received", "heartbeat term recorded for init"]);
//! assert_eq!(story.events[0].field("term"), Some("4"));
//! println!("{}", story.table());
//! # Ok::<(), hadoop_ref::datanode::DatanodeError>(())
//! # });
//! ```

mod event;
mod html;
mod json;
pub mod log;
mod table;

use std::collections::VecDeque;
use std::fmt;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event as TracingEvent, Metadata, Subscriber};

use crate::sync::thread;
use crate::unmodelled::Shared;

pub use event::{Event, Story};
pub use html::timeline;
pub use log::{EventLogReader, EventLogWriter, LogError, LogRecord, SCHEMA_VERSION};
pub use table::{StepTable, fields_text};

/// Events kept per execution; older ones are left out (and counted) past this bound, so a
/// long run's story keeps its end, where the violation is.
pub const MAX_EVENTS: usize = 4_096;

/// The crate whose events are recorded (its components' `tracing` targets start with it).
const TARGET_PREFIX: &str = "hadoop_ref::";

/// Runs `f` with a fresh [`Recorder`] installed on this thread and returns what `f`
/// returned with the story recorded meanwhile.
///
/// For one run of production threads (spawned through the facade, they inherit the
/// recorder) or of a single thread. A checker run installs a recorder around the whole
/// run instead ([`Recorder::install`]) and [takes](Recorder::take) each execution's
/// story: shuttle starts every task with the dispatcher the run was started under, not
/// the one an execution installs.
pub fn record<T>(f: impl FnOnce() -> T) -> (T, Story) {
    let recorder = Recorder::default();
    let value = recorder.install(f);
    (value, recorder.take())
}

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

/// A `tracing` subscriber that keeps this crate's events (see the module docs).
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
}

impl Default for Kept {
    fn default() -> Self {
        Self {
            events: VecDeque::new(),
            left_out: 0,
            capacity: MAX_EVENTS,
            sinks: Vec::new(),
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
        tracing::subscriber::with_default(self.clone(), f)
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
        let metadata = event.metadata();
        let mut fields = Fields::default();
        event.record(&mut fields);
        self.push(Event {
            step: 0,
            thread: thread::current_label(),
            node: fields.node,
            component: component_of(metadata.target()),
            name: fields.message.unwrap_or_else(|| metadata.name().to_owned()),
            fields: fields.rest,
        });
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
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
