//! Typed protocol events: each call site of the crate's events, and its values as they
//! are (ids, terms, counts, flags), handed straight to the hook a checker or recorder
//! installed on the calling thread, with `tracing` as the path when none is installed.
//!
//! A component says what happened with this module's `debug!` (or `info!`, `warn!`),
//! written as `tracing`'s macro of the same name is. Where a hook is installed
//! ([`with_hook`]: the story's recorder, the coverage hook), the call hands it its static
//! [`EventSite`] and its values as [`Arg`]s, without `tracing`'s dispatch or its `Visit`
//! of each value, and nothing is written to text on the way: a monitor reads an id or a
//! term as a number. Where none is, the call is a `tracing` event like any other, seen
//! by whatever subscriber the process has (the recorder too, when it is installed as a
//! plain subscriber: it reads the event's values back into the same `Arg`s,
//! [`with_tracing_event`]).
//!
//! # Example
//!
//! ```
//! # hadoop_ref::sync::run_example(|| {
//! use std::sync::Mutex;
//! use hadoop_ref::clock::SystemClock;
//! use hadoop_ref::datanode::state_context::{
//!     StateContext, StateContextBehavior, StateContextConfig,
//! };
//! use hadoop_ref::events::{self, Arg, EventHook, Site};
//! use hadoop_ref::hdds::ids::ScmId;
//!
//! /// Keeps each event's name and its `term`, as the component handed it over.
//! #[derive(Default)]
//! struct Terms(Mutex<Vec<(String, Option<u64>)>>);
//!
//! impl EventHook for Terms {
//!     fn event(&self, site: &Site<'_>, args: &[Arg<'_>]) {
//!         let term = site.fields.iter().zip(args).find_map(|(name, arg)| match arg {
//!             Arg::U64(term) if *name == "term" => Some(*term),
//!             _ => None,
//!         });
//!         self.0.lock().unwrap().push((site.name.to_owned(), term));
//!     }
//! }
//!
//! let context = StateContext::new(
//!     StateContextBehavior::SeedPatch,
//!     StateContextConfig::default(),
//!     &[(ScmId(1), false)],
//!     SystemClock::shared(),
//! )?;
//! let terms = std::sync::Arc::new(Terms::default());
//! events::with_hook(terms.clone(), || context.update_term_from_heartbeat(4))?;
//! let seen = terms.0.lock().unwrap();
//! assert_eq!(seen[0], ("heartbeat term received".to_owned(), Some(4)));
//! # Ok::<(), hadoop_ref::datanode::DatanodeError>(())
//! # });
//! ```

pub(crate) mod arg;
pub(crate) mod hook;
pub(crate) mod macros;
pub(crate) mod site;
mod tracing_event;

#[cfg(test)]
mod tests;

pub(crate) use arg::event_id;
pub use arg::{Arg, EventId, EventText, EventValue};
pub use hook::{EventHook, SharedHook, current_hook, hook, set_global_hook, silenced, with_hook};
pub(crate) use macros::{debug, info, warn};
pub use site::{EventSite, Site, TARGET_PREFIX};
pub use tracing_event::with_tracing_event;
