//! Reconciliation of a replica with its peers (`KeyValueHandler.reconcileContainer`,
//! spec C.8).
//!
//! **The race (HDDS-16811).** Reconciliation pulls a block's chunks from a peer and
//! commits its metadata with no container lock, then finishes the writes: a deletion of
//! the block before or during its repair leaves it restored, or its metadata without file.
//! **The fix (part 2)** finishes the chunk writes (closing the cached handle) before the
//! commit, then commits under the container read lock only if the tree does not mark the
//! block deleted; otherwise the pulled chunks are removed and the block fails.
//!
//! Beyond the seed patch, and on by default: a peer error or a short read in the middle
//! of a block fails that block cleanly (no metadata, the pulled chunks removed); the commit
//! also requires the block file to hold the pulled data; and a block that a peer's tree
//! marks deleted while it is live here is deleted here too (HDDS-11765), under the
//! container write lock, recording the deletion in the tree before deleting.
//!
//! Callers run at most one reconciliation per container (the handler refuses a second,
//! as Ozone's replication supervisor does). Should two run all the same, removing what a
//! failed repair pulled never cuts below what is committed, so neither undoes the other.
//!
//! Not modelled: the container BCSID (step 5 of spec C.8) and the ICR sent at the end.

use std::collections::BTreeMap;
use std::fmt;

use super::config::ContainerBehavior;
use super::error::{ContainerError, PeerError};
use super::merkle::{self, ChunkMerkle, ContainerChecksumInfo, ContainerMerkleTree};
use super::replica::KeyValueContainer;
use super::store::{BlockData, ChunkInfo, MetadataBatch};
use crate::hdds::ids::{ContainerId, DatanodeId, LocalId};
use crate::sync::Arc;

/// A peer datanode as reconciliation sees it (the datanode-to-datanode client calls).
pub trait PeerDatanode: Send + Sync + fmt::Debug {
    /// The peer.
    fn id(&self) -> DatanodeId;
    /// The peer's tree file of `container` (`getContainerChecksumInfo`); `None` if the
    /// peer has no answer for it (the peer is skipped).
    fn checksum_info(&self, container: ContainerId) -> Result<Option<Vec<u8>>, PeerError>;
    /// The peer's metadata of `block` (opening a block stream).
    fn block(&self, container: ContainerId, block: LocalId) -> Result<BlockData, PeerError>;
    /// The bytes of `chunk` of `block` (at most its length).
    fn read_chunk(
        &self,
        container: ContainerId,
        block: LocalId,
        chunk: &ChunkInfo,
    ) -> Result<Vec<u8>, PeerError>;
}

/// How a datanode reaches its peers by id (`DNContainerOperationClient`): reconcile and
/// replicate commands name datanodes, not connections.
pub trait PeerDirectory: Send + Sync + fmt::Debug {
    /// The peer `datanode`, if this datanode can reach it.
    fn peer(&self, datanode: DatanodeId) -> Option<Arc<dyn PeerDatanode>>;
}

/// How the repair of one block ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockRepair {
    /// Metadata committed with every chunk asked for.
    Repaired {
        /// Chunks pulled.
        chunks: usize,
    },
    /// Metadata committed, but not every chunk could be pulled (legacy behavior only).
    Partial {
        /// Chunks pulled.
        chunks: usize,
    },
    /// Nothing to do: no chunk pulled and none local.
    Skipped,
    /// The block failed; what was committed is said by the error.
    Failed(ContainerError),
}

/// What reconciliation with one peer did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerRound {
    /// The peer.
    pub peer: DatanodeId,
    /// Per block, how its repair ended.
    pub blocks: BTreeMap<LocalId, BlockRepair>,
    /// Blocks adopted as deleted from the peer.
    pub adopted_deleted: Vec<LocalId>,
    /// Blocks that were live here and deleted because the peer had deleted them.
    pub applied_peer_deletions: Vec<LocalId>,
}

/// What a reconciliation did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReconcileReport {
    /// Completed rounds, in peer order.
    pub rounds: Vec<PeerRound>,
    /// Peers whose round failed, with the error (the next peer was tried).
    pub peer_failures: Vec<(DatanodeId, ContainerError)>,
}

impl ReconcileReport {
    /// Blocks whose metadata was committed.
    pub fn committed(&self) -> Vec<LocalId> {
        self.rounds
            .iter()
            .flat_map(|r| r.blocks.iter())
            .filter(|(_, outcome)| {
                matches!(
                    outcome,
                    BlockRepair::Repaired { .. } | BlockRepair::Partial { .. }
                )
            })
            .map(|(id, _)| *id)
            .collect()
    }
}

/// `reconcileContainerInternal`: reconciles `container` with each of `peers` in turn.
/// Takes no container lock except the fixed commit's read lock (and the write lock to
/// apply a peer's deletion). Not deduplicated here: the
/// [handler](super::handler::KeyValueHandler) runs at most one per container.
pub fn reconcile_container(
    container: &KeyValueContainer,
    peers: &[Arc<dyn PeerDatanode>],
) -> Result<ReconcileReport, ContainerError> {
    container.check_closed_for_repair()?;
    let mut latest = Arc::new(container.checksums().read()?);
    if !latest.has_data_checksum() {
        latest = container.update_checksum_from_metadata()?;
    }
    let mut report = ReconcileReport::default();
    for peer in peers {
        match reconcile_with_peer(container, peer.as_ref(), &latest) {
            Ok((round, updated)) => {
                latest = updated;
                report.rounds.push(round);
            }
            Err(error) => report.peer_failures.push((peer.id(), error)),
        }
    }
    Ok(report)
}

fn reconcile_with_peer(
    container: &KeyValueContainer,
    peer: &dyn PeerDatanode,
    latest: &ContainerChecksumInfo,
) -> Result<(PeerRound, Arc<ContainerChecksumInfo>), ContainerError> {
    let id = container.id();
    let mut round = PeerRound {
        peer: peer.id(),
        blocks: BTreeMap::new(),
        adopted_deleted: Vec::new(),
        applied_peer_deletions: Vec::new(),
    };
    let Some(bytes) = peer.checksum_info(id)? else {
        return Ok((round, Arc::new(latest.clone())));
    };
    if bytes.is_empty() {
        return Err(ContainerError::EmptyPeerTree {
            peer: peer.id(),
            container: id,
        });
    }
    let peer_info = merkle::decode(&bytes).map_err(|source| ContainerError::MalformedTreeFile {
        container: id,
        source,
    })?;
    let config = container.config();
    let report = merkle::diff(latest, &peer_info, config.apply_peer_deletions)?;
    let mut writer = latest.tree.clone();
    let mut work: Vec<(LocalId, Vec<ChunkMerkle>)> = report
        .missing_blocks
        .iter()
        .map(|b| (b.local_id, b.chunks.values().copied().collect()))
        .collect();
    work.extend(report.missing_chunks.clone());
    work.extend(report.corrupt_chunks.clone());
    for (block, chunks) in work {
        let outcome = reconcile_chunks_per_block(container, peer, block, &chunks, &mut writer);
        round.blocks.insert(block, outcome);
    }
    for (block, checksum) in &report.diverged_deleted {
        if config.apply_peer_deletions && apply_peer_deletion(container, *block, *checksum)? {
            round.applied_peer_deletions.push(*block);
        }
        writer.set_deleted_block(*block, *checksum);
        round.adopted_deleted.push(*block);
    }
    let updated = container.update_and_get_container_checksum(&writer)?;
    Ok((round, updated))
}

/// HDDS-11765: the peer's tree witnessed the deletion of a block that is live here.
/// Under the write lock: records the deletion in the tree (with the peer's `checksum`),
/// then deletes the metadata, then the file; true if there was anything. The tree comes
/// first because it is the only record of a deletion: a deletion the tree missed would be
/// copied back by the next reconciliation with a peer that still has the block. In this
/// order a failure at any step leaves the deletion recorded, or nothing done, and never
/// metadata without its file. A replica left without blocks is marked empty (spec C.10),
/// as the deleting round marks it: SCM deletes a container only once every replica
/// reports empty.
fn apply_peer_deletion(
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
    if meta.is_some() {
        store
            .commit(MetadataBatch {
                delete_blocks: vec![block],
                ..MetadataBatch::default()
            })
            .map_err(ContainerError::store(id))?;
    }
    store
        .delete_block_file(block)
        .map_err(ContainerError::store(id))?;
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

/// `reconcileChunksPerBlock`: pulls `wanted` chunks of `block` from `peer`, writes them,
/// and commits the block's metadata as the replica's behavior says.
pub fn reconcile_chunks_per_block(
    container: &KeyValueContainer,
    peer: &dyn PeerDatanode,
    block: LocalId,
    wanted: &[ChunkMerkle],
    writer: &mut ContainerMerkleTree,
) -> BlockRepair {
    let id = container.id();
    let store = container.store();
    let fixed = container.config().behavior == ContainerBehavior::Fixed;
    let local_meta = match store.get_block(block) {
        Ok(meta) => meta,
        Err(source) => {
            return BlockRepair::Failed(ContainerError::Store {
                container: id,
                source,
            });
        }
    };
    let mut local: BTreeMap<u64, ChunkInfo> = local_meta
        .as_ref()
        .map(BlockData::chunks_by_offset)
        .unwrap_or_default();
    let peer_block = match peer.block(id, block) {
        Ok(data) => data.chunks_by_offset(),
        Err(error) => return BlockRepair::Failed(error.into()),
    };
    let mut pulled: Vec<ChunkInfo> = Vec::new();
    // A write that failed may still have created the file.
    let mut attempted_write = false;
    let mut incomplete: Option<ContainerError> = None;
    let mut wanted: Vec<&ChunkMerkle> = wanted.iter().collect();
    wanted.sort_by_key(|c| c.offset);
    for chunk in wanted {
        let offset = chunk.offset;
        if offset != 0 {
            let contiguous = local
                .range(..offset)
                .next_back()
                .is_some_and(|(_, below)| below.end() == offset);
            if !contiguous {
                incomplete = Some(incomplete_repair(
                    id,
                    block,
                    format!("hole before offset {offset}"),
                ));
                break;
            }
        }
        if !chunk.checksum_matches {
            continue;
        }
        let Some(info) = peer_block.get(&offset).cloned() else {
            incomplete = Some(incomplete_repair(
                id,
                block,
                format!("peer has no chunk at {offset}"),
            ));
            break;
        };
        if let Some(existing) = local.get(&offset)
            && existing.length != info.length
        {
            incomplete = Some(ContainerError::ChunkLengthMismatch {
                container: id,
                block,
                offset,
                local: existing.length,
                peer: info.length,
            });
            break;
        }
        let data = match peer.read_chunk(id, block, &info) {
            Ok(data) if data.len() as u64 == info.length => data,
            Ok(data) => {
                incomplete = Some(ContainerError::ShortRead {
                    container: id,
                    block,
                    offset,
                    expected: info.length,
                    got: data.len() as u64,
                });
                break;
            }
            Err(error) => {
                incomplete = Some(error.into());
                break;
            }
        };
        attempted_write = true;
        if let Err(error) = container.write_chunk_for_closed_container(block, offset, &data) {
            incomplete = Some(error);
            break;
        }
        local.insert(offset, info.clone());
        if !fixed {
            writer.add_chunks(block, true, std::slice::from_ref(&info));
        }
        pulled.push(info);
    }
    if fixed {
        if let Some(error) = incomplete {
            if attempted_write {
                remove_pulled(container, block);
            }
            return BlockRepair::Failed(error);
        }
        if local.is_empty() {
            return BlockRepair::Skipped;
        }
        let data = BlockData::new(block, local.into_values());
        commit_fixed(container, block, data, pulled, writer)
    } else {
        if local.is_empty() {
            return match incomplete {
                Some(error) => BlockRepair::Failed(error),
                None => BlockRepair::Skipped,
            };
        }
        let data = BlockData::new(block, local.into_values());
        commit_legacy(container, block, data, pulled.len(), incomplete)
    }
}

fn incomplete_repair(container: ContainerId, block: LocalId, reason: String) -> ContainerError {
    ContainerError::IncompleteRepair {
        container,
        block,
        reason,
    }
}

/// The seed's order: commit the metadata with no lock, then finish the writes.
fn commit_legacy(
    container: &KeyValueContainer,
    block: LocalId,
    data: BlockData,
    pulled: usize,
    incomplete: Option<ContainerError>,
) -> BlockRepair {
    if let Err(error) = container.put_block_for_closed_container(data) {
        return BlockRepair::Failed(error);
    }
    if let Err(error) = container.finish_write_chunks(block) {
        return BlockRepair::Failed(error);
    }
    match incomplete {
        Some(_) => BlockRepair::Partial { chunks: pulled },
        None => BlockRepair::Repaired { chunks: pulled },
    }
}

/// Removes what a failed repair wrote: cuts the block file back to the end of the block's
/// metadata as committed now, and unlinks it when the block has none. What was committed
/// when the repair started is no guide: another repair of the block may have committed
/// more since, and a deletion may have removed the metadata (then the tree marks the block
/// deleted, and nothing of the file is wanted). Under the write lock, because commits run
/// under the read lock: a reader's look at the metadata could be followed by another
/// repair's commit of the bytes it then cuts. Best effort: bytes past the committed end
/// have no metadata and no reader sees them; if the metadata cannot be read the file is
/// left alone, since a stray tail is harmless and cutting committed data is not.
fn remove_pulled(container: &KeyValueContainer, block: LocalId) {
    let _write = container.write_lock();
    let store = container.store();
    if let Ok(committed) = store.get_block(block) {
        let keep = committed.as_ref().map_or(0, BlockData::end);
        let _ = store.truncate_block_file(block, keep);
    }
}

/// HDDS-16811 part 2: finish the writes, then under the read lock commit only if the tree
/// does not mark the block deleted; otherwise the pulled chunks are removed.
///
/// Beyond the seed's patch, the commit also requires the block file to hold every chunk it
/// lists. The tree check alone misses a deletion that unlinked the file after the writes
/// were finished but recorded nothing: a deleting round whose tree write failed, which
/// ends the round with the files gone and no deleted entry (spec C.6 step 4). Ozone's
/// patch checks only the tree and has the same gap: it commits metadata without a file.
fn commit_fixed(
    container: &KeyValueContainer,
    block: LocalId,
    data: BlockData,
    pulled: Vec<ChunkInfo>,
    writer: &mut ContainerMerkleTree,
) -> BlockRepair {
    let id = container.id();
    let store = container.store();
    if let Err(error) = container.finish_write_chunks(block) {
        // "Chunk file not found": the file was unlinked while its handle was cached, and
        // the chunks went to the orphan. Nothing to remove, nothing committed.
        return BlockRepair::Failed(error);
    }
    let read = container.read_lock();
    let refused = match container.tree_marks_deleted(block) {
        Ok(true) => ContainerError::DeletedDuringRepair {
            container: id,
            block,
        },
        Ok(false) => {
            let needed = data.end();
            match store.block_file_len(block) {
                Ok(Some(len)) if len >= needed => {
                    match container.put_block_for_closed_container(data) {
                        Ok(()) => {
                            drop(read);
                            writer.add_chunks(block, true, &pulled);
                            return BlockRepair::Repaired {
                                chunks: pulled.len(),
                            };
                        }
                        Err(error) => error,
                    }
                }
                Ok(found) => ContainerError::BlockFileLostDuringRepair {
                    container: id,
                    block,
                    needed,
                    found,
                },
                Err(source) => ContainerError::Store {
                    container: id,
                    source,
                },
            }
        }
        Err(error) => error,
    };
    drop(read);
    remove_pulled(container, block);
    BlockRepair::Failed(refused)
}
