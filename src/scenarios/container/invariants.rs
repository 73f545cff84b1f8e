//! The properties the container scenarios check on replicas (HDDS-16811, HDDS-16808).
//!
//! **The race.** A replica's block deleting service and its reconciliation work on the
//! same block: deleted before its repair, the block is copied back; deleted during it, its
//! metadata is committed without its file.
//! **What is checked** is the harm, not the mechanism: no deleted block live again
//! ([`deleted_blocks_not_live`]), no metadata without its file
//! ([`no_metadata_without_file`]), no live block lost ([`live_blocks_present`]), the tree
//! records every deletion ([`deletions_witnessed`]), the data checksum follows the tree
//! (HDDS-16808, [`data_checksum_follows_the_tree`]) and replicas agree on it
//! ([`replicas_agree_on_the_data_checksum`]), and no replica UNHEALTHY
//! ([`replica_healthy`]).
//!
//! Each reads a replica through the boundary ([`KeyValueContainerApi`]), so the same
//! checks judge this crate's replica and another implementation; the two on the data
//! checksum's three copies (HDDS-16808) read this crate's replica itself.

use super::seed::{setup, violation};
use crate::datanode::container::store::{ContainerStore, StoreError};
use crate::datanode::container::{ContainerError, KeyValueContainerApi, TreeEntry};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::LocalId;
use crate::scenarios::Violation;
use crate::sim::replica_node::{CONTAINER, ReplicaNode, block_data, chunk_bytes};

/// The property [`deleted_blocks_not_live`] checks.
pub const DELETED_BLOCK_NOT_LIVE: &str = "a block whose deletion was executed is not live";

/// Once a replica executed the deletion of `blocks`, it holds neither metadata nor a file
/// for any of them: the harm of the seed's first result (a deleted block copied back).
pub fn deleted_blocks_not_live<R: KeyValueContainerApi>(
    node: &R,
    blocks: &[LocalId],
) -> Result<(), Violation> {
    for &block in blocks {
        if has_metadata(node, block) || has_file(node, block) {
            let entry = node.tree_entry(block).map_err(setup)?;
            return Err(violation(
                DELETED_BLOCK_NOT_LIVE,
                format!(
                    "{} block {block}: metadata {}, file {}, tree entry {}",
                    node.datanode(),
                    has_metadata(node, block),
                    has_file(node, block),
                    entry_name(entry)
                ),
            ));
        }
    }
    Ok(())
}

/// Whether `node` has metadata for `block` (an unreadable store counts as none).
pub fn has_metadata<R: KeyValueContainerApi>(node: &R, block: LocalId) -> bool {
    matches!(node.block(block), Ok(Some(_)))
}

/// Whether `node` has a file for `block` (an unreadable store counts as none).
pub fn has_file<R: KeyValueContainerApi>(node: &R, block: LocalId) -> bool {
    matches!(node.block_file_len(block), Ok(Some(_)))
}

fn entry_name(entry: TreeEntry) -> &'static str {
    match entry {
        TreeEntry::Absent => "absent",
        TreeEntry::Deleted => "deleted",
        TreeEntry::Live => "live",
    }
}

/// The tree, the only record of executed deletions, marks each of `blocks` deleted.
/// Checked where every replica executed the deletions and reconciled with every peer: a
/// replica on the legacy code that never had a block leaves no entry when it deletes it,
/// which is the defect's mechanism rather than its harm, and adopts the entry from a peer.
pub fn deletions_witnessed<R: KeyValueContainerApi>(
    node: &R,
    blocks: &[LocalId],
) -> Result<(), Violation> {
    for &block in blocks {
        let entry = node.tree_entry(block).map_err(setup)?;
        if entry != TreeEntry::Deleted {
            return Err(violation(
                "the tree marks every executed deletion",
                format!(
                    "{} block {block}: tree entry {}",
                    node.datanode(),
                    entry_name(entry)
                ),
            ));
        }
    }
    Ok(())
}

/// Every block with metadata has its file, holding all of its chunks: the harm of the
/// seed's second result (metadata committed without its file, then MISSING_DATA_FILE).
pub fn no_metadata_without_file<R: KeyValueContainerApi>(node: &R) -> Result<(), Violation> {
    for block in node.blocks().map_err(setup)? {
        let file = node.block_file_len(block.local_id).map_err(setup)?;
        if file.is_none_or(|len| len < block.end()) {
            let gap = MissingData {
                block: block.local_id,
                listed: block.end(),
                file,
            };
            return Err(violation(
                METADATA_WITH_FILE,
                format!("{} {gap}", node.datanode()),
            ));
        }
    }
    Ok(())
}

/// Every block file is named by metadata: no orphan a crash left behind (a repair's
/// pulled chunks, a deleting round's file) outlives recovery.
pub fn no_file_without_metadata(node: &ReplicaNode) -> Result<(), Violation> {
    match first_file_without_metadata(node.store.as_ref())
        .map_err(|e| setup(ContainerError::store(CONTAINER)(e)))?
    {
        None => Ok(()),
        Some(block) => Err(violation(
            FILE_WITH_METADATA,
            format!("{} block {block}: file without metadata", node.id()),
        )),
    }
}

/// The property [`no_metadata_without_file`] checks.
pub const METADATA_WITH_FILE: &str = "block metadata only with its file";
/// The property [`no_file_without_metadata`] checks.
pub const FILE_WITH_METADATA: &str = "no block file without metadata";

/// A block whose metadata lists more bytes than its file holds, or that has no file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissingData {
    /// The block.
    pub block: LocalId,
    /// The bytes its metadata lists.
    pub listed: u64,
    /// Its file's length, if it has one.
    pub file: Option<u64>,
}

impl std::fmt::Display for MissingData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let file = self
            .file
            .map_or("absent".to_owned(), |l| format!("of {l} byte(s)"));
        write!(
            f,
            "block {}: metadata lists {} byte(s), file {file}",
            self.block, self.listed
        )
    }
}

/// The first block of `store` whose file does not hold every byte its metadata lists.
pub fn first_metadata_without_file(
    store: &dyn ContainerStore,
) -> Result<Option<MissingData>, StoreError> {
    for block in store.blocks()? {
        let file = store.block_file_len(block.local_id)?;
        if file.is_none_or(|len| len < block.end()) {
            return Ok(Some(MissingData {
                block: block.local_id,
                listed: block.end(),
                file,
            }));
        }
    }
    Ok(None)
}

/// The first block file of `store` that no metadata names.
pub fn first_file_without_metadata(
    store: &dyn ContainerStore,
) -> Result<Option<LocalId>, StoreError> {
    for block in store.block_files()? {
        if store.get_block(block)?.is_none() {
            return Ok(Some(block));
        }
    }
    Ok(None)
}

/// The property [`live_blocks_present`] checks.
pub const LIVE_BLOCKS_PRESENT: &str = "no block of a live key lost";

/// The property [`data_checksum_follows_the_tree`] checks.
pub const DATA_CHECKSUM_FOLLOWS_TREE: &str =
    "data checksum in memory, persisted and in the tree file agree (HDDS-16808)";

/// No data of a live key is lost: every block of `live` has metadata and a file with its
/// data on every replica of `nodes`.
pub fn live_blocks_present<R: KeyValueContainerApi>(
    nodes: &[R],
    live: &[(LocalId, usize)],
) -> Result<(), Violation> {
    for node in nodes {
        for &(block, chunks) in live {
            let expected = block_data(block, chunks);
            let intact = node.block(block).ok().flatten() == Some(expected.clone())
                && (0..chunks).all(|i| {
                    let chunk = &expected.chunks[i];
                    node.read_block_file(block, chunk.offset, chunk.length)
                        .ok()
                        .flatten()
                        == Some(chunk_bytes(block, i))
                });
            if !intact {
                let listed = node.block(block).ok().flatten();
                let file = node.block_file_len(block).ok().flatten();
                return Err(violation(
                    LIVE_BLOCKS_PRESENT,
                    format!(
                        "{} block {block}: metadata lists {} of {chunks} chunk(s), file {}",
                        node.datanode(),
                        listed.map_or("none".to_owned(), |b| b.chunks.len().to_string()),
                        file.map_or("absent".to_owned(), |l| format!("of {l} byte(s)"))
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The replica's data checksum in memory, in the database and in the tree file agree
/// (HDDS-16808): the value reported to SCM and kept for a restart follows the tree.
pub fn data_checksum_follows_the_tree(node: &ReplicaNode) -> Result<(), Violation> {
    let views = node
        .container()
        .and_then(|c| c.checksum_views())
        .map_err(setup)?;
    if views.agree() {
        return Ok(());
    }
    Err(violation(
        DATA_CHECKSUM_FOLLOWS_TREE,
        format!("{}: {views:?}", node.id()),
    ))
}

/// All replicas' tree files have the same root (reconciliation converges).
pub fn replicas_agree_on_the_data_checksum<R: KeyValueContainerApi>(
    nodes: &[R],
) -> Result<(), Violation> {
    let mut roots = Vec::new();
    for node in nodes {
        let root = node.data_checksum().map_err(setup)?;
        roots.push((node.datanode(), root));
    }
    if roots.windows(2).any(|w| w[0].1 != w[1].1) {
        return Err(violation(
            "replicas agree on the data checksum after a full reconcile round",
            format!("{roots:?}"),
        ));
    }
    Ok(())
}

/// [`data_checksum_follows_the_tree`] on every replica of `nodes`, and
/// [`replicas_agree_on_the_data_checksum`].
pub fn data_checksums_agree(nodes: &[ReplicaNode]) -> Result<(), Violation> {
    for node in nodes {
        data_checksum_follows_the_tree(node)?;
    }
    replicas_agree_on_the_data_checksum(nodes)
}

/// The property [`replica_healthy`] checks.
pub const REPLICA_HEALTHY: &str = "no replica marked UNHEALTHY by the race";

/// The replica was not marked UNHEALTHY.
pub fn replica_healthy<R: KeyValueContainerApi>(node: &R) -> Result<(), Violation> {
    let state = node.state().map_err(setup)?;
    if state == ContainerState::Unhealthy {
        return Err(violation(
            REPLICA_HEALTHY,
            format!("{} is UNHEALTHY", node.datanode()),
        ));
    }
    Ok(())
}
