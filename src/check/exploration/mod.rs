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
//! The hook is a `tracing` subscriber of its own ([`Coverage::install`]): it never builds
//! the story's events, so a soak with coverage on keeps its schedules per second (the
//! soak's report gives both figures). It is not the event monitors' coverage
//! (`check::monitor`), which says which events an upstream log can show.

mod tally;
mod window;

pub use tally::MAX_DISTINCT;
pub use window::{Captured, FieldSource, MAX_WINDOWS, RaceWindow, Seen, WindowState};

use crate::story::Recorder;
use crate::unmodelled::Shared;
use tally::{Exploring, Tally};

/// The coverage of one run (over as many explorations as it is installed around): a
/// handle, cloned into the run's body, read at its end.
#[derive(Clone)]
pub struct Coverage {
    tally: Shared<Tally>,
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
            tally: Shared::new(Tally::new(windows)),
        }
    }

    /// Runs `f` with the coverage hook as the calling thread's default subscriber, handing
    /// every event on to `recorder` too when one is given (event logs, monitors, stories).
    pub fn install<T>(&self, recorder: Option<Recorder>, f: impl FnOnce() -> T) -> T {
        let subscriber = Exploring {
            tally: self.tally.clone(),
            inner: recorder,
        };
        tracing::subscriber::with_default(subscriber, f)
    }

    /// Makes this coverage's hook the process's global default subscriber, for a process
    /// that runs one case (the soak's child): shuttle then keeps no scoped dispatcher per
    /// task and pays nothing per context switch, where a scoped hook costs it a
    /// `set_default` at every switch. False when the process already has one. Runs that
    /// also want the story's recorder still install it scoped, counting there too.
    pub fn install_globally(&self) -> bool {
        let subscriber = Exploring {
            tally: self.tally.clone(),
            inner: None,
        };
        let installed = tracing::subscriber::set_global_default(subscriber).is_ok();
        if installed {
            self.tally.with(|tally| tally.global = true);
        }
        installed
    }

    /// Whether this coverage's hook is the process's global default subscriber.
    pub fn is_global(&self) -> bool {
        self.tally.with(|tally| tally.global)
    }

    /// At the start of an execution.
    pub fn start(&self) {
        self.tally.with(Tally::start);
    }

    /// At the end of an execution.
    pub fn end(&self) {
        self.tally.with(Tally::end);
    }

    /// Runs `f` as one execution: [`start`](Self::start), `f`, [`end`](Self::end).
    pub fn execution<T>(&self, f: impl FnOnce() -> T) -> T {
        self.start();
        let value = f();
        self.end();
        value
    }

    /// What was counted so far.
    pub fn summary(&self) -> CoverageSummary {
        self.tally.with(|tally| tally.summary())
    }
}

/// What a run explored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CoverageSummary {
    /// Executions counted.
    pub executions: u64,
    /// Distinct sequences of (node, event kind) the executions took.
    pub sequences: u64,
    /// Distinct ordered pairs of event kinds that followed each other on different threads.
    pub racing_pairs: u64,
    /// Executions whose sequence was new but not kept ([`MAX_DISTINCT`] reached).
    pub overflow: u64,
    /// Each race window of the case and the executions that reached it.
    pub windows: Vec<WindowCount>,
}

impl CoverageSummary {
    /// The windows reached at least once, out of all.
    pub fn windows_reached(&self) -> (usize, usize) {
        let reached = self.windows.iter().filter(|w| w.reached > 0).count();
        (reached, self.windows.len())
    }
}

/// A race window and how many executions reached it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowCount {
    /// The seed's key.
    pub seed: &'static str,
    /// The window's name.
    pub name: &'static str,
    /// Executions that reached it.
    pub reached: u64,
}
