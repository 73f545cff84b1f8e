//! The catalogue of the SCM pending container allocations (HDDS-16891).

use crate::check::catalogue::case::Case;
use crate::scenarios::allocation::{
    AllocationShape, Failover, allocation_cluster, mc8_pending_allocation_failover,
    rebuild_gate_race, reelection_during_unconfirmed_allocation, report_order_race,
};
use crate::scm::ScmBehavior;

/// The SCM pending-allocation scenarios (HDDS-16891).
pub fn allocation() -> Vec<Case> {
    let mut cases = Vec::new();
    cases!(
        cases,
        "mc8_transfer",
        ScmBehavior,
        |behavior, _seed| mc8_pending_allocation_failover(behavior, Failover::Transfer),
        [(Fixed, Holds), (LegacyNoRebuild, Caught)]
    );
    cases!(
        cases,
        "mc8_restart_single_scm",
        ScmBehavior,
        |behavior, _seed| mc8_pending_allocation_failover(behavior, Failover::RestartSingleScm),
        [(Fixed, Holds), (LegacyNoRebuild, Caught)]
    );
    cases!(
        cases,
        "mc8_restart_all_scms",
        ScmBehavior,
        |behavior, _seed| mc8_pending_allocation_failover(behavior, Failover::RestartAllScms),
        [(Fixed, Holds), (LegacyNoRebuild, Caught)]
    );
    cases!(
        cases,
        "rebuild_gate_race",
        ScmBehavior,
        |behavior, _seed| rebuild_gate_race(behavior),
        [
            (Fixed, Holds),
            (LegacyRebuildWithoutGate, Caught),
            (LegacyNoRebuild, Caught)
        ]
    );
    cases!(
        cases,
        "reelection_race",
        ScmBehavior,
        |behavior, _seed| reelection_during_unconfirmed_allocation(behavior),
        [(Fixed, Holds)]
    );
    cases!(
        cases,
        "report_order_race",
        ScmBehavior,
        |behavior, _seed| report_order_race(behavior),
        [(Fixed, Holds)]
    );
    cases!(
        cases,
        "allocation_cluster",
        ScmBehavior,
        |behavior, seed| allocation_cluster(behavior, seed, AllocationShape::default()),
        [
            (Fixed, Holds),
            (LegacyNoRebuild, Caught),
            (LegacyRebuildWithoutGate, Caught)
        ]
    );
    for case in &mut cases {
        case.sequential = case.scenario.starts_with("mc8_");
    }
    cases
}
