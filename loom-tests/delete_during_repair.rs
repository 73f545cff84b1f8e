//! Loom, HDDS-16811: one datanode reconciles a block with two chunks from a peer while its
//! block deleting service runs a pass for the block's pending delete transaction; the
//! datanode lacks the block, or (partial) has its first chunk. Two spawned threads. Once
//! the transaction has been applied the block must not be live (no metadata, no file),
//! and no metadata may exist without its file: the seed's patch and the hardened code
//! hold, the legacy code is caught.
//!
//! Exhaustive exploration does not fit the budget (each extra preemption multiplies the
//! executions by six to eight: 604 at bound 2, 5 088 at 3, 32 567 at 4, 166 541 at 5 in
//! 8.5 s release; 173 974 at 5 since the handler's reconciliation guard), so the model
//! runs with a preemption bound of 5.
//!
//! Beyond the seed: a deleting round and a reconciliation that adopts a peer's deletion,
//! both moving the tree root, judged by the data checksum's agreement with the tree
//! (HDDS-16808's refresh in Ozone's order is caught in the seed's patch; the hardened
//! refresh inside the tree write holds); and two reconciliations of one container, one
//! whose peer fails after X's first chunk (two spawned threads): through the handler,
//! which refuses the second while the first runs, and around it, where the hardened
//! cleanup of the failed repair must not unlink the block the other commits (bound 4: two
//! reconciliations have about twice the scheduling points of one against a deleting pass).

use crate::support::{assert_caught, assert_holds, explore_bounded};
use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig};
use hadoop_ref::scenarios::container::{
    SEED_KEY, concurrent_reconciliations, concurrent_reconciliations_with,
    data_checksum_follows_concurrent_tree_writes, delete_during_partial_repair,
    delete_during_repair,
};

/// Preemptions per execution (see the module docs).
const PREEMPTION_BOUND: usize = 5;

/// Preemptions per execution of two reconciliations running at once, which have about
/// twice the scheduling points of one reconciliation against one deleting pass.
const CONCURRENT_REPAIRS_BOUND: usize = 4;

/// The seed's patch alone: the tree file re-read for every block, the chunks of a
/// partial block committed, Ozone's refresh order.
#[test]
fn seed_patch_never_restores_nor_orphans_the_block() {
    let exploration = explore_bounded("delete-during-repair/SeedPatch", PREEMPTION_BOUND, || {
        delete_during_repair(ContainerBehavior::SeedPatch)
    });
    assert_holds(&exploration);
}

/// The hardened code: the generation check must not weaken the seed's check.
#[test]
fn hardened_never_restores_nor_orphans_the_block() {
    let exploration = explore_bounded("delete-during-repair/Hardened", PREEMPTION_BOUND, || {
        delete_during_repair(ContainerBehavior::Hardened)
    });
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
fn seed_patch_partial_repair_never_recommits_the_deleted_block() {
    let exploration = explore_bounded(
        "delete-during-partial-repair/SeedPatch",
        PREEMPTION_BOUND,
        || delete_during_partial_repair(ContainerBehavior::SeedPatch),
    );
    assert_holds(&exploration);
}

#[test]
fn hardened_partial_repair_never_recommits_the_deleted_block() {
    let exploration = explore_bounded(
        "delete-during-partial-repair/Hardened",
        PREEMPTION_BOUND,
        || delete_during_partial_repair(ContainerBehavior::Hardened),
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

/// Beyond the seed: HDDS-16808's refresh in Ozone's order (after the tree write, outside
/// the writer lock) lets the deleting round's refresh and the reconciliation's (adopting
/// a peer's deletion) interleave and leave the in-memory and persisted data checksum on
/// the older root.
#[test]
fn seed_patch_refresh_after_the_tree_write_is_caught() {
    let exploration = explore_bounded(
        "data-checksum-follows-concurrent-tree-writes/SeedPatch",
        PREEMPTION_BOUND,
        || data_checksum_follows_concurrent_tree_writes(ContainerBehavior::SeedPatch),
    );
    assert_caught(&exploration, "HDDS-16808");
}

/// Beyond the seed: the hardened refresh inside the tree write's critical section.
#[test]
fn hardened_refresh_inside_the_tree_write_holds() {
    let exploration = explore_bounded(
        "data-checksum-follows-concurrent-tree-writes/Hardened",
        PREEMPTION_BOUND,
        || data_checksum_follows_concurrent_tree_writes(ContainerBehavior::Hardened),
    );
    assert_holds(&exploration);
}

/// Two reconciliations of one container, one whose peer fails after X's first chunk, both
/// through the handler: the second is refused while the first runs.
#[test]
fn seed_patch_concurrent_reconciliations_through_the_handler_hold() {
    let exploration = explore_bounded(
        "concurrent-reconciliations/SeedPatch, through the handler",
        PREEMPTION_BOUND,
        || concurrent_reconciliations(ContainerBehavior::SeedPatch, true),
    );
    assert_holds(&exploration);
}

/// As above, hardened.
#[test]
fn hardened_concurrent_reconciliations_through_the_handler_hold() {
    let exploration = explore_bounded(
        "concurrent-reconciliations/Hardened, through the handler",
        PREEMPTION_BOUND,
        || concurrent_reconciliations(ContainerBehavior::Hardened, true),
    );
    assert_holds(&exploration);
}

/// The same two reconciliations around the handler, so they may run at once (Ozone's
/// replication supervisor never lets them): the seed's patch commits the failed one's
/// partial block after the other's whole one, and the block's second chunk is lost to its
/// metadata for good.
#[test]
fn seed_patch_concurrent_reconciliations_around_the_handler_are_caught() {
    let exploration = explore_bounded(
        "concurrent-reconciliations/SeedPatch, around the handler",
        CONCURRENT_REPAIRS_BOUND,
        || concurrent_reconciliations(ContainerBehavior::SeedPatch, false),
    );
    assert_caught(&exploration, SEED_KEY);
}

/// The hardened code fails the broken repair whole; its cleanup (under the write lock,
/// never below what is committed) and the commit's file check keep the other's block
/// whole.
#[test]
fn hardened_concurrent_reconciliations_around_the_handler_hold() {
    let exploration = explore_bounded(
        "concurrent-reconciliations/Hardened, around the handler",
        CONCURRENT_REPAIRS_BOUND,
        || concurrent_reconciliations(ContainerBehavior::Hardened, false),
    );
    assert_holds(&exploration);
}

/// Beyond the seed, in the hardened code alone: the cleanup of a failed repair under the
/// read lock reads no metadata while the other reconciliation commits the block, then
/// unlinks its file.
#[test]
fn hardened_cleanup_under_the_read_lock_is_caught() {
    let exploration = explore_bounded(
        "concurrent-reconciliations/Hardened, cleanup under the read lock",
        CONCURRENT_REPAIRS_BOUND,
        || {
            concurrent_reconciliations_with(
                ContainerConfig {
                    cleanup_under_write_lock: false,
                    ..ContainerConfig::new(ContainerBehavior::Hardened)
                },
                false,
            )
        },
    );
    assert_caught(&exploration, SEED_KEY);
}
