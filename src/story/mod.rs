//! The story of a failure: the protocol events the components emit, recorded per execution
//! and printed as a step table ending at the violation, or drawn as an HTML swimlane
//! timeline ([`timeline`]).
//!
//! Components emit events at their protocol steps (a heartbeat's term, a command queued or
//! dropped, a report processed, an edit applied, …) through [`crate::events`] and know
//! nothing of this module. A [`Recorder`] keeps them, in the order they happened, with the
//! thread that emitted each. A checker run installs it around the whole run and takes each
//! execution's story ([`Recorder::install`], [`Recorder::take`]): as the thread's event
//! hook, which loom's and shuttle's executions share (they run every task on the OS thread
//! that installed it), and as its `tracing` subscriber, for events that come through
//! `tracing`. In production, [`record`] installs it around a closure and the facade's
//! [`crate::sync::thread::spawn`] hands it to every thread the closure starts. With no
//! recorder installed nothing is recorded, and an event costs a look at the thread's hook
//! and `tracing`'s check of its call site.
//!
//! A recorder also hands every event, as it is recorded, to its [sinks](EventSink): the
//! event log writer ([`EventLogWriter`], the NDJSON format of [`log`]) and the online
//! monitors of the checking layer. [`Recorder::streaming`] keeps nothing in memory and
//! only feeds its sink: what a production process installs to write its event log.
//!
//! The same events can be read from upstream's own logs: [`upstream`] maps the Ozone
//! datanode's and SCM's and the HDFS NameNode's log lines onto them ([`LogFormat`]).
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
//! assert_eq!(story.events[0].number("term"), Some(4));
//! println!("{}", story.table());
//! # Ok::<(), hadoop_ref::datanode::DatanodeError>(())
//! # });
//! ```

mod command_text;
mod event;
pub(crate) mod fast_hash;
mod format;
mod html;
mod interest;
mod json;
mod lines;
pub mod log;
mod matching;
mod recorder;
mod site;
mod table;
pub mod tla;
pub mod upstream;
mod value;

pub use command_text::read_fields;
pub use event::{Event, Story};
pub use format::{AnyLogReader, LogFormat};
pub use html::timeline;
pub use interest::EVENT_LEVEL;
pub(crate) use interest::with_scoped_default;
pub use log::{
    EventLogReader, EventLogWriter, LogError, LogRecord, OLDEST_SCHEMA_VERSION, SCHEMA_VERSION,
};
pub use recorder::{EventSink, MAX_EVENTS, Recorder};
pub use table::{StepTable, fields_text};
pub(crate) use value::trailing_number as list_item_id;
pub(crate) use value::write_arg;
pub use value::{FieldValue, ID_FIELDS};

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
