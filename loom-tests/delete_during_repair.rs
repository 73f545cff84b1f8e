//! Loom, HDDS-16811: one datanode reconciles a block with two chunks from a peer while its
//! block deleting service runs a pass for the block's pending delete transaction; the
//! datanode lacks the block, or (partial) has its first chunk. Two spawned threads. Once the transaction has been applied the block must not be live
//! (no metadata, no file, a deleted tree entry), and no metadata may exist without its
//! file.
//!
//! Exhaustive exploration does not fit the budget (each extra preemption multiplies the
//! executions by six to eight: 604 at bound 2, 5 088 at 3, 32 567 at 4, 166 541 at 5 in
//! 8.5 s release; 173 974 at 5 since the handler's reconciliation guard), so the model
//! runs with a preemption bound of 5.
//!
//! Also two reconciliations of one container, one whose peer fails after X's first chunk
//! (two spawned threads): through the handler, which refuses the second while the first
//! runs (2 926 executions at bound 5), and around it, where the failed repair's cleanup
//! must not unlink the block the other commits (324 809 executions at bound 4, 20 s
//! release; before the fix the violation is found in about 4 500).

use crate::support::{assert_caught, assert_holds, explore_bounded};
use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig};
use hadoop_ref::scenarios::container::{
    SEED_KEY, concurrent_reconciliations, delete_during_partial_repair, delete_during_repair,
    delete_during_repair_with,
};

/// Preemptions per execution (see the module docs).
const PREEMPTION_BOUND: usize = 5;

/// Preemptions per execution of two reconciliations running at once, which have about
/// twice the scheduling points of one reconciliation against one deleting pass.
const CONCURRENT_REPAIRS_BOUND: usize = 4;

#[test]
fn fixed_commit_never_restores_nor_orphans_the_block() {
    let exploration = explore_bounded("delete-during-repair/Fixed", PREEMPTION_BOUND, || {
        delete_during_repair(ContainerBehavior::Fixed)
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
                    ..ContainerConfig::new(ContainerBehavior::Fixed)
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
        delete_during_repair(ContainerBehavior::Legacy)
    });
    assert_caught(&exploration, SEED_KEY);
}

#[test]
fn fixed_partial_repair_never_recommits_the_deleted_block() {
    let exploration = explore_bounded(
        "delete-during-partial-repair/Fixed",
        PREEMPTION_BOUND,
        || delete_during_partial_repair(ContainerBehavior::Fixed),
    );
    assert_holds(&exploration);
}

#[test]
fn legacy_partial_repair_is_caught() {
    let exploration = explore_bounded(
        "delete-during-partial-repair/Legacy",
        PREEMPTION_BOUND,
        || delete_during_partial_repair(ContainerBehavior::Legacy),
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
                    ..ContainerConfig::new(ContainerBehavior::Fixed)
                },
                0,
            )
        },
    );
    assert_caught(&exploration, "HDDS-16808");
}

/// Two reconciliations of one container, one whose peer fails after X's first chunk, both
/// through the handler: the second is refused while the first runs, so neither undoes
/// the other's block.
#[test]
fn concurrent_reconciliations_through_the_handler_hold() {
    let exploration = explore_bounded(
        "concurrent-reconciliations/Fixed, through the handler",
        PREEMPTION_BOUND,
        || concurrent_reconciliations(ContainerBehavior::Fixed, true),
    );
    assert_holds(&exploration);
}

/// The same two reconciliations around the handler, so they may run at once: the failed
/// repair's cleanup (under the write lock, never below what is committed) and the commit's
/// file check keep the other's block whole.
#[test]
fn concurrent_reconciliations_around_the_handler_hold() {
    let exploration = explore_bounded(
        "concurrent-reconciliations/Fixed, around the handler",
        CONCURRENT_REPAIRS_BOUND,
        || concurrent_reconciliations(ContainerBehavior::Fixed, false),
    );
    assert_holds(&exploration);
}
