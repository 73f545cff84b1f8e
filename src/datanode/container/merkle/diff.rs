//! The diff of two checksum trees (`ContainerDiffReport`, built by
//! `ContainerChecksumTreeManager.diff`): what reconciliation must pull from a peer, and
//! which of the peer's deletions it adopts.
//!
//! **The race (HDDS-16811).** A block the local tree does not know is pulled from a peer
//! that has not deleted it yet; only a deleted entry in the local tree stops that.
//! **The fix** is the deleted entry ([`super::tree`]); the diff keeps Ozone's rules, and
//! beyond the seed (HDDS-11765) also reports a live local block the peer marks deleted.

use std::collections::BTreeMap;

use super::tree::{BlockMerkle, ChunkMerkle, ContainerChecksumInfo};
use crate::hdds::ids::{ContainerId, LocalId};
/// What reconciliation must do to converge on a peer (`ContainerDiffReport`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerDiffReport {
    /// Live blocks of the peer with no local entry: pulled whole.
    pub missing_blocks: Vec<BlockMerkle>,
    /// Healthy peer chunks at offsets the local live block lacks, per block.
    pub missing_chunks: BTreeMap<LocalId, Vec<ChunkMerkle>>,
    /// Healthy peer chunks where the local chunk is unhealthy and differs, per block.
    pub corrupt_chunks: BTreeMap<LocalId, Vec<ChunkMerkle>>,
    /// Blocks to adopt as deleted with the peer's checksum.
    pub diverged_deleted: Vec<(LocalId, u64)>,
    /// Peer chunks skipped because the peer itself marks them unhealthy.
    pub unhealthy_filtered: usize,
}

impl ContainerDiffReport {
    /// Whether nothing needs doing.
    pub fn is_empty(&self) -> bool {
        self.missing_blocks.is_empty()
            && self.missing_chunks.is_empty()
            && self.corrupt_chunks.is_empty()
            && self.diverged_deleted.is_empty()
    }
}

/// Two trees of different containers were compared (`CONTAINER_ID_MISMATCH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("checksum trees of different containers: local {local}, peer {peer}")]
pub struct ContainerIdMismatch {
    /// The local container.
    pub local: ContainerId,
    /// The peer's.
    pub peer: ContainerId,
}

/// Compares the local tree with a peer's (`ContainerChecksumTreeManager.diff`). With `witness_peer_deletions`
/// (HDDS-11765, beyond the seed) the block lists are walked even when the roots are
/// equal, and a local live block that the peer marks deleted is reported as diverged
/// deleted even with an equal checksum — the deleted flag is not hashed, so otherwise a
/// restored block is invisible.
pub fn diff(
    local: &ContainerChecksumInfo,
    peer: &ContainerChecksumInfo,
    witness_peer_deletions: bool,
) -> Result<ContainerDiffReport, ContainerIdMismatch> {
    if local.container != peer.container {
        return Err(ContainerIdMismatch {
            local: local.container,
            peer: peer.container,
        });
    }
    let mut report = ContainerDiffReport::default();
    let roots_equal =
        local.tree.data_checksum.is_some() && local.tree.data_checksum == peer.tree.data_checksum;
    if roots_equal && !witness_peer_deletions {
        return Ok(report);
    }
    for (id, theirs) in &peer.tree.blocks {
        let Some(ours) = local.tree.blocks.get(id) else {
            if theirs.deleted {
                report.diverged_deleted.push((*id, theirs.data_checksum));
            } else {
                report.missing_blocks.push(theirs.clone());
            }
            continue;
        };
        if ours.data_checksum == theirs.data_checksum {
            if witness_peer_deletions && !ours.deleted && theirs.deleted {
                report.diverged_deleted.push((*id, theirs.data_checksum));
            }
            continue;
        }
        match (ours.deleted, theirs.deleted) {
            (true, true) => {
                if ours.data_checksum < theirs.data_checksum {
                    report.diverged_deleted.push((*id, theirs.data_checksum));
                }
            }
            (true, false) => {}
            (false, true) => report.diverged_deleted.push((*id, theirs.data_checksum)),
            (false, false) => diff_chunks(*id, ours, theirs, &mut report),
        }
    }
    Ok(report)
}

fn diff_chunks(
    id: LocalId,
    ours: &BlockMerkle,
    theirs: &BlockMerkle,
    report: &mut ContainerDiffReport,
) {
    for (offset, peer_chunk) in &theirs.chunks {
        match ours.chunks.get(offset) {
            Some(local_chunk) => {
                if local_chunk.data_checksum != peer_chunk.data_checksum
                    && !local_chunk.checksum_matches
                {
                    if peer_chunk.checksum_matches {
                        report
                            .corrupt_chunks
                            .entry(id)
                            .or_default()
                            .push(*peer_chunk);
                    } else {
                        report.unhealthy_filtered += 1;
                    }
                }
            }
            None => {
                if peer_chunk.checksum_matches {
                    report
                        .missing_chunks
                        .entry(id)
                        .or_default()
                        .push(*peer_chunk);
                } else {
                    report.unhealthy_filtered += 1;
                }
            }
        }
    }
}
