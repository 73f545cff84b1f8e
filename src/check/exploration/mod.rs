//! What a run explored: per case, the distinct protocol-event sequences its executions
//! took, the distinct ordered pairs of racing events, and how often each of the case's
//! named race windows was reached.
//!
//! **The gap.** A soak that passes says nothing of what it tried: a fixed variant that
//! never ran the deletion between a repair's pull and its commit (HDDS-16811), or never
//! let a stale command in after a heartbeat's term (HDDS-17268), "held" for free.
//! **The count.** Each event is abstracted to its kind (component and message) and node;
//! an execution's sequence of them is hashed incrementally, and two consecutive events of
//! different threads make an ordered pair of racing kinds (the Lincheck/P "scenario
//! coverage" idea, at the granularity of the story's events). Every race window declared
//! with the case ([`RaceWindow`], `check::catalogue`) is a predicate over the events, fed
//! as they happen; a run counts the executions that reached it.
//!
//! The hook is an event hook of its own (`crate::events`): it reads each call's values as
//! they are and never builds the story's events (no allocation per event once a run has
//! seen its kinds and nodes). A run installs it scoped ([`Coverage::install`]: the
//! thread's hook, and its scoped `tracing` default for events that come through
//! `tracing`), or, in a process that relays `tracing` events to the subscriber its run
//! registered (the soak tool's, `check::shuttle::relay_events_globally`), registers it
//! there and as the thread's hook ([`Coverage::hook`]): a scoped default costs at every
//! context switch, where shuttle parks and reinstates each task's default. Both count
//! alike (the standby's dry run of a batch silences its events either way,
//! `events::silenced`). It is
//! not the event monitors' coverage (`check::monitor`), which says which events an
//! upstream log can show.

mod hook;
mod running;
mod summary;
mod tally;
mod window;

pub use summary::{CoverageSummary, WindowCount};
pub use tally::MAX_DISTINCT;
pub use window::{Captured, FieldSource, MAX_WINDOWS, RaceWindow, Seen, WindowState};

use crate::events::SharedHook;
use crate::story::Recorder;
use hook::Exploring;
use running::Home;
use tally::Tally;

/// The coverage of one run (over as many explorations as it is installed around): a
/// handle, cloned into the run's body, read at its end.
///
/// An execution is counted on the OS thread that starts it: the hook counts the events of
/// that thread (those a scoped default or the relay hands it) without a lock until the
/// execution ends.
#[derive(Clone)]
pub struct Coverage {
    tally: Home,
}

impl std::fmt::Debug for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coverage")
            .field("summary", &self.summary())
            .finish()
    }
}

impl Coverage {
    /// Coverage of a case whose race windows are `windows` (at most [`MAX_WINDOWS`] are
    /// fed; more are left out).
    pub fn new(windows: &'static [RaceWindow]) -> Self {
        Self {
            tally: Home::new(Tally::new(windows)),
        }
    }

    /// Runs `f` with the coverage hook as the calling thread's default subscriber, handing
    /// every event on to `recorder` too when one is given (event logs, monitors, stories).
    pub fn install<T>(&self, recorder: Option<Recorder>, f: impl FnOnce() -> T) -> T {
        let subscriber = Exploring {
            tally: self.tally.clone(),
            inner: recorder,
        };
        crate::events::with_hook(crate::events::hook(subscriber.clone()), || {
            crate::story::with_scoped_default(subscriber, f)
        })
    }

    /// The coverage hook as a dispatcher and as an event hook, handing every event on to
    /// `recorder` too when one is given: for a harness that routes events to it without a
    /// scoped default (the shuttle runner's relay).
    pub fn hook(&self, recorder: Option<Recorder>) -> (tracing::Dispatch, SharedHook) {
        let hook = Exploring {
            tally: self.tally.clone(),
            inner: recorder,
        };
        (
            tracing::Dispatch::new(hook.clone()),
            crate::events::hook(hook),
        )
    }

    /// At the start of an execution.
    pub fn start(&self) {
        self.tally.start();
    }

    /// At the end of an execution.
    pub fn end(&self) {
        self.tally.end();
    }

    /// Runs `f` as one execution: [`start`](Self::start), `f`, [`end`](Self::end).
    pub fn execution<T>(&self, f: impl FnOnce() -> T) -> T {
        self.start();
        let value = f();
        self.end();
        value
    }

    /// What was counted so far (read between executions: while one runs on another
    /// thread, nothing is read).
    pub fn summary(&self) -> CoverageSummary {
        self.tally.with(|tally| tally.summary()).unwrap_or_default()
    }
}
