//! Loom, HDDS-16811: one datanode reconciles a block with two chunks from a peer while its
//! block deleting service runs a pass for the block's pending delete transaction. Two
//! spawned threads. Once the transaction has been applied the block must not be live
//! (no metadata, no file, a deleted tree entry), and no metadata may exist without its
//! file.
#![cfg(loom)]

#[path = "support.rs"]
mod support;

use hadoop_ref::datanode::container::Behavior;
use hadoop_ref::scenarios::container::{SEED_KEY, delete_during_repair};
use support::{assert_caught, assert_holds, explore};

#[test]
fn fixed_commit_never_restores_nor_orphans_the_block() {
    let exploration = explore("delete-during-repair/Fixed", || {
        delete_during_repair(Behavior::Fixed)
    });
    assert_holds(&exploration);
}

#[test]
fn legacy_commit_is_caught() {
    let exploration = explore("delete-during-repair/Legacy", || {
        delete_during_repair(Behavior::Legacy)
    });
    assert_caught(&exploration, SEED_KEY);
}
