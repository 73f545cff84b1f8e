//! The checksum tree file of one container (`ContainerChecksumTreeManager`): the merkle
//! tree of its blocks, with the blocks it has deleted, that reconciliation compares
//! between replicas.
//!
//! **The race (HDDS-16808).** The block deleting service's tree write did not refresh the
//! data checksum kept in memory and in the database, so they stayed on the older root.
//! **The fix**: every write runs an `after_write` step that refreshes both from the new
//! root. Beyond the patch (`refresh_checksum_in_tree_write`), that step runs before the
//! writer lock is released, so two concurrent writes cannot leave the older root in place;
//! the generation counter (`tree_generation_check`) spares the per-block commit check a
//! re-read; and `deletion_records_in_database` puts back deletions the tree file lost.

use super::error::ContainerError;
use super::merkle::{self, ContainerChecksumInfo, ContainerMerkleTree};
use super::store::ContainerStore;
use crate::hdds::ids::{ContainerId, DatanodeId, LocalId};
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::{Arc, Mutex};

/// The tree file of one container (`ContainerChecksumTreeManager`, one stripe per
/// container). Writers serialise on a lock; readers read the file, which writers replace
/// atomically.
#[derive(Debug)]
pub struct ContainerChecksumTreeManager {
    datanode: DatanodeId,
    container: ContainerId,
    store: Arc<dyn ContainerStore>,
    generation_check: bool,
    refresh_in_write: bool,
    restore_deletions: bool,
    writer: Mutex<()>,
    /// Tree writes so far (the write counter that the seed proposes as a follow-up).
    generation: AtomicU64,
    /// The tree as of a generation, from the last write or read.
    cache: Mutex<Option<(u64, Arc<ContainerChecksumInfo>)>>,
}

impl ContainerChecksumTreeManager {
    /// The manager of `container`'s tree file in `store`, on `datanode`. With
    /// `generation_check`, [`read_latest`](Self::read_latest) re-reads the file only after
    /// a write; with `refresh_in_write`, [`write`](Self::write) runs its `after_write`
    /// before releasing the writer lock (else after); with `restore_deletions`, a write
    /// puts back the deletions the database records and the tree lacks.
    pub fn new(
        datanode: DatanodeId,
        container: ContainerId,
        store: Arc<dyn ContainerStore>,
        [generation_check, refresh_in_write, restore_deletions]: [bool; 3],
    ) -> Self {
        Self {
            datanode,
            container,
            store,
            generation_check,
            refresh_in_write,
            restore_deletions,
            writer: Mutex::new(()),
            generation: AtomicU64::new(0),
            cache: Mutex::new(None),
        }
    }

    /// Tree writes since the manager was created.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Reads and parses the tree file (`read`): no file is an empty tree; a file that does
    /// not parse is [`ContainerError::MalformedTreeFile`].
    pub fn read(&self) -> Result<ContainerChecksumInfo, ContainerError> {
        let bytes = self
            .store
            .read_tree_file()
            .map_err(ContainerError::store(self.container))?;
        match bytes {
            None => Ok(ContainerChecksumInfo::empty(self.container)),
            Some(bytes) => {
                merkle::decode(&bytes).map_err(|source| ContainerError::MalformedTreeFile {
                    container: self.container,
                    source,
                })
            }
        }
    }

    /// The current tree: with the generation check, the cached tree when no write happened
    /// since it was cached; otherwise (or without the check) a fresh [`read`](Self::read).
    pub fn read_latest(&self) -> Result<Arc<ContainerChecksumInfo>, ContainerError> {
        if !self.generation_check {
            return Ok(Arc::new(self.read()?));
        }
        // Loaded before the file is read: a write in between leaves the cache one
        // generation behind, which only costs a read next time.
        let generation = self.generation.load(Ordering::Acquire);
        if let Some((cached, info)) = self.cache.lock().as_ref()
            && *cached == generation
        {
            return Ok(Arc::clone(info));
        }
        let info = Arc::new(self.read()?);
        let mut cache = self.cache.lock();
        if cache
            .as_ref()
            .is_none_or(|(cached, _)| *cached <= generation)
        {
            *cache = Some((generation, Arc::clone(&info)));
        }
        Ok(info)
    }

    /// `write`: under the writer lock, reads the current tree (a read error starts from an
    /// empty tree, as Ozone does), builds the new one with `update`, writes it (temporary
    /// file and rename), then runs `after_write` on it, before the lock is released when
    /// the manager refreshes in the write, after it otherwise. Emits `tree written` (or
    /// `tree write failed`) with `by`, under the writer lock, so that a story orders the
    /// tree writes as they happened.
    pub fn write(
        &self,
        by: TreeWriter,
        update: impl FnOnce(&ContainerMerkleTree) -> ContainerMerkleTree,
        after_write: impl FnOnce(&ContainerChecksumInfo) -> Result<(), ContainerError>,
    ) -> Result<Arc<ContainerChecksumInfo>, ContainerError> {
        let writer = self.writer.lock();
        let current = match self.read_latest() {
            Ok(info) => info,
            Err(_) => Arc::new(ContainerChecksumInfo::empty(self.container)),
        };
        let current = self.with_recorded_deletions(&current.tree)?;
        let info = ContainerChecksumInfo {
            container: self.container,
            tree: update(&current),
        };
        if let Err(error) = self.store.write_tree_file(&merkle::encode(&info)) {
            crate::events::debug!(
                node = %self.datanode,
                container = self.container.0,
                by = %by,
                %error,
                "tree write failed"
            );
            return Err(ContainerError::store(self.container)(error));
        }
        let generation = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
        crate::events::debug!(
            node = %self.datanode,
            container = self.container.0,
            by = %by,
            root = %ChecksumText(info.tree.data_checksum()),
            deleted = ?deleted_blocks(&info.tree),
            "tree written"
        );
        let info = Arc::new(info);
        if self.generation_check {
            *self.cache.lock() = Some((generation, Arc::clone(&info)));
        }
        if !self.refresh_in_write {
            drop(writer);
        }
        after_write(&info)?;
        Ok(info)
    }
}

impl ContainerChecksumTreeManager {
    /// `tree` with every deletion the database records put back, when the manager
    /// restores them and the tree lacks one (its file was lost, or unreadable and the
    /// write started from an empty tree).
    fn with_recorded_deletions(
        &self,
        tree: &ContainerMerkleTree,
    ) -> Result<ContainerMerkleTree, ContainerError> {
        if !self.restore_deletions {
            return Ok(tree.clone());
        }
        let recorded = self
            .store
            .deleted_blocks()
            .map_err(ContainerError::store(self.container))?;
        let missing: Vec<_> = recorded
            .into_iter()
            .filter(|(block, _)| !tree.is_deleted(*block))
            .collect();
        if missing.is_empty() {
            return Ok(tree.clone());
        }
        crate::events::debug!(
            node = %self.datanode,
            container = self.container.0,
            restored = ?missing.iter().map(|(block, _)| *block).collect::<Vec<_>>(),
            "deletions restored to the tree"
        );
        let mut restored = tree.clone();
        for (block, checksum) in missing {
            restored.set_deleted_block(block, checksum);
        }
        if tree.data_checksum().is_some() {
            restored.compute_root();
        }
        Ok(restored)
    }
}

/// Who writes a tree file: the `by` of the `tree written` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeWriter {
    /// A tree built from block metadata (`updateAndGetContainerChecksumFromMetadata`).
    Metadata,
    /// Reconciliation with a peer, its repaired blocks and adopted deletions.
    Reconciliation,
    /// The on-demand scanner's observed tree.
    Scan,
    /// A round of the block deleting service (`addDeletedBlocks`).
    DeletingRound,
    /// A peer's deletion applied here (HDDS-11765).
    PeerDeletion,
}

impl std::fmt::Display for TreeWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Metadata => "metadata",
            Self::Reconciliation => "reconciliation",
            Self::Scan => "scan",
            Self::DeletingRound => "deleting round",
            Self::PeerDeletion => "peer deletion",
        })
    }
}

/// A data checksum as events show it: eight hex digits (a CRC32C), or `none`.
#[derive(Debug, Clone, Copy)]
pub(super) struct ChecksumText(pub(super) Option<u64>);

impl std::fmt::Display for ChecksumText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(checksum) => write!(f, "{checksum:08x}"),
            None => f.write_str("none"),
        }
    }
}

/// The blocks `tree` marks deleted, for the `tree written` event.
fn deleted_blocks(tree: &ContainerMerkleTree) -> Vec<LocalId> {
    tree.blocks()
        .iter()
        .filter(|(_, block)| block.deleted)
        .map(|(id, _)| *id)
        .collect()
}
