//! What reconciliation talks to and reports: a peer datanode, the directory that reaches
//! peers by id, and how each block's repair and each peer's round ended.

use std::collections::BTreeMap;
use std::fmt;

use super::super::error::ContainerError;
use super::super::error::PeerError;
use super::super::store::{BlockData, ChunkInfo};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, DatanodeId, LocalId};
use crate::sync::Arc;

/// A peer datanode as reconciliation sees it (the datanode-to-datanode client calls).
pub trait PeerDatanode: Send + Sync + fmt::Debug {
    /// The peer.
    fn id(&self) -> DatanodeId;
    /// The state of the peer's replica of `container` (the container descriptor a
    /// replication source sends with the data).
    fn container_state(&self, container: ContainerId) -> Result<ContainerState, PeerError>;
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
    /// Metadata committed, but not every chunk could be pulled (the legacy code and the
    /// seed's patch; the hardened code fails such a block).
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

/// Datanode ids as events show them: `[dn2, dn3]`.
pub(super) fn ids_text(ids: impl Iterator<Item = DatanodeId>) -> String {
    let ids: Vec<String> = ids.map(|id| id.to_string()).collect();
    format!("[{}]", ids.join(", "))
}
