//! Loom, HDDS-16891: the SCM that just became leader runs its rebuild (on
//! leader-ready) while a client's allocation reaches it, on a datanode whose one slot
//! C1 already holds. Two spawned threads. And the report-order race found by shuttle:
//! an allocation against the first write of C1 reporting. Two spawned threads.

use crate::support::{assert_caught, assert_holds, explore};
use hadoop_ref::scenarios::allocation::{
    SEED_KEY, rebuild_gate_race, reelection_during_unconfirmed_allocation, report_order_race,
};
use hadoop_ref::scm::ScmBehavior;

#[test]
fn allocation_waits_for_rebuild_behind_gate() {
    let exploration = explore("gate/Fixed", || rebuild_gate_race(ScmBehavior::Fixed));
    assert_holds(&exploration);
}

#[test]
fn allocation_racing_ungated_rebuild_over_grants() {
    let exploration = explore("gate/LegacyRebuildWithoutGate", || {
        rebuild_gate_race(ScmBehavior::LegacyRebuildWithoutGate)
    });
    assert_caught(&exploration, SEED_KEY);
}

#[test]
fn space_check_sees_created_container_as_committed_or_pending() {
    let exploration = explore("report-order/Fixed", || {
        report_order_race(ScmBehavior::Fixed)
    });
    assert_holds(&exploration);
}

#[test]
fn rebuild_sees_allocation_committed_across_reelection() {
    let exploration = explore("reelection/Fixed", || {
        reelection_during_unconfirmed_allocation(ScmBehavior::Fixed)
    });
    assert_holds(&exploration);
}
