//! Loom, HDDS-16811: one datanode reconciles a block with two chunks from a peer while its
//! block deleting service runs a pass for the block's pending delete transaction; the
//! datanode lacks the block, or (partial) has its first chunk. Two spawned threads. Once
//! the transaction has been applied the block must not be live (no metadata, no file),
//! and no metadata may exist without its file: the seed's patch and the hardened code
//! hold, the legacy code is caught.
//!
//! Beyond the seed: a deleting round and a reconciliation that adopts a peer's deletion,
//! both moving the tree root, judged by the data checksum's agreement with the tree
//! (HDDS-16808's refresh in Ozone's order is caught in the seed's patch; the hardened
//! refresh inside the tree write holds); and two reconciliations of one container, one
//! whose peer fails after X's first chunk (two spawned threads): through the handler,
//! which refuses the second while the first runs, and around it, where the hardened
//! cleanup of the failed repair must not unlink the block the other commits.
//!
//! **Exhaustive.** Every model here runs with loom's defaults: no preemption bound, every
//! interleaving of the two threads up to loom's partial-order reduction, which skips only
//! orders of accesses that commute. What made that fit: the replica's storage
//! (`MemoryStore`: block files, database, tree file), its `ContainerData` and the
//! handler's container map tell loom that reads commute (`sync::RwCell`, atomics), and
//! reference counts are not scheduling points (`sync::Arc` is `std`'s under loom). The
//! code explored is the production path; only loom's view of which accesses conflict
//! changed.
//!
//! HDDS-7300: the on-demand scanner against a deleting round (two spawned threads); the
//! scanner's second look at a block whose file is gone holds under the read lock and is
//! caught with no lock, the code before HDDS-7300.
//!
//! **Not covered.** One block with two chunks, one transaction and one peer: a race that
//! needs a second block in the same pass (or a scan) is the shuttle scenarios' job
//! (`shuttle-tests/`), as are crashes and the other datanode threads.

use crate::support::{assert_caught, assert_holds, explore};
use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig};
use hadoop_ref::scenarios::container::{
    SEED_KEY, ScannerBehavior, concurrent_reconciliations, concurrent_reconciliations_with,
    data_checksum_follows_concurrent_tree_writes, delete_during_partial_repair,
    delete_during_repair, scan_during_block_deletion,
};

/// The seed's patch alone: the tree file re-read for every block, the chunks of a
/// partial block committed, Ozone's refresh order.
#[test]
fn seed_patch_never_restores_nor_orphans_the_block() {
    let exploration = explore("delete-during-repair/SeedPatch", || {
        delete_during_repair(ContainerBehavior::SeedPatch)
    });
    assert_holds(&exploration);
}

/// The hardened code: the generation check must not weaken the seed's check.
#[test]
fn hardened_never_restores_nor_orphans_the_block() {
    let exploration = explore("delete-during-repair/Hardened", || {
        delete_during_repair(ContainerBehavior::Hardened)
    });
    assert_holds(&exploration);
}

#[test]
fn legacy_commit_is_caught() {
    let exploration = explore("delete-during-repair/Legacy", || {
        delete_during_repair(ContainerBehavior::Legacy)
    });
    assert_caught(&exploration, SEED_KEY);
}

#[test]
fn seed_patch_partial_repair_never_recommits_the_deleted_block() {
    let exploration = explore("delete-during-partial-repair/SeedPatch", || {
        delete_during_partial_repair(ContainerBehavior::SeedPatch)
    });
    assert_holds(&exploration);
}

#[test]
fn hardened_partial_repair_never_recommits_the_deleted_block() {
    let exploration = explore("delete-during-partial-repair/Hardened", || {
        delete_during_partial_repair(ContainerBehavior::Hardened)
    });
    assert_holds(&exploration);
}

#[test]
fn legacy_partial_repair_is_caught() {
    let exploration = explore("delete-during-partial-repair/Legacy", || {
        delete_during_partial_repair(ContainerBehavior::Legacy)
    });
    assert_caught(&exploration, SEED_KEY);
}

/// Beyond the seed: HDDS-16808's refresh in Ozone's order (after the tree write, outside
/// the writer lock) lets the deleting round's refresh and the reconciliation's (adopting
/// a peer's deletion) interleave and leave the in-memory and persisted data checksum on
/// the older root.
#[test]
fn seed_patch_refresh_after_the_tree_write_is_caught() {
    let exploration = explore(
        "data-checksum-follows-concurrent-tree-writes/SeedPatch",
        || data_checksum_follows_concurrent_tree_writes(ContainerBehavior::SeedPatch),
    );
    assert_caught(&exploration, "HDDS-16808");
}

/// Beyond the seed: the hardened refresh inside the tree write's critical section.
#[test]
fn hardened_refresh_inside_the_tree_write_holds() {
    let exploration = explore(
        "data-checksum-follows-concurrent-tree-writes/Hardened",
        || data_checksum_follows_concurrent_tree_writes(ContainerBehavior::Hardened),
    );
    assert_holds(&exploration);
}

/// Two reconciliations of one container, one whose peer fails after X's first chunk, both
/// through the handler: the second is refused while the first runs.
#[test]
fn seed_patch_concurrent_reconciliations_through_the_handler_hold() {
    let exploration = explore(
        "concurrent-reconciliations/SeedPatch, through the handler",
        || concurrent_reconciliations(ContainerBehavior::SeedPatch, true),
    );
    assert_holds(&exploration);
}

/// As above, hardened.
#[test]
fn hardened_concurrent_reconciliations_through_the_handler_hold() {
    let exploration = explore(
        "concurrent-reconciliations/Hardened, through the handler",
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
    let exploration = explore(
        "concurrent-reconciliations/SeedPatch, around the handler",
        || concurrent_reconciliations(ContainerBehavior::SeedPatch, false),
    );
    assert_caught(&exploration, SEED_KEY);
}

/// The hardened code fails the broken repair whole; its cleanup (under the write lock,
/// never below what is committed) and the commit's file check keep the other's block
/// whole.
#[test]
fn hardened_concurrent_reconciliations_around_the_handler_hold() {
    let exploration = explore(
        "concurrent-reconciliations/Hardened, around the handler",
        || concurrent_reconciliations(ContainerBehavior::Hardened, false),
    );
    assert_holds(&exploration);
}

/// Beyond the seed, in the hardened code alone: the cleanup of a failed repair under the
/// read lock reads no metadata while the other reconciliation commits the block, then
/// unlinks its file.
#[test]
fn hardened_cleanup_under_the_read_lock_is_caught() {
    let exploration = explore(
        "concurrent-reconciliations/Hardened, cleanup under the read lock",
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

/// HDDS-7300: the scanner looks a block whose file is gone up again under the read lock,
/// after the deleting round's batch, and skips it.
#[test]
fn scanner_recheck_under_the_read_lock_skips_a_block_being_deleted() {
    let exploration = explore("scan-during-block-deletion/Hardened", || {
        scan_during_block_deletion(ScannerBehavior::Hardened)
    });
    assert_holds(&exploration);
}

/// Before HDDS-7300 the scanner looked again with no lock, between the round's unlink and
/// its batch: MISSING_DATA_FILE, the replica UNHEALTHY.
#[test]
fn scanner_recheck_without_the_lock_is_caught() {
    let exploration = explore(
        "scan-during-block-deletion/LegacyRecheckWithoutLock",
        || scan_during_block_deletion(ScannerBehavior::LegacyRecheckWithoutLock),
    );
    assert_caught(&exploration, SEED_KEY);
}
