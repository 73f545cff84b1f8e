//! Loom, HDDS-16891: the SCM that just became leader runs its rebuild (on leader-ready)
//! while a client's allocation reaches it, on a datanode whose one slot C1 already holds.
//! Beyond the seed, two races `SeedPatch` loses and `Hardened` holds: the report-order race
//! found by shuttle (an allocation against the first write of C1 reporting), and the
//! re-election race found by a review (an old-term allocation that commits with a timeout
//! answer while its SCM is re-elected). Two spawned threads each.

use crate::support::{assert_caught, assert_holds, explore};
use hadoop_ref::scenarios::allocation::{self, SEED_KEY};
use hadoop_ref::scm::{ScmBehavior, ScmHardening};

#[test]
fn allocation_waits_for_rebuild_behind_gate() {
    let exploration = explore("allocation-waits-for-rebuild/Hardened", || {
        allocation::allocation_waits_for_the_rebuild(ScmBehavior::Hardened)
    });
    assert_holds(&exploration);
}

#[test]
fn seed_patch_allocation_waits_for_rebuild_behind_gate() {
    let exploration = explore("allocation-waits-for-rebuild/SeedPatch", || {
        allocation::allocation_waits_for_the_rebuild(ScmBehavior::SeedPatch)
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
    let exploration = explore("space-check-sees-created-container/Hardened", || {
        allocation::space_check_sees_created_container(ScmBehavior::Hardened)
    });
    assert_holds(&exploration);
}

/// Ozone's order: the storage reports read before the bucket's monitor.
#[test]
fn space_check_reading_reports_before_the_bucket_over_grants() {
    let exploration = explore("space-check-sees-created-container/SeedPatch", || {
        allocation::space_check_sees_created_container(ScmBehavior::SeedPatch)
    });
    assert_caught(&exploration, SEED_KEY);
}

/// `ScmHardening::read_reports_under_bucket_lock` off, the other switches on.
#[test]
fn hardened_space_check_without_the_under_lock_read_over_grants() {
    let exploration = explore(
        "space-check-sees-created-container/Hardened, reports read before the bucket",
        || {
            allocation::space_check_sees_created_container_with(
                ScmBehavior::Hardened,
                ScmHardening {
                    read_reports_under_bucket_lock: false,
                    ..ScmHardening::ALL
                },
            )
        },
    );
    assert_caught(&exploration, SEED_KEY);
}

#[test]
fn rebuild_sees_allocation_committed_across_reelection() {
    let exploration = explore("rebuild-across-reelection/Hardened", || {
        allocation::rebuild_sees_allocation_committed_across_reelection(ScmBehavior::Hardened)
    });
    assert_holds(&exploration);
}

/// The seed's rebuild reads the table as applied at leader-ready.
#[test]
fn seed_patch_rebuild_misses_allocation_committed_across_reelection() {
    let exploration = explore("rebuild-across-reelection/SeedPatch", || {
        allocation::rebuild_sees_allocation_committed_across_reelection(ScmBehavior::SeedPatch)
    });
    assert_caught(&exploration, SEED_KEY);
}

/// `ScmHardening::apply_log_before_rebuild` off, the other switches on.
#[test]
fn hardened_rebuild_without_applying_the_log_misses_allocation_across_reelection() {
    let exploration = explore(
        "rebuild-across-reelection/Hardened, no log applied under the gate",
        || {
            allocation::rebuild_sees_allocation_committed_across_reelection_with(
                ScmBehavior::Hardened,
                ScmHardening {
                    apply_log_before_rebuild: false,
                    ..ScmHardening::ALL
                },
            )
        },
    );
    assert_caught(&exploration, SEED_KEY);
}
