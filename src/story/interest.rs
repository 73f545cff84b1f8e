//! Scoped subscribers that see every event whatever thread first reached its callsite.
//!
//! `tracing` caches one interest per callsite for the whole process, computed when some
//! thread first reaches it. While at most one dispatcher is registered, tracing-core asks
//! only the *registering* thread's default: a thread with no subscriber (another test of
//! the same binary, a tool's worker) caches `never`, and a recorder installed on another
//! thread then misses that callsite's events for good, in no order a test can control.
//!
//! [`with_scoped_default`] keeps a second dispatcher registered for the life of the
//! process (one that wants nothing), so tracing-core asks every registered dispatcher
//! instead, and a live recorder's interest always counts.

use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Dispatch, Event, Metadata, Subscriber};

use crate::unmodelled::Once;

/// The most verbose level this crate's components emit their events at (`debug!`, more
/// severe for a few): its subscribers say so to `tracing` (`max_level_hint`), so the
/// `trace!` calls of the checkers' own code (shuttle's, at each scheduling point) are
/// turned down by the level check alone while they record.
pub const EVENT_LEVEL: tracing::level_filters::LevelFilter =
    tracing::level_filters::LevelFilter::DEBUG;

/// Runs `f` with `subscriber` as the calling thread's default, with the process's second
/// dispatcher registered first.
pub(crate) fn with_scoped_default<T>(
    subscriber: impl Subscriber + Send + Sync + 'static,
    f: impl FnOnce() -> T,
) -> T {
    static PIN: Once<Dispatch> = Once::new();
    PIN.get_or_init(|| Dispatch::new(WantsNothing));
    tracing::subscriber::with_default(subscriber, f)
}

/// A subscriber interested in no callsite: registered only so that more than one
/// dispatcher is.
struct WantsNothing;

impl Subscriber for WantsNothing {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        Interest::never()
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::OFF)
    }

    fn enabled(&self, _: &Metadata<'_>) -> bool {
        false
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &Event<'_>) {}

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
