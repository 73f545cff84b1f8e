//! Every scenario with the variants it runs and what each must do: fixed variants must
//! hold, legacy variants must be caught. The shuttle tests and the soak tool iterate it.

use super::Violation;
use super::term_fencing::{
    ClusterShape, OldLeader, cluster_with_leader_transfers, mc4_heartbeat_fence,
    mc4_residual_window, mc5_concurrent_leader_heartbeats,
};
use crate::datanode::state_context::Behavior;

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
    /// Variant name (a `Behavior` name).
    pub variant: &'static str,
    /// What it must do.
    pub expectation: Expectation,
    /// Whether PCT at depth 3 is expected to reach a [`Expectation::Caught`] defect within
    /// the bounds used here. False where the defect lies deeper than that (measured, and
    /// said in the case's comment); the random scheduler must still catch it.
    pub pct_reaches: bool,
    run: fn(u64) -> Result<(), Violation>,
}

impl Case {
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

/// Heartbeat rounds per thread in the MC4 scenarios under shuttle.
pub const MC4_ROUNDS: usize = 3;

macro_rules! cases {
    ($into:ident, $scenario:literal, |$behavior:ident, $seed:ident| $body:expr,
     [$(($variant:ident, $expect:ident)),+ $(,)?]) => {
        $(
            $into.push(Case {
                scenario: $scenario,
                variant: Behavior::$variant.name(),
                expectation: Expectation::$expect,
                pct_reaches: true,
                run: |$seed| {
                    let $behavior = Behavior::$variant;
                    $body
                },
            });
        )+
    };
}

/// The term-fencing scenarios (HDDS-17268).
pub fn term_fencing() -> Vec<Case> {
    let mut cases = Vec::new();
    cases!(
        cases,
        "mc4_old_leader_believes",
        |behavior, _seed| mc4_heartbeat_fence(
            behavior,
            OldLeader::StillBelievesItLeads,
            MC4_ROUNDS
        ),
        [
            (Fixed, Holds),
            (AwaitLeaderTerm, Holds),
            (LegacyIgnoreHeartbeatTermBeforeInit, Caught),
        ]
    );
    cases!(
        cases,
        "mc4_old_leader_follower",
        |behavior, _seed| mc4_heartbeat_fence(
            behavior,
            OldLeader::SteppedDownHoldingCommand,
            MC4_ROUNDS
        ),
        [
            (Fixed, Holds),
            (AwaitLeaderTerm, Holds),
            (LegacyIgnoreHeartbeatTermBeforeInit, Caught),
        ]
    );
    cases!(
        cases,
        "mc4_residual_window",
        |behavior, _seed| mc4_residual_window(behavior, MC4_ROUNDS),
        [
            (AwaitLeaderTerm, Holds),
            (Fixed, Caught),
            (LegacyIgnoreHeartbeatTermBeforeInit, Caught),
        ]
    );
    cases!(
        cases,
        "mc5_concurrent_leader_heartbeats",
        |behavior, _seed| mc5_concurrent_leader_heartbeats(behavior),
        [
            (Fixed, Holds),
            (AwaitLeaderTerm, Holds),
            (LegacyUnlockedTermUpdate, Caught),
        ]
    );
    cases!(
        cases,
        "cluster_leader_transfers",
        |behavior, seed| cluster_with_leader_transfers(behavior, seed, ClusterShape::default()),
        [
            (Fixed, Holds),
            (AwaitLeaderTerm, Holds),
            (LegacyIgnoreHeartbeatTermBeforeInit, Caught),
            (LegacyUnlockedTermUpdate, Caught),
        ]
    );
    // The lost update must land between a heartbeat thread's read and write, and a
    // lower-term command must then be taken before the next heartbeat repairs the term:
    // PCT depth 3 did not reach that in 20 000 schedules for three seeds (depth 8 did for
    // two of three); random finds it within a few thousand. MC5 checks this race under PCT.
    for case in &mut cases {
        if case.scenario == "cluster_leader_transfers"
            && case.variant == Behavior::LegacyUnlockedTermUpdate.name()
        {
            case.pct_reaches = false;
        }
    }
    cases
}

/// Every scenario of the crate.
pub fn all() -> Vec<Case> {
    term_fencing()
}
