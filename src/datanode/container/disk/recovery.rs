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
//! - **Pending delete transactions** are in the database and resume with the next round.

use std::collections::BTreeSet;

use super::super::store::{ContainerStore, MetadataBatch, StoreError};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::LocalId;

/// What recovery on open did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Block files without metadata that were unlinked.
    pub orphan_files_reclaimed: Vec<LocalId>,
    /// Blocks whose metadata was removed because their file was gone and a pending
    /// delete transaction lists them.
    pub deletions_completed: Vec<LocalId>,
}

/// Runs recovery on `store`, just opened.
pub(super) fn recover(store: &dyn ContainerStore) -> Result<Recovery, StoreError> {
    let state = store.summary()?.state;
    let files = store.block_files()?;
    let blocks = store.blocks()?;
    let mut recovery = Recovery::default();
    if state.is_closed_for_data() || state == ContainerState::Deleted {
        for block in files.iter().copied() {
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
    recovery.deletions_completed = blocks
        .iter()
        .map(|block| block.local_id)
        .filter(|id| being_deleted.contains(id) && files.binary_search(id).is_err())
        .collect();
    if !recovery.deletions_completed.is_empty() {
        store.commit(MetadataBatch {
            delete_blocks: recovery.deletions_completed.clone(),
            ..MetadataBatch::default()
        })?;
    }
    if recovery != Recovery::default() {
        tracing::info!(
            orphans = ?recovery.orphan_files_reclaimed,
            deletions = ?recovery.deletions_completed,
            "replica recovered on open"
        );
    }
    Ok(recovery)
}
