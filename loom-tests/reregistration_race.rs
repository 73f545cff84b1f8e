//! Loom, HDDS-16891 beyond the seed: a datanode registers again with a new address while a
//! client's allocation checks its space and the container C1 holding its one slot is
//! written. Ozone's fresh `DatanodeInfo` (kept by `SeedPatch`) forgets C1's reservation
//! before C1 counts as committed; `Hardened` hands the new `DatanodeInfo` the old one's
//! bucket and storage-report slot, so an allocation that resolved the old one still reads
//! and records where the reports and the next check do. Three spawned threads.
//!
//! **Exhaustive**, with no preemption bound: the node map, each node's storage reports
//! and the cluster's SCM handles tell loom that reads commute (`sync::RwCell`), and the
//! map's update in `NodeManager::register` is one access with no scheduling point inside.
//! The largest model of the suite (the hardened one, hundreds of thousands of
//! executions).
//!
//! **Not covered.** One datanode with one slot, one client allocation and one
//! re-registration: several clients or datanodes are the shuttle scenarios' job.

use crate::support::{assert_caught, assert_holds, explore};
use hadoop_ref::scenarios::allocation::{self, SEED_KEY};
use hadoop_ref::scm::{ScmBehavior, ScmHardening};

#[test]
fn reregistration_during_allocation_keeps_the_slot() {
    let exploration = explore("reregistration-during-allocation/Hardened", || {
        allocation::reregistration_during_allocation_keeps_the_slot(ScmBehavior::Hardened)
    });
    assert_holds(&exploration);
}

#[test]
fn seed_patch_reregistration_during_allocation_loses_the_slot() {
    let exploration = explore("reregistration-during-allocation/SeedPatch", || {
        allocation::reregistration_during_allocation_keeps_the_slot(ScmBehavior::SeedPatch)
    });
    assert_caught(&exploration, SEED_KEY);
}

/// `ScmHardening::keep_space_on_reregistration` off, the other switches on.
#[test]
fn hardened_without_the_kept_space_record_loses_the_slot() {
    let exploration = explore(
        "reregistration-during-allocation/Hardened, fresh space record",
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
