//! Recovery on open: what a crash between two durable steps leaves in a replica's
//! directory is resolved before the replica serves anything.
//!
//! - **A block file without metadata** (a repair that pulled chunks and crashed before
//!   its commit, or a deleting round's commit that landed before a crash) is reclaimed
//!   in a replica whose data is fixed (QUASI_CLOSED, CLOSED, UNHEALTHY, DELETED): nothing
//!   can name it any more. An OPEN, CLOSING or RECOVERING replica keeps it: a client
//!   writes a block's chunks before it commits the block, as in Ozone.
//! - **Metadata whose file is missing** while a pending delete transaction lists the
//!   block (a deleting round that unlinked the file and crashed before its database
//!   batch) is removed, so the replica does not look UNHEALTHY to a scan; the
//!   transaction stays pending and the next round completes it, recording the block in
//!   the tree. Metadata missing its file otherwise is left for the scanner: a real loss.
//! - **A block the tree file marks deleted** that still has metadata or a file (a
//!   deletion recorded in the tree first, as Ozone's layout has it, and interrupted
//!   before the rest: a deleting round's batch, or a peer's deletion applied by
//!   reconciliation) is deleted: the tree is the record of deletions, and no
//!   reconciliation would ever show the block again. A tree file that does not parse is
//!   left to the replica, which reports it.
//! - **Pending delete transactions** are in the database and resume with the next round.

use std::collections::BTreeSet;

use super::super::merkle;
use super::super::store::{ContainerStore, MetadataBatch, Recovery, StoreError};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::LocalId;

/// Runs recovery on `store`, just opened.
pub(super) fn recover(store: &dyn ContainerStore) -> Result<Recovery, StoreError> {
    let state = store.summary()?.state;
    let blocks = store.blocks()?;
    let mut recovery = Recovery::default();
    if state.is_closed_for_data() || state == ContainerState::Deleted {
        for block in store.block_files()? {
            if store.get_block(block)?.is_none() {
                store.delete_block_file(block)?;
                recovery.orphan_files_reclaimed.push(block);
            }
        }
    }
    let being_deleted: BTreeSet<LocalId> = store
        .pending_transactions(usize::MAX)?
        .into_iter()
        .flat_map(|tx| tx.local_ids)
        .collect();
    let tree = match store.read_tree_file()? {
        Some(bytes) => merkle::decode(&bytes).ok(),
        None => None,
    };
    let deleted_in_tree = |id: &LocalId| tree.as_ref().is_some_and(|t| t.tree.is_deleted(*id));
    let files_now = store.block_files()?;
    recovery.deletions_completed = blocks
        .iter()
        .map(|block| block.local_id)
        .chain(files_now.iter().copied())
        .filter(|id| {
            deleted_in_tree(id)
                || (being_deleted.contains(id) && files_now.binary_search(id).is_err())
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if !recovery.deletions_completed.is_empty() {
        // The metadata first, then the files: never metadata without its file.
        store.commit(MetadataBatch {
            delete_blocks: recovery.deletions_completed.clone(),
            ..MetadataBatch::default()
        })?;
        for id in &recovery.deletions_completed {
            store.delete_block_file(*id)?;
        }
    }
    if recovery != Recovery::default() {
        crate::events::info!(
            orphans = ?recovery.orphan_files_reclaimed,
            deletions = ?recovery.deletions_completed,
            "replica recovered on open"
        );
    }
    Ok(recovery)
}
