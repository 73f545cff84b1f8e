//! Loom over a whole `MiniOzoneCluster`, in its small configuration: two SCMs, three
//! datanodes, three spawned threads (a datanode ticking, its reconcile handler, the SCMs'
//! driver). A deposed leader's force delete reaches the restarted datanode while it
//! repairs the same replica. The set-up takes thousands of lock operations, so the
//! exploration is bounded (two preemptions per execution), not exhaustive: the
//! exhaustive model of this race is `cross_seed_race`.

use crate::support::{assert_caught, assert_holds, explore_bounded};
use hadoop_ref::datanode::state_context::StateContextBehavior;
use hadoop_ref::scenarios::cluster::deposed_leaders_force_delete_through_the_stepped_cluster;

const PREEMPTIONS: usize = 2;
const MAX_BRANCHES: usize = 100_000;

#[test]
fn cluster_fences_a_deposed_leaders_force_delete() {
    let exploration = explore_bounded(
        "mini-cluster/deposed-leaders-force-delete/SeedPatch",
        PREEMPTIONS,
        MAX_BRANCHES,
        || {
            deposed_leaders_force_delete_through_the_stepped_cluster(
                StateContextBehavior::SeedPatch,
                1,
            )
        },
    );
    assert_holds(&exploration);
}

/// Before the patch the restarted datanode drops the new leader's term it heard before
/// init, takes the old leader's force delete and removes the replica.
#[test]
fn cluster_loses_the_replica_when_the_heard_term_is_discarded() {
    let exploration = explore_bounded(
        "mini-cluster/deposed-leaders-force-delete/LegacyIgnoreHeartbeatTermBeforeInit",
        PREEMPTIONS,
        MAX_BRANCHES,
        || {
            deposed_leaders_force_delete_through_the_stepped_cluster(
                StateContextBehavior::LegacyIgnoreHeartbeatTermBeforeInit,
                1,
            )
        },
    );
    assert_caught(&exploration, "HDDS-17268");
}
