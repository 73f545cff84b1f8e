//! Loom, HDDS-16811: one datanode reconciles a block with two chunks from a peer while its
//! block deleting service runs a pass for the block's pending delete transaction; the
//! datanode lacks the block, or (partial) has its first chunk. Two spawned threads. Once the transaction has been applied the block must not be live
//! (no metadata, no file, a deleted tree entry), and no metadata may exist without its
//! file.
//!
//! Exhaustive exploration does not fit the budget (each extra preemption multiplies the
//! executions by six to eight: 604 at bound 2, 5 088 at 3, 32 567 at 4, 166 541 at 5 in
//! 8.5 s release), so the model runs with a preemption bound of 5.
#![cfg(loom)]

#[path = "support.rs"]
mod support;

use hadoop_ref::datanode::container::{Behavior, ContainerConfig};
use hadoop_ref::scenarios::container::{
    SEED_KEY, delete_during_partial_repair, delete_during_repair, delete_during_repair_with,
};
use support::{assert_caught, assert_holds, explore_bounded};

/// Preemptions per execution (see the module docs).
const PREEMPTION_BOUND: usize = 5;

#[test]
fn fixed_commit_never_restores_nor_orphans_the_block() {
    let exploration = explore_bounded("delete-during-repair/Fixed", PREEMPTION_BOUND, || {
        delete_during_repair(Behavior::Fixed)
    });
    assert_holds(&exploration);
}

/// The seed's own check (re-read the tree file for every block) holds as well: the
/// generation check must not weaken it.
#[test]
fn fixed_commit_rereading_the_tree_holds_too() {
    let exploration = explore_bounded(
        "delete-during-repair/Fixed, tree re-read per block",
        PREEMPTION_BOUND,
        || {
            delete_during_repair_with(
                ContainerConfig {
                    tree_generation_check: false,
                    ..ContainerConfig::new(Behavior::Fixed)
                },
                0,
            )
        },
    );
    assert_holds(&exploration);
}

#[test]
fn legacy_commit_is_caught() {
    let exploration = explore_bounded("delete-during-repair/Legacy", PREEMPTION_BOUND, || {
        delete_during_repair(Behavior::Legacy)
    });
    assert_caught(&exploration, SEED_KEY);
}

#[test]
fn fixed_partial_repair_never_recommits_the_deleted_block() {
    let exploration = explore_bounded(
        "delete-during-partial-repair/Fixed",
        PREEMPTION_BOUND,
        || delete_during_partial_repair(Behavior::Fixed),
    );
    assert_holds(&exploration);
}

#[test]
fn legacy_partial_repair_is_caught() {
    let exploration = explore_bounded(
        "delete-during-partial-repair/Legacy",
        PREEMPTION_BOUND,
        || delete_during_partial_repair(Behavior::Legacy),
    );
    assert_caught(&exploration, SEED_KEY);
}

/// Beyond the seed: the HDDS-16808 refresh in Ozone's order (after the tree write, outside
/// the writer lock) lets the deleting round's refresh and the reconciliation's interleave
/// and leave the in-memory and persisted data checksum on the older root.
#[test]
fn refresh_after_the_tree_write_is_caught() {
    let exploration = explore_bounded(
        "delete-during-repair/Fixed, refresh after the tree write",
        PREEMPTION_BOUND,
        || {
            delete_during_repair_with(
                ContainerConfig {
                    refresh_checksum_in_tree_write: false,
                    ..ContainerConfig::new(Behavior::Fixed)
                },
                0,
            )
        },
    );
    assert_caught(&exploration, "HDDS-16808");
}
