//! The coverage hook: it counts each event of the crate into its coverage's tally, then
//! hands the event to the story's recorder when the run also wants one (event logs,
//! monitors). It is the run's event hook ([`crate::events`]), and a `tracing` subscriber
//! for the events that come through `tracing`.

use tracing::span::{Attributes, Id, Record};
use tracing::{Event as TracingEvent, Metadata, Subscriber};

use super::running::Home;
use crate::events::{self, Arg, EventHook, Site, TARGET_PREFIX};
use crate::story::Recorder;
use crate::sync::thread;

/// The subscriber a coverage run installs: counts into its tally, then hands the event to
/// the story's recorder when the run also wants one (event logs, monitors).
#[derive(Clone)]
pub(super) struct Exploring {
    pub(super) tally: Home,
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
        if event.metadata().target().starts_with(TARGET_PREFIX) {
            events::with_tracing_event(event, |site, args| self.count(site, args));
        }
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

impl EventHook for Exploring {
    fn event(&self, site: &Site<'_>, args: &[Arg<'_>]) {
        if site.target.starts_with(TARGET_PREFIX) {
            self.count(site, args);
        }
    }
}

impl Exploring {
    /// Counts one event of the crate, and hands it to the recorder if there is one.
    fn count(&self, site: &Site<'_>, args: &[Arg<'_>]) {
        let thread = thread::current_key();
        // An event of another thread while an execution holds the tally is not counted.
        let _counted = self.tally.with(|tally| tally.observe(site, args, thread));
        if let Some(recorder) = &self.inner {
            EventHook::event(recorder, site, args);
        }
    }
}
