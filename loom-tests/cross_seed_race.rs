//! Loom, where HDDS-17268 meets HDDS-16811: a deposed SCM leader's force delete reaches a
//! restarted datanode that has heard the new leader, while a reconciliation pulls a block
//! into the same replica and the new leader's heartbeat goes on. Three spawned threads.

use crate::support::{assert_caught, assert_holds, explore};
use hadoop_ref::datanode::state_context::StateContextBehavior;
use hadoop_ref::scenarios::cluster::stale_force_delete_during_repair;

#[test]
fn stale_force_delete_never_touches_a_repaired_replica() {
    let exploration = explore("stale-force-delete-during-repair/SeedPatch", || {
        stale_force_delete_during_repair(StateContextBehavior::SeedPatch)
    });
    assert_holds(&exploration);
}

#[test]
fn stale_force_delete_fenced_when_hardened() {
    let exploration = explore("stale-force-delete-during-repair/Hardened", || {
        stale_force_delete_during_repair(StateContextBehavior::Hardened)
    });
    assert_holds(&exploration);
}

/// Before the patch the heard term is dropped before init: the stale delete runs.
#[test]
fn discarded_heartbeat_term_lets_the_stale_delete_remove_the_replica() {
    let exploration = explore(
        "stale-force-delete-during-repair/LegacyIgnoreHeartbeatTermBeforeInit",
        || {
            stale_force_delete_during_repair(
                StateContextBehavior::LegacyIgnoreHeartbeatTermBeforeInit,
            )
        },
    );
    assert_caught(&exploration, "HDDS-17268");
}
