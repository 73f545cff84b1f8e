//! Loom, HDDS-16891 beyond the seed: a datanode registers again with a new address while a
//! client's allocation checks its space and the container C1 holding its one slot is
//! written. Ozone's fresh `DatanodeInfo` (kept by `SeedPatch`) forgets C1's reservation
//! before C1 counts as committed; `Hardened` hands the new `DatanodeInfo` the old one's
//! bucket and storage-report slot, so an allocation that resolved the old one still reads
//! and records where the reports and the next check do. Three spawned threads.
//!
//! Bounded at [`PREEMPTION_BOUND`] preemptions: exhaustively the three threads do not fit
//! the budget (bound 3: about 77 000 executions for `Hardened`; bound 4: about 960 000, over
//! a minute and a half).

use crate::support::{assert_caught, assert_holds, explore_bounded};
use hadoop_ref::scenarios::allocation::{self, SEED_KEY};
use hadoop_ref::scm::{ScmBehavior, ScmHardening};

/// Preemptions per execution.
const PREEMPTION_BOUND: usize = 3;

#[test]
fn reregistration_during_allocation_keeps_the_slot() {
    let exploration = explore_bounded(
        "reregistration-during-allocation/Hardened",
        PREEMPTION_BOUND,
        || allocation::reregistration_during_allocation_keeps_the_slot(ScmBehavior::Hardened),
    );
    assert_holds(&exploration);
}

#[test]
fn seed_patch_reregistration_during_allocation_loses_the_slot() {
    let exploration = explore_bounded(
        "reregistration-during-allocation/SeedPatch",
        PREEMPTION_BOUND,
        || allocation::reregistration_during_allocation_keeps_the_slot(ScmBehavior::SeedPatch),
    );
    assert_caught(&exploration, SEED_KEY);
}

/// `ScmHardening::keep_space_on_reregistration` off, the other switches on.
#[test]
fn hardened_without_the_kept_space_record_loses_the_slot() {
    let exploration = explore_bounded(
        "reregistration-during-allocation/Hardened, fresh space record",
        PREEMPTION_BOUND,
        || {
            allocation::reregistration_during_allocation_keeps_the_slot_with(
                ScmBehavior::Hardened,
                ScmHardening {
                    keep_space_on_reregistration: false,
                    ..ScmHardening::ALL
                },
            )
        },
    );
    assert_caught(&exploration, SEED_KEY);
}
