//! Runs a scenario under loom, counts the executions and keeps the violation, if any, with
//! the story of the execution that broke it: what the crate's loom models and the
//! conformance suites ([`super::conformance`]) run, in the loom build only.
//!
//! **The race it looks for** is the scenario's: two heartbeat threads losing a term update
//! (HDDS-17268), a report judged against the completed block (HDFS-2742). Loom explores
//! every interleaving of the sync facade's operations, so the races are found exhaustively.
//!
//! **What it keeps** of a failing exploration is the first violation and the protocol
//! events of that execution alone, so a catch prints the step table that led to it; a
//! passing one reports how many executions it took.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::scenarios::Violation;
use crate::story::{Recorder, Story};
use crate::unmodelled::{Counter, ExpectedPanic, Shared, Stopwatch, quiet_expected_panics};

/// What one exploration found.
#[derive(Debug, Clone)]
pub struct Exploration {
    /// Executions loom ran (up to and including the failing one).
    pub iterations: u64,
    /// Whether loom explored every interleaving or only those within a preemption bound.
    pub mode: ExplorationMode,
    /// The violation's message, if an execution broke an invariant (or another panic's).
    pub violation: Option<String>,
    /// The protocol events of the violating execution, and only of it.
    pub story: Option<Story>,
}

impl Exploration {
    /// The failing execution's story ending at the violation, or the violation alone.
    pub fn told(&self) -> String {
        let violation = self.violation.as_deref().unwrap_or("no violation");
        match &self.story {
            Some(story) => story.ending_at(violation).to_string(),
            None => violation.to_owned(),
        }
    }
}

/// Explores `scenario` exhaustively (loom's defaults; `LOOM_MAX_PREEMPTIONS` and
/// `LOOM_CHECKPOINT_FILE` apply) and prints the iteration count, wall time and mode
/// (`exhaustive`, or `bounded(k)` when `LOOM_MAX_PREEMPTIONS` set a bound).
pub fn explore(
    name: &str,
    scenario: impl Fn() -> Result<(), Violation> + Send + Sync + 'static,
) -> Exploration {
    explore_with(name, loom::model::Builder::new(), scenario)
}

/// Explores `scenario` with at most `preemptions` preemptions per execution and room for
/// `max_branches` scheduling points: for a model too large to explore exhaustively, such
/// as a whole `MiniOzoneCluster`. Not exhaustive: say so where it is used.
pub fn explore_bounded(
    name: &str,
    preemptions: usize,
    max_branches: usize,
    scenario: impl Fn() -> Result<(), Violation> + Send + Sync + 'static,
) -> Exploration {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemptions);
    builder.max_branches = max_branches;
    explore_with(name, builder, scenario)
}

fn explore_with(
    name: &str,
    builder: loom::model::Builder,
    scenario: impl Fn() -> Result<(), Violation> + Send + Sync + 'static,
) -> Exploration {
    // Leaked so the 'static model closure can count across executions; outside the model.
    let iterations: &'static Counter = Box::leak(Box::new(Counter::new()));
    let found: Shared<Option<(String, Story)>> = Shared::new(None);
    let inbox = found.clone();
    // Installed around the whole exploration (every loom thread of every execution sees
    // it) and emptied at the start of each execution: the story is the failing one's.
    let recorder = Recorder::default();
    let in_model = recorder.clone();
    quiet_expected_panics();
    let builder_bound = builder.preemption_bound;
    let stopwatch = Stopwatch::start();
    let result = recorder.install(|| {
        catch_unwind(AssertUnwindSafe(|| {
            builder.check(move || {
                iterations.increment();
                in_model.take();
                if let Err(violation) = scenario() {
                    inbox.put((violation.to_string(), in_model.take()));
                    std::panic::panic_any(ExpectedPanic);
                }
            })
        }))
    });
    let mode = ExplorationMode::of(builder_bound);
    let (violation, story) = match (result, found.take()) {
        (Ok(()), _) => (None, None),
        (Err(_), Some((violation, story))) => (Some(violation), Some(story)),
        (Err(payload), None) => (Some(panic_message(payload.as_ref())), None),
    };
    println!(
        "loom {name}: {} iteration(s) in {:.2?}, {mode}, {}",
        iterations.get(),
        stopwatch.elapsed(),
        match &violation {
            Some(v) => format!("caught: {v}"),
            None => "no violation".to_owned(),
        }
    );
    Exploration {
        iterations: iterations.get(),
        mode,
        violation,
        story,
    }
}

/// How far an exploration went: every interleaving, or those within a preemption bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExplorationMode {
    /// Every interleaving of the model (no preemption bound).
    Exhaustive,
    /// Only the interleavings with at most this many preemptions per execution (set by
    /// the model, or by `LOOM_MAX_PREEMPTIONS`): a pass proves nothing beyond it.
    Bounded(usize),
}

impl ExplorationMode {
    /// The mode of a builder whose preemption bound is `bound`.
    pub fn of(bound: Option<usize>) -> Self {
        match bound {
            None => Self::Exhaustive,
            Some(k) => Self::Bounded(k),
        }
    }
}

impl std::fmt::Display for ExplorationMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Exhaustive => f.write_str("exhaustive"),
            Self::Bounded(k) => write!(f, "bounded({k})"),
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "non-string panic".to_owned())
}
