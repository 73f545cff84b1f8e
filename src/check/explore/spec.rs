//! What the explorer takes and gives: a case to explore, how far to search, and what the
//! search did.

use std::fmt;
use std::time::Duration;

use super::action::Action;
use crate::check::catalogue::case::Expectation;
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
    /// For a caught case: whether a short exploration (`ci/check-explore`'s bounds) is
    /// expected to find its counterexample. False where it lies deeper than that
    /// (measured, and said where the case is listed); a held case must hold whatever.
    pub reaches: bool,
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
            reaches: true,
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
    /// Workers expanding a depth's states side by side (at least one). With more than
    /// one, the verdict and the depth are as with one, but which of two equally short
    /// counterexamples is found, and the executions counted, depend on their timing.
    pub workers: usize,
    /// Audit the fingerprints: each time a state's fingerprint was seen before by another
    /// path, check that both states have one future (the same actions enabled, each
    /// leading to one fingerprint); a difference ends the search with an error naming both
    /// paths. Costs two re-executions per enabled action at each such arrival.
    pub audit_fingerprints: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            depth: 12,
            time_limit: Some(Duration::from_secs(60)),
            max_executions: u64::MAX,
            hashing: true,
            partial_order: true,
            workers: 1,
            audit_fingerprints: false,
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
    /// Each completed depth's distinct states so far (from depth 0, the set-up's one) and
    /// the seconds the search had taken: how the state space grows with the depth.
    pub levels: Vec<(usize, f64)>,
    /// Actions run from an expanded state.
    pub transitions: u64,
    /// Re-executions from the set-up.
    pub executions: u64,
    /// States judged.
    pub judged: u64,
    /// Actions not run because they lead to a state with more script steps left than
    /// actions left to the depth: no state the case's run may end in lies within the
    /// depth from there, so nothing there is judged, and it is neither run nor counted
    /// in [`states`](Self::states).
    pub beyond_reach: u64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Each of the case's race windows, with the fewest actions of a judged path that
    /// reached it (none: not reached).
    pub windows: Vec<(String, Option<usize>)>,
}

impl Report {
    pub(super) fn new(windows: &[RaceWindow]) -> Self {
        Self {
            verdict: Verdict::Held,
            depth: 0,
            exhausted: false,
            states: 0,
            levels: Vec::new(),
            transitions: 0,
            executions: 0,
            judged: 0,
            beyond_reach: 0,
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

    /// Whether the search did what `case` asks of it: as expected, or a caught case held
    /// where the case says a short search does not reach its defect.
    pub fn acceptable_for(&self, case: &ExploreCase) -> bool {
        self.as_expected(case.expectation)
            || (!case.reaches
                && case.expectation == Expectation::Caught
                && self.verdict == Verdict::Held)
    }
}
