//! Loom, HDDS-16891: the SCM that just became leader runs its rebuild (on
//! leader-ready) while a client's allocation reaches it, on a datanode whose one slot
//! C1 already holds. Two spawned threads. The report-order race found by shuttle: an
//! allocation against the first write of C1 reporting. And the re-election race found by
//! a review: an old-term allocation that commits with a timeout answer while its SCM is
//! re-elected. Two spawned threads each.

use crate::support::{assert_caught, assert_holds, explore};
use hadoop_ref::scenarios::allocation::{self, SEED_KEY};
use hadoop_ref::scm::ScmBehavior;

#[test]
fn allocation_waits_for_rebuild_behind_gate() {
    let exploration = explore("allocation-waits-for-rebuild/Fixed", || {
        allocation::allocation_waits_for_the_rebuild(ScmBehavior::Fixed)
    });
    assert_holds(&exploration);
}

#[test]
fn allocation_racing_ungated_rebuild_over_grants() {
    let exploration = explore(
        "allocation-waits-for-rebuild/LegacyRebuildWithoutGate",
        || allocation::allocation_waits_for_the_rebuild(ScmBehavior::LegacyRebuildWithoutGate),
    );
    assert_caught(&exploration, SEED_KEY);
}

#[test]
fn space_check_sees_created_container_as_committed_or_pending() {
    let exploration = explore("space-check-sees-created-container/Fixed", || {
        allocation::space_check_sees_created_container(ScmBehavior::Fixed)
    });
    assert_holds(&exploration);
}

#[test]
fn rebuild_sees_allocation_committed_across_reelection() {
    let exploration = explore("rebuild-across-reelection/Fixed", || {
        allocation::rebuild_sees_allocation_committed_across_reelection(ScmBehavior::Fixed)
    });
    assert_holds(&exploration);
}
