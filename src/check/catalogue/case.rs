//! A scenario's variant with what it must do under a checker ([`Case`], [`Expectation`]),
//! and the macro each seed's list builds its cases with.

use crate::check::exploration::RaceWindow;
use crate::scenarios::Violation;

/// What a variant of a scenario must do under a checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Expectation {
    /// No schedule may violate the scenario's invariants.
    Holds,
    /// Some schedule must violate them: the checker catches the defect.
    Caught,
}

/// One variant of one scenario.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// Scenario name (stable; used in reports and schedule files).
    pub scenario: &'static str,
    /// Variant name (the name of the component's behavior).
    pub variant: &'static str,
    /// What it must do.
    pub expectation: Expectation,
    /// Whether PCT at depth 3 is expected to reach a [`Expectation::Caught`] defect within
    /// the bounds used here. False where the defect lies deeper than that (measured, and
    /// said in the case's comment); the random scheduler must still catch it.
    pub pct_reaches: bool,
    /// The same for the random scheduler: false where the defect needs one thread to run
    /// many steps alone (PCT's strength, a long shot for uniform choices; measured, and
    /// said in the case's comment).
    pub random_reaches: bool,
    /// The scenario spawns no thread (a fixed sequence of steps, like the seed's own
    /// reproduction): one execution says all, and PCT does not apply.
    pub sequential: bool,
    /// The named race windows its executions must reach (`catalogue::windows`): the
    /// soak's coverage says how often each was.
    pub windows: &'static [RaceWindow],
    run: fn(u64) -> Result<(), Violation>,
}

impl Case {
    /// A case that the random and PCT schedulers must both reach, run on threads.
    pub(in crate::check) fn new(
        scenario: &'static str,
        variant: &'static str,
        expectation: Expectation,
        run: fn(u64) -> Result<(), Violation>,
    ) -> Self {
        Self {
            scenario,
            variant,
            expectation,
            pct_reaches: true,
            random_reaches: true,
            sequential: false,
            windows: &[],
            run,
        }
    }

    /// Runs one execution with the scenario seed `seed` (scenarios without random steps
    /// ignore it).
    pub fn run(&self, seed: u64) -> Result<(), Violation> {
        (self.run)(seed)
    }

    /// `scenario/variant`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.scenario, self.variant)
    }
}

/// Pushes onto `$into` one [`Case`] per variant of `$kind` listed, each running `$body`
/// with `$behavior` bound to the variant and `$seed` to the scenario seed.
macro_rules! cases {
    ($into:ident, $scenario:literal, $kind:ident, |$behavior:ident, $seed:ident| $body:expr,
     [$(($variant:ident, $expect:ident)),+ $(,)?]) => {
        $(
            $into.push($crate::check::catalogue::case::Case::new(
                $scenario,
                $kind::$variant.name(),
                $crate::check::catalogue::case::Expectation::$expect,
                |$seed| {
                    let $behavior = $kind::$variant;
                    $body
                },
            ));
        )+
    };
}
