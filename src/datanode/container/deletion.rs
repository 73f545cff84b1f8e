//! Block deletion on the datanode: storing the SCM's delete transactions
//! (`DeleteBlocksCommandHandler`) and executing them (`BlockDeletingService` and its
//! `BlockDeletingTask`).
//!
//! **The race (HDDS-16811).** A transaction's block without metadata on this replica was
//! unlinked and the transaction dropped with no trace in the checksum tree, so a later
//! reconciliation copied the block back from a peer that had not deleted it yet.
//! **The fix (part 1)** records such blocks as deleted in the round's tree write (an
//! existing entry keeps its checksum, a new one gets that of a block without chunks), and
//! (HDDS-16808) the data checksum in memory and in the database follows the new root.
//!
//! Beyond the seed's patch
//! ([`record_failed_unlinks`](super::config::ContainerConfig::record_failed_unlinks)): a
//! block whose file could not be unlinked loses its metadata like the others (as in
//! Ozone) and is recorded as deleted with the checksum of its metadata, so no
//! reconciliation restores it; its leftover file has no metadata and is invisible to reads
//! and scans. Without the switch it gets no tree entry, as in `BlockDeletingTask`.
//!
//! Not modelled, because each depends on time: the command handler's bounded queue and
//! worker interval, the 100 ms `tryLock` with one retry round (here the lock is simply
//! taken), and the round's early stop after holding the lock for 1 s.

use std::collections::{BTreeMap, BTreeSet};

use super::error::ContainerError;
use super::merkle::ContainerMerkleTree;
use super::replica::KeyValueContainer;
use super::store::{BlockData, MetadataBatch};
use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::LocalId;

/// How one stored delete transaction was handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionStored {
    /// Stored; it will be executed by the block deleting service.
    Stored,
    /// Stored although its id is below the last one (counted as out of order).
    StoredOutOfOrder,
    /// Its id equals the last one stored: a duplicate, acknowledged without change.
    Duplicate,
}

/// `ProcessTransactionTask`: stores `tx` with its container under the container write
/// lock. No check of the container state or of block metadata, as in Ozone; the last
/// transaction id only rises. The result is the acknowledgement: SCM completes a
/// transaction on storage, not on execution.
///
/// Refused as [`ContainerError::InvalidDeleteTransaction`], before anything is stored: id
/// 0, which Ozone would take for a duplicate of a fresh replica's last id and acknowledge
/// unstored; and an id still pending with another block list, which Ozone's put would
/// overwrite. A resend of a pending transaction with the same list is a duplicate.
pub fn store_delete_transaction(
    container: &KeyValueContainer,
    tx: &DeletedBlocksTransaction,
) -> Result<TransactionStored, ContainerError> {
    if tx.container != container.id() {
        return Err(ContainerError::UnknownContainer {
            container: tx.container,
        });
    }
    let refuse = |reason| ContainerError::InvalidDeleteTransaction {
        container: container.id(),
        tx_id: tx.tx_id,
        reason,
    };
    if tx.tx_id == 0 {
        return Err(refuse("transaction ids start at 1"));
    }
    let _write = container.write_lock();
    let store = container.store();
    let storage = ContainerError::store(container.id());
    let last = store.summary().map_err(storage)?.last_delete_tx_id;
    // The last id is the highest stored: only an id at or below it can be stored already.
    if tx.tx_id <= last {
        let pending = store
            .transaction(tx.tx_id)
            .map_err(ContainerError::store(container.id()))?;
        match pending {
            Some(stored) if stored.local_ids == tx.local_ids => {
                return Ok(TransactionStored::Duplicate);
            }
            Some(_) => return Err(refuse("stored already with another block list")),
            None if tx.tx_id == last => return Ok(TransactionStored::Duplicate),
            None => {}
        }
    }
    let stored = if tx.tx_id < last {
        TransactionStored::StoredOutOfOrder
    } else {
        TransactionStored::Stored
    };
    container
        .store()
        .commit(MetadataBatch {
            put_transactions: vec![tx.clone()],
            last_delete_tx_id: Some(last.max(tx.tx_id)),
            ..MetadataBatch::default()
        })
        .map_err(ContainerError::store(container.id()))?;
    Ok(stored)
}

/// What one deleting round did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeletionRound {
    /// Transactions executed and removed.
    pub transactions: Vec<u64>,
    /// Block ids processed, duplicates within the round included (the budget's unit).
    pub blocks_processed: usize,
    /// Blocks whose metadata and file were deleted.
    pub deleted: Vec<LocalId>,
    /// Blocks that had no metadata here.
    pub unreferenced: Vec<LocalId>,
    /// Blocks whose file could not be unlinked (metadata removed all the same).
    pub file_delete_failures: Vec<LocalId>,
    /// Whether the round left the replica without blocks and marked it empty.
    pub marked_empty: bool,
}

/// The block deleting service of one datanode (`BlockDeletingService`): one task per
/// container, rounds under the container write lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockDeletingService {
    /// Block ids a task processes at most (`hdds.datanode.block.deleting.limit.per.interval`).
    pub block_limit_per_interval: usize,
}

impl Default for BlockDeletingService {
    fn default() -> Self {
        Self {
            block_limit_per_interval: 20_000,
        }
    }
}

impl BlockDeletingService {
    /// `isDeletionAllowed`: only CLOSED and QUASI_CLOSED replicas.
    pub fn is_deletion_allowed(container: &KeyValueContainer) -> bool {
        matches!(
            container.state(),
            ContainerState::Closed | ContainerState::QuasiClosed
        )
    }

    /// `BlockDeletingTask.call`: rounds while the block budget lasts and a round processed
    /// a transaction. Bounded: every round that continues processes at least one block id
    /// or one transaction, and the budget shrinks by the block ids processed.
    pub fn run_task(
        &self,
        container: &KeyValueContainer,
    ) -> Result<Vec<DeletionRound>, ContainerError> {
        let mut budget = self.block_limit_per_interval;
        let mut rounds = Vec::new();
        // At most one round per transaction stored when the task started, plus one: the
        // loop ends earlier on an empty round or an exhausted budget.
        let max_rounds = container
            .store()
            .summary()
            .map_err(ContainerError::store(container.id()))?
            .pending_transactions
            .saturating_add(1);
        for _ in 0..max_rounds {
            if budget == 0 {
                break;
            }
            let round = self.run_round(container, budget)?;
            if round.transactions.is_empty() {
                break;
            }
            budget = budget.saturating_sub(round.blocks_processed.max(1));
            rounds.push(round);
        }
        Ok(rounds)
    }

    /// `handleDeleteTask`: one round under the container write lock, held through the file
    /// deletes, the tree write and the metadata batch.
    pub fn run_round(
        &self,
        container: &KeyValueContainer,
        block_budget: usize,
    ) -> Result<DeletionRound, ContainerError> {
        let id = container.id();
        let store = container.store();
        let _write = container.write_lock();
        let mut round = DeletionRound::default();
        if !Self::is_deletion_allowed(container) {
            return Ok(round);
        }
        let transactions = store
            .pending_transactions(block_budget)
            .map_err(ContainerError::store(id))?;
        if transactions.is_empty() {
            return Ok(round);
        }
        let record_failed_unlinks = {
            let config = container.config();
            config.behavior.is_patched() && config.record_failed_unlinks
        };
        let (deleted, all_ids) =
            delete_transactions(container, &transactions, record_failed_unlinks, &mut round)?;
        // A failing tree write ends the round here, as in `BlockDeletingTask`: files are
        // gone, metadata and transactions stay, and a later round repeats them.
        let written = container.add_deleted_blocks(&deleted, &round.unreferenced)?;
        // With the hardened records, the deletions the tree now holds go in the batch.
        let put_deleted = if container.config().records_deletions_in_database() {
            recorded_deletions(&written.tree, &all_ids)
        } else {
            Vec::new()
        };
        store
            .commit(MetadataBatch {
                delete_blocks: all_ids.into_iter().collect(),
                delete_transactions: round.transactions.clone(),
                put_deleted,
                ..MetadataBatch::default()
            })
            .map_err(ContainerError::store(id))?;
        let summary = store.summary().map_err(ContainerError::store(id))?;
        if summary.block_count == 0 {
            container.mark_empty();
            round.marked_empty = true;
        }
        Ok(round)
    }
}

/// The blocks of `ids` that `tree` marks deleted, with their checksums.
fn recorded_deletions(tree: &ContainerMerkleTree, ids: &BTreeSet<LocalId>) -> Vec<(LocalId, u64)> {
    ids.iter()
        .filter_map(|id| {
            tree.block(*id)
                .filter(|b| b.deleted)
                .map(|b| (*id, b.data_checksum))
        })
        .collect()
}

fn push_once(ids: &mut Vec<LocalId>, block: LocalId) {
    if !ids.contains(&block) {
        ids.push(block);
    }
}

/// `deleteTransactions`' loop: unlinks the files of every block of `transactions`, noting in
/// `round` what it did. Returns the blocks whose metadata the round removes and records
/// (with a failed unlink's when `record_failed_unlinks`), and every block id processed.
/// Deduplicated as Ozone does: a block already deleted in this round is skipped; one
/// without metadata, or whose unlink failed, is handled again.
fn delete_transactions(
    container: &KeyValueContainer,
    transactions: &[DeletedBlocksTransaction],
    record_failed_unlinks: bool,
    round: &mut DeletionRound,
) -> Result<(Vec<BlockData>, BTreeSet<LocalId>), ContainerError> {
    let (id, store) = (container.id(), container.store());
    let mut deleted: BTreeMap<LocalId, BlockData> = BTreeMap::new();
    let mut all_ids = BTreeSet::new();
    for tx in transactions {
        for &block in &tx.local_ids {
            round.blocks_processed += 1;
            all_ids.insert(block);
            if deleted.contains_key(&block) {
                continue;
            }
            match store.get_block(block).map_err(ContainerError::store(id))? {
                None => {
                    // `deleteUnreferenced`: remove a file if there is one; errors are only
                    // logged in Ozone.
                    let file = store.delete_block_file(block);
                    crate::events::debug!(
                        node = %container.datanode(),
                        container = id.0,
                        block,
                        tx = tx.tx_id,
                        metadata = false,
                        file = matches!(file, Ok(true)),
                        "block deleted"
                    );
                    push_once(&mut round.unreferenced, block);
                }
                Some(meta) => match store.delete_block_file(block) {
                    Ok(file) => {
                        crate::events::debug!(
                            node = %container.datanode(),
                            container = id.0,
                            block,
                            tx = tx.tx_id,
                            metadata = true,
                            file,
                            "block deleted"
                        );
                        round.deleted.push(block);
                        deleted.insert(block, meta);
                    }
                    Err(error) => {
                        crate::events::debug!(
                            node = %container.datanode(),
                            container = id.0,
                            block,
                            tx = tx.tx_id,
                            recorded = record_failed_unlinks,
                            %error,
                            "block unlink failed"
                        );
                        push_once(&mut round.file_delete_failures, block);
                        if record_failed_unlinks {
                            deleted.insert(block, meta);
                        }
                    }
                },
            }
        }
        round.transactions.push(tx.tx_id);
    }
    Ok((deleted.into_values().collect(), all_ids))
}
