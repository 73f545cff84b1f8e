//! The catalogue of the datanode SCM-term fencing (HDDS-17268).

use crate::check::catalogue::case::Case;
use crate::datanode::state_context::StateContextBehavior;
use crate::scenarios::term_fencing::{
    ClusterShape, OldLeader, cluster_with_leader_transfers, mc4_heartbeat_fence,
    mc4_residual_window, mc5_concurrent_leader_heartbeats,
};

/// Heartbeat rounds per thread in the MC4 scenarios under shuttle.
pub const MC4_ROUNDS: usize = 3;

/// The term-fencing scenarios (HDDS-17268).
pub fn term_fencing() -> Vec<Case> {
    let mut cases = Vec::new();
    cases!(
        cases,
        "mc4_old_leader_believes",
        StateContextBehavior,
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
        StateContextBehavior,
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
        StateContextBehavior,
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
        StateContextBehavior,
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
        StateContextBehavior,
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
            && case.variant == StateContextBehavior::LegacyUnlockedTermUpdate.name()
        {
            case.pct_reaches = false;
        }
    }
    cases
}
