//! The end of a block's repair: its metadata committed, or what it pulled removed, as
//! each behavior orders the commit, the finished writes and the deleted-block check.

use super::super::config::ContainerBehavior;
use super::super::error::ContainerError;
use super::super::merkle::ContainerMerkleTree;
use super::super::replica::KeyValueContainer;
use super::super::store::BlockData;
use super::peer::BlockRepair;
use super::pull::BlockPull;
use crate::hdds::ids::LocalId;
use crate::sync::RwLockReadGuard;

impl BlockPull<'_> {
    /// The end of the block's repair, as the replica's behavior orders it.
    pub(super) fn finish(
        self,
        incomplete: Option<ContainerError>,
        writer: &mut ContainerMerkleTree,
    ) -> BlockRepair {
        match self.container.config().behavior {
            ContainerBehavior::SeedPatch | ContainerBehavior::Hardened => {
                finish_patched(self, incomplete, writer)
            }
            ContainerBehavior::Legacy => finish_legacy(self, incomplete, writer),
        }
    }
}

/// The patched end of a block's repair. With
/// [`fail_incomplete_blocks`](super::super::config::ContainerConfig::fail_incomplete_blocks) a
/// pull that stopped early removes what it wrote and fails the block, and the block's
/// chunks enter `writer` only once committed; without, as the patched
/// `reconcileChunksPerBlock`, each pulled chunk enters `writer` as it was written and the
/// chunks the block holds are committed. Then [`commit_patched`].
fn finish_patched(
    pull: BlockPull<'_>,
    incomplete: Option<ContainerError>,
    writer: &mut ContainerMerkleTree,
) -> BlockRepair {
    let (container, block) = (pull.container, pull.block);
    let whole_only = container.config().fail_incomplete_blocks;
    if whole_only {
        if let Some(error) = incomplete {
            abort_decided(
                container,
                block,
                "pull incomplete, block failed whole",
                &error,
            );
            if pull.attempted_write {
                remove_pulled_under_own_lock(container, block);
            }
            return BlockRepair::Failed(error);
        }
    } else if !pull.pulled.is_empty() {
        writer.add_chunks(block, true, &pull.pulled);
    }
    if pull.chunks.is_empty() {
        return nothing_to_commit(container, block, incomplete);
    }
    let (data, pulled) = pull.into_block_data();
    match commit_patched(container, block, data, incomplete.as_ref()) {
        Ok(()) => {
            if whole_only {
                writer.add_chunks(block, true, &pulled);
            }
            match incomplete {
                Some(_) => BlockRepair::Partial {
                    chunks: pulled.len(),
                },
                None => BlockRepair::Repaired {
                    chunks: pulled.len(),
                },
            }
        }
        Err(error) => BlockRepair::Failed(error),
    }
}

/// The legacy end of a block's repair: whatever was pulled goes into the tree and is
/// committed ([`commit_legacy`]), even when the pull stopped early.
fn finish_legacy(
    pull: BlockPull<'_>,
    incomplete: Option<ContainerError>,
    writer: &mut ContainerMerkleTree,
) -> BlockRepair {
    let (container, block) = (pull.container, pull.block);
    if pull.chunks.is_empty() {
        return nothing_to_commit(container, block, incomplete);
    }
    // The seed's code adds each chunk to the tree as soon as it is written, before any
    // commit: a failed commit leaves them in the tree all the same.
    if !pull.pulled.is_empty() {
        writer.add_chunks(block, true, &pull.pulled);
    }
    let (data, pulled) = pull.into_block_data();
    commit_legacy(container, block, data, pulled.len(), incomplete)
}

/// A block with no chunk, local or pulled: skipped, or failed (with a `commit decided`
/// abort) when the pull stopped before its first chunk.
fn nothing_to_commit(
    container: &KeyValueContainer,
    block: LocalId,
    incomplete: Option<ContainerError>,
) -> BlockRepair {
    match incomplete {
        Some(error) => {
            abort_decided(container, block, "nothing pulled", &error);
            BlockRepair::Failed(error)
        }
        None => BlockRepair::Skipped,
    }
}

/// The `commit decided` event of a block's repair that commits nothing: why, and the
/// error that says what happened.
fn abort_decided(
    container: &KeyValueContainer,
    block: LocalId,
    why: &'static str,
    error: &ContainerError,
) {
    crate::events::debug!(
        node = %container.datanode(),
        container = container.id().0,
        block,
        decision = "abort",
        why,
        %error,
        "commit decided"
    );
}

/// Commits the repaired block's metadata (`putBlockForClosedContainer`), then emits the
/// `commit decided` event (once the metadata is in, so that a story shows what a
/// concurrent step saw): a commit `why`, `partial` when the pull stopped early
/// (`incomplete`), or an abort when the metadata write failed.
fn put_block(
    container: &KeyValueContainer,
    block: LocalId,
    data: BlockData,
    why: &'static str,
    incomplete: Option<&ContainerError>,
) -> Result<(), ContainerError> {
    if let Err(error) = container.put_block_for_closed_container(data) {
        abort_decided(container, block, "metadata write failed", &error);
        return Err(error);
    }
    match incomplete {
        None => crate::events::debug!(
            node = %container.datanode(),
            container = container.id().0,
            block,
            decision = "commit",
            why,
            "commit decided"
        ),
        Some(error) => crate::events::debug!(
            node = %container.datanode(),
            container = container.id().0,
            block,
            decision = "commit",
            partial = true,
            why,
            stopped = %error,
            "commit decided"
        ),
    }
    Ok(())
}

/// The seed's order: commit the metadata with no lock, then finish the writes.
fn commit_legacy(
    container: &KeyValueContainer,
    block: LocalId,
    data: BlockData,
    pulled: usize,
    incomplete: Option<ContainerError>,
) -> BlockRepair {
    if let Err(error) = put_block(
        container,
        block,
        data,
        "no check, no lock (legacy)",
        incomplete.as_ref(),
    ) {
        return BlockRepair::Failed(error);
    }
    if let Err(error) = container.finish_write_chunks(block) {
        crate::events::debug!(
            node = %container.datanode(),
            container = container.id().0,
            block,
            committed = true,
            %error,
            "block file not found"
        );
        return BlockRepair::Failed(error);
    }
    match incomplete {
        Some(_) => BlockRepair::Partial { chunks: pulled },
        None => BlockRepair::Repaired { chunks: pulled },
    }
}

/// Removes what a failed repair wrote: cuts the block file back to the end of the block's
/// metadata as committed now, and unlinks it when the block has none (a block the tree
/// marks deleted has none: its deletion removed it under the write lock). What was
/// committed when the repair started is no guide: another repair of the block may have
/// committed more since, and a deletion may have removed the metadata. The caller holds a
/// container lock (`_locked`): the write lock in the hardened code, because commits run
/// under the read lock and a reader's look at the metadata could be followed by another
/// repair's commit of the bytes it then cuts; the read lock of the refused commit in the
/// seed's patch. Best effort: bytes past the committed end have no metadata and no reader
/// sees them; if the metadata cannot be read the file is left alone, since a stray tail is
/// harmless and cutting committed data is not.
fn remove_pulled<G>(
    container: &KeyValueContainer,
    block: LocalId,
    lock: &'static str,
    _locked: &G,
) {
    let store = container.store();
    if let Ok(committed) = store.get_block(block) {
        let keep = committed.as_ref().map_or(0, BlockData::end);
        let cut = store.truncate_block_file(block, keep).is_ok();
        crate::events::debug!(
            node = %container.datanode(),
            container = container.id().0,
            block,
            kept = keep,
            lock,
            cut,
            "pulled chunks removed"
        );
    }
}

/// [`remove_pulled`] outside any container lock: under the write lock with
/// [`cleanup_under_write_lock`](super::super::config::ContainerConfig::cleanup_under_write_lock),
/// else under the read lock.
fn remove_pulled_under_own_lock(container: &KeyValueContainer, block: LocalId) {
    if container.config().cleanup_under_write_lock {
        remove_pulled(container, block, "write", &container.write_lock());
    } else {
        remove_pulled(container, block, "read", &container.read_lock());
    }
}

/// HDDS-16811 part 2: finish the writes, then under the read lock commit only if the tree
/// does not mark the block deleted; otherwise remove the pulled chunks and fail the block.
/// The seed's patch removes them under that read lock; with
/// [`cleanup_under_write_lock`](super::super::config::ContainerConfig::cleanup_under_write_lock)
/// the read lock is released first and the removal takes the write lock.
///
/// Beyond the seed's patch, with
/// [`commit_requires_block_file`](super::super::config::ContainerConfig::commit_requires_block_file)
/// the commit also requires the block file to hold every chunk it lists. The tree check
/// alone misses a deletion that unlinked the file after the writes were finished but
/// recorded nothing: a deleting round whose tree write failed, which ends the round with
/// the files gone and no deleted entry (`BlockDeletingTask` unlinks the files before it
/// writes the tree). The seed's patch checks only the tree and commits metadata without a
/// file then.
fn commit_patched(
    container: &KeyValueContainer,
    block: LocalId,
    data: BlockData,
    incomplete: Option<&ContainerError>,
) -> Result<(), ContainerError> {
    // "Chunk file not found": the file was unlinked while its handle was cached, and the
    // chunks went to the orphan. Nothing to remove, nothing committed.
    if let Err(error) = container.finish_write_chunks(block) {
        abort_decided(container, block, "block file not found", &error);
        return Err(error);
    }
    let read = container.read_lock();
    let refused = match commit_unless_deleted(container, block, data, incomplete, &read) {
        Ok(()) => return Ok(()),
        Err(refused) => refused,
    };
    if container.config().cleanup_under_write_lock {
        drop(read);
        remove_pulled(container, block, "write", &container.write_lock());
    } else {
        remove_pulled(container, block, "read", &read);
    }
    Err(refused)
}

/// The patched commit's checks, under the read lock the caller holds: the tree must not
/// mark the block deleted, and (with `commit_requires_block_file`) its file must hold
/// every chunk `data` lists. The `commit decided` event says which check decided.
fn commit_unless_deleted(
    container: &KeyValueContainer,
    block: LocalId,
    data: BlockData,
    incomplete: Option<&ContainerError>,
    _read: &RwLockReadGuard<'_, ()>,
) -> Result<(), ContainerError> {
    let id = container.id();
    let deleted = match container.deletion_recorded(block) {
        Ok(deleted) => deleted,
        Err(error) => {
            abort_decided(container, block, "tree file unreadable", &error);
            return Err(error);
        }
    };
    if deleted {
        let error = ContainerError::DeletedDuringRepair {
            container: id,
            block,
        };
        abort_decided(container, block, "block deleted in tree", &error);
        return Err(error);
    }
    if !container.config().commit_requires_block_file {
        return put_block(container, block, data, "tree has no deletion", incomplete);
    }
    let needed = data.end();
    let checked = match container.store().block_file_len(block) {
        Ok(Some(len)) if len >= needed => Ok(()),
        Ok(found) => Err(ContainerError::BlockFileLostDuringRepair {
            container: id,
            block,
            needed,
            found,
        }),
        Err(source) => Err(ContainerError::Store {
            container: id,
            source,
        }),
    };
    match checked {
        Ok(()) => put_block(
            container,
            block,
            data,
            "tree has no deletion, block file holds the chunks",
            incomplete,
        ),
        Err(error) => {
            abort_decided(container, block, "block file lost", &error);
            Err(error)
        }
    }
}
