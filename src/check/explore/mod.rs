//! An exhaustive explorer of a cluster case's protocol steps: every sequence of enabled
//! actions up to a depth, breadth first, over the real components.
//!
//! **Why.** Shuttle samples a whole cluster's interleavings; a sampled run that holds
//! proves nothing about the orders it did not draw, and a sampler may never reach a race
//! window. TLC, stateright and P's systematic tester check every interleaving of a
//! model's actions up to a depth, with each distinct state expanded once; none runs
//! production code. Here the actions are calls on the real `MiniOzoneCluster`
//! ([`Action`]: a datanode's heartbeat to one SCM, its command processor taking one
//! command, one step of its replication supervisor or delete-container executor, one scan,
//! one block deleting pass, an SCM's replication manager pass, its processors, its block
//! deleting round, and the next step of a driver's script: a leader transfer, a restart,
//! a link healed, an operator's reconcile, a client's request).
//!
//! **How.** Stateless, as loom is: each state is re-executed from the case's set-up along
//! its path. The components hold locks, trait objects behind `Arc`s and the cluster's own
//! bookkeeping, so a deep copy of a state would be a second implementation of every
//! component's state, which is what this crate refuses to have; a re-execution costs the
//! set-up and the path, a few hundred microseconds. Each state is keyed by a canonical
//! fingerprint of everything that decides what the cluster does next
//! ([`MiniOzoneCluster::digest`](crate::sim::mini_cluster::MiniOzoneCluster::digest) and
//! the scripts' positions; counters, command ids and timestamps left out), so a state
//! reached by two orders is expanded once. Partial-order reduction by sleep sets: two
//! actions that touch nothing in common ([`Action::independent`]) commute, and only one
//! of their orders is tried; a state reached again with fewer actions asleep is expanded
//! again for those. Breadth first, so the first violation found is the shortest.
//!
//! **What it judges.** A state where every driver script has run all its steps is a state
//! the case's run may end in: it is judged as the case judges (the cluster healed and
//! settled, then the invariants) on a re-execution of its own. "Held to depth N" means:
//! no such state within N actions of the set-up breaks the invariants, for the steps
//! modelled here (see [`Action`]; time does not move, a reconciliation's block is pulled
//! and committed in one step, a whole heartbeat is one step). It says nothing of longer
//! runs, of interleavings inside a step (shuttle and loom explore those), or of the
//! settling phase's own orders.

mod action;
mod file;
mod search;

pub use action::{Action, BadAction};
pub use file::{CounterexampleFile, CounterexampleFileError};

use std::fmt;
use std::time::Duration;

use crate::check::catalogue::Expectation;
use crate::check::exploration::RaceWindow;
use crate::scenarios::Violation;
use crate::scenarios::cluster::explorable::Explorable;

/// A cluster case the explorer can run: a scenario's variant, what it must do, and how it
/// is built.
#[derive(Clone, Copy)]
pub struct ExploreCase {
    /// Scenario name, as in the catalogue.
    pub scenario: &'static str,
    /// Variant name, as in the catalogue.
    pub variant: &'static str,
    /// What it must do.
    pub expectation: Expectation,
    build: fn() -> Result<Explorable, Violation>,
}

impl fmt::Debug for ExploreCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{} ({:?})",
            self.scenario, self.variant, self.expectation
        )
    }
}

impl ExploreCase {
    /// The case `scenario/variant` built by `build`.
    pub fn new(
        scenario: &'static str,
        variant: &'static str,
        expectation: Expectation,
        build: fn() -> Result<Explorable, Violation>,
    ) -> Self {
        Self {
            scenario,
            variant,
            expectation,
            build,
        }
    }

    /// The case set up, ready to explore.
    pub fn build(&self) -> Result<Explorable, Violation> {
        (self.build)()
    }

    /// `scenario/variant`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.scenario, self.variant)
    }
}

/// How far and how to search.
#[derive(Debug, Clone)]
pub struct Options {
    /// The most actions from the set-up.
    pub depth: usize,
    /// Stop once this much wall time went (the depth completed is reported).
    pub time_limit: Option<Duration>,
    /// Stop after this many re-executions.
    pub max_executions: u64,
    /// Key states by fingerprint, each expanded once (off: every path is expanded).
    pub hashing: bool,
    /// Sleep-set partial-order reduction.
    pub partial_order: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            depth: 12,
            time_limit: Some(Duration::from_secs(60)),
            max_executions: u64::MAX,
            hashing: true,
            partial_order: true,
        }
    }
}

/// How a search ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No judged state broke the invariants.
    Held,
    /// The shortest path found to a violation.
    Caught {
        /// The actions from the set-up.
        path: Vec<Action>,
        /// What the judgment found.
        violation: Violation,
    },
    /// The case could not be run (its set-up failed).
    Error(String),
}

/// What a search did.
#[derive(Debug, Clone)]
pub struct Report {
    /// How it ended.
    pub verdict: Verdict,
    /// Depth whose every state was expanded.
    pub depth: usize,
    /// Whether no new state was left to expand (every reachable state seen).
    pub exhausted: bool,
    /// Distinct states (paths, without hashing).
    pub states: usize,
    /// Actions run from an expanded state.
    pub transitions: u64,
    /// Re-executions from the set-up.
    pub executions: u64,
    /// States judged.
    pub judged: u64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Each of the case's race windows, with the fewest actions of a judged path that
    /// reached it (none: not reached).
    pub windows: Vec<(String, Option<usize>)>,
}

impl Report {
    fn new(windows: &[RaceWindow]) -> Self {
        Self {
            verdict: Verdict::Held,
            depth: 0,
            exhausted: false,
            states: 0,
            transitions: 0,
            executions: 0,
            judged: 0,
            seconds: 0.0,
            windows: windows.iter().map(|w| (w.label(), None)).collect(),
        }
    }

    /// Whether the verdict is what `expectation` asks for.
    pub fn as_expected(&self, expectation: Expectation) -> bool {
        matches!(
            (&self.verdict, expectation),
            (Verdict::Held, Expectation::Holds) | (Verdict::Caught { .. }, Expectation::Caught)
        )
    }
}

/// Explores `case` as `options` say, judging the race `windows` of its scenario. Runs
/// the components as they are built: call it in the production build, or inside one
/// shuttle execution in the shuttle build (its one task runs alone).
pub fn explore(case: &ExploreCase, options: &Options, windows: &[RaceWindow]) -> Report {
    search::run(case, options, windows)
}

/// Runs `case` along `path` and judges it, as a counterexample replays: the first
/// violation, of an action or of the judgment.
pub fn replay_path(case: &ExploreCase, path: &[Action]) -> Result<(), Violation> {
    let replayed = search::Replayed::along(case, path)?;
    replayed.case.judge()
}
