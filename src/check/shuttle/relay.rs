//! A process-wide `tracing` subscriber that relays the events of the calling OS thread to
//! the subscriber that thread's run registered (the story's [`Recorder`], or the coverage
//! hook wrapping one): how a shuttle run observes its events without a scoped default
//! dispatcher.
//!
//! A subscriber installed as the run's scoped default (`tracing::subscriber::with_default`)
//! costs at every task switch: shuttle parks and reinstates a task's scoped default each
//! time the task yields (`set_default` and its guard), and while any scoped default is
//! alive every event looks its dispatcher up through the thread's state. Installed once
//! as the global default instead ([`relay_events_globally`]), the relay leaves shuttle
//! nothing to park; a run registers its subscriber on its own OS thread, where every one
//! of its tasks runs ([`with_subscriber`]). Events of a thread with no subscriber are not
//! enabled. A component that silences its own events for a while (the standby's dry run
//! of a batch, under a scoped `Dispatch::none` that yields nowhere) still silences them:
//! its scoped default is the one asked while it lasts.
//!
//! For the soak tool's processes, which run one case at a time: a process whose other
//! threads need their events must not install it (a thread spawned by the production
//! backend inherits the global default, not the thread-local recorder).

use std::cell::RefCell;

use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Dispatch, Event, Metadata, Subscriber};

use crate::events::{self, SharedHook};
use crate::story::Recorder;

/// The crate whose events are relayed.
const TARGET_PREFIX: &str = "hadoop_ref::";

thread_local! {
    /// The subscriber of the run on this OS thread, if one is registered.
    static TARGET: RefCell<Option<Dispatch>> = const { RefCell::new(None) };
}

/// Installs the relay as the process's global default `tracing` subscriber, unless
/// another is already global. Returns whether the relay is the global default.
pub fn relay_events_globally() -> bool {
    let _already_set = tracing::dispatcher::set_global_default(Dispatch::new(Relay));
    relaying()
}

/// Whether the relay is the default subscriber here (and so the global one).
pub(super) fn relaying() -> bool {
    tracing::dispatcher::get_default(|dispatch| dispatch.is::<Relay>())
}

/// Runs `f` with `recorder` taking this OS thread's events: as its event hook, and
/// through the relay.
pub(super) fn with_recorder<T>(recorder: &Recorder, f: impl FnOnce() -> T) -> T {
    let hook = events::hook(recorder.clone());
    with_subscriber((Dispatch::new(recorder.clone()), hook), f)
}

/// Runs `f` with `subscriber` taking this OS thread's events: the event hook as the
/// thread's, the dispatcher through the relay (the events that come through `tracing`).
pub(super) fn with_subscriber<T>(
    (subscriber, hook): (Dispatch, SharedHook),
    f: impl FnOnce() -> T,
) -> T {
    /// Unregisters the subscriber, also when `f` unwinds.
    struct Unregister;
    impl Drop for Unregister {
        fn drop(&mut self) {
            TARGET.with(|target| target.borrow_mut().take());
        }
    }
    TARGET.with(|target| *target.borrow_mut() = Some(subscriber));
    let _unregister = Unregister;
    events::with_hook(hook, f)
}

/// Whether `metadata` is an event of this crate.
fn ours(metadata: &Metadata<'_>) -> bool {
    metadata.is_event() && metadata.target().starts_with(TARGET_PREFIX)
}

/// The relay (see the module's docs).
struct Relay;

impl Subscriber for Relay {
    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(crate::story::EVENT_LEVEL)
    }

    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        // Whether a recorder is registered changes from thread to thread and run to run.
        if ours(metadata) {
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        ours(metadata)
            && TARGET.with(|target| target.try_borrow().is_ok_and(|target| target.is_some()))
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        // Spans are never enabled; tracing still wants an id.
        Id::from_u64(1)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        TARGET.with(|target| {
            // A sink that emitted an event of its own would find the subscriber borrowed:
            // that event is dropped rather than recorded out of order.
            if let Ok(target) = target.try_borrow()
                && let Some(subscriber) = target.as_ref()
            {
                subscriber.event(event);
            }
        });
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}
