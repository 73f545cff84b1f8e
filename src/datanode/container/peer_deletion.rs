//! HDDS-11765 (open upstream, beyond the seed): a block that a peer's tree marks deleted
//! while it is live here is deleted here too, in the hardened behavior
//! ([`apply_peer_deletions`](super::config::ContainerConfig::apply_peer_deletions)).
//!
//! **The race (HDDS-16811).** A block restored by reconciliation before the seed's patch
//! (or by the legacy code) stays live on one replica after its peers deleted it: the
//! deleted flag is not hashed, so the trees agree and no diff shows it.
//! **The fix** the seed leaves out: reconciliation reports such a block, and it is
//! deleted here under the container write lock, its deletion recorded in the tree first.

use super::error::ContainerError;
use super::replica::KeyValueContainer;
use super::store::MetadataBatch;
use crate::hdds::ids::LocalId;

/// HDDS-11765: the peer's tree witnessed the deletion of a block that is live here.
/// Under the write lock: records the deletion in the tree (with the peer's `checksum`),
/// then deletes the metadata, then the file; true if there was anything. The tree comes
/// first because it is the only record of a deletion: a deletion the tree missed would be
/// copied back by the next reconciliation with a peer that still has the block. In this
/// order a failure at any step leaves the deletion recorded, or nothing done, and never
/// metadata without its file. A replica left without blocks is marked empty, as
/// `BlockDeletingTask` marks it after a round: SCM deletes a container only once every
/// replica reports empty.
pub(super) fn apply_peer_deletion(
    container: &KeyValueContainer,
    block: LocalId,
    checksum: u64,
) -> Result<bool, ContainerError> {
    let id = container.id();
    let store = container.store();
    let _write = container.write_lock();
    let meta = store.get_block(block).map_err(ContainerError::store(id))?;
    let has_file = store
        .block_file_len(block)
        .map_err(ContainerError::store(id))?
        .is_some();
    if meta.is_none() && !has_file {
        return Ok(false);
    }
    container.record_deleted_block(block, checksum)?;
    let put_deleted = if container.config().records_deletions_in_database() {
        vec![(block, checksum)]
    } else {
        Vec::new()
    };
    if meta.is_some() || !put_deleted.is_empty() {
        store
            .commit(MetadataBatch {
                delete_blocks: meta.iter().map(|_| block).collect(),
                put_deleted,
                ..MetadataBatch::default()
            })
            .map_err(ContainerError::store(id))?;
    }
    store
        .delete_block_file(block)
        .map_err(ContainerError::store(id))?;
    crate::events::debug!(
        node = %container.datanode(),
        container = id.0,
        block,
        metadata = meta.is_some(),
        file = has_file,
        "peer deletion applied"
    );
    if store
        .summary()
        .map_err(ContainerError::store(id))?
        .block_count
        == 0
    {
        container.mark_empty();
    }
    Ok(true)
}
