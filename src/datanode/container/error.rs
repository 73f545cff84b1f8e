//! What a container replica and its peers refuse (`ContainerError`, `PeerError`).

use super::merkle::{ContainerIdMismatch, TreeDecodeError};
use super::store::StoreError;
use super::volume::VolumeError;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, DatanodeId, LocalId};

/// What a peer datanode answered instead of data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerError {
    /// The peer does not answer.
    #[error("{peer} unreachable: {reason}")]
    Unreachable {
        /// The peer.
        peer: DatanodeId,
        /// Why.
        reason: String,
    },
    /// The peer answered with an error of its own.
    #[error("{peer} refused: {source}")]
    Refused {
        /// The peer.
        peer: DatanodeId,
        /// Its error.
        #[source]
        source: Box<ContainerError>,
    },
}

/// What the container replica refuses, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContainerError {
    /// No replica of the container on this datanode.
    #[error("container {container} not found")]
    UnknownContainer {
        /// The container.
        container: ContainerId,
    },
    /// A replica of the container already exists here.
    #[error("container {container} already exists")]
    ContainerExists {
        /// The container.
        container: ContainerId,
    },
    /// A non-force delete of an OPEN replica (`DELETE_ON_OPEN_CONTAINER`).
    #[error("container {container} is open: only a force delete removes it")]
    DeleteOnOpenContainer {
        /// The container.
        container: ContainerId,
    },
    /// A non-force delete of a replica with blocks (`DELETE_ON_NON_EMPTY_CONTAINER`).
    #[error("container {container} has {blocks} block(s): only a force delete removes it")]
    DeleteOnNonEmptyContainer {
        /// The container.
        container: ContainerId,
        /// Its block count.
        blocks: u64,
    },
    /// No source of a replication answered; nothing was created here.
    #[error("container {container}: no replication source answered ({sources:?})")]
    NoReplicationSource {
        /// The container.
        container: ContainerId,
        /// The sources tried.
        sources: Vec<DatanodeId>,
    },
    /// The operation is not allowed in the replica's state.
    #[error("container {container} is {state:?}: {operation} not allowed")]
    InvalidState {
        /// The container.
        container: ContainerId,
        /// Its state.
        state: ContainerState,
        /// What was refused.
        operation: &'static str,
    },
    /// A state transition the replica's state machine does not have.
    #[error("container {container}: no transition from {from:?} to {to:?}")]
    InvalidTransition {
        /// The container.
        container: ContainerId,
        /// Current state.
        from: ContainerState,
        /// Requested state.
        to: ContainerState,
    },
    /// The block has no metadata here.
    #[error("container {container}: block {block} not found")]
    UnknownBlock {
        /// The container.
        container: ContainerId,
        /// The block.
        block: LocalId,
    },
    /// A chunk not in the block's metadata, or a read beyond it.
    #[error(
        "container {container}: block {block} has no chunk at offset {offset} of length {length}"
    )]
    UnknownChunk {
        /// The container.
        container: ContainerId,
        /// The block.
        block: LocalId,
        /// The offset asked for.
        offset: u64,
        /// The length asked for.
        length: u64,
    },
    /// A read returned fewer bytes than the chunk holds.
    #[error(
        "container {container}: block {block} chunk at {offset}: read {got} of {expected} bytes"
    )]
    ShortRead {
        /// The container.
        container: ContainerId,
        /// The block.
        block: LocalId,
        /// The chunk's offset.
        offset: u64,
        /// Its length.
        expected: u64,
        /// Bytes read.
        got: u64,
    },
    /// A local and a peer chunk at the same offset differ in length
    /// (`CHUNK_FILE_INCONSISTENCY`).
    #[error(
        "container {container}: block {block} chunk at {offset}: local length {local}, peer length {peer}"
    )]
    ChunkLengthMismatch {
        /// The container.
        container: ContainerId,
        /// The block.
        block: LocalId,
        /// The offset.
        offset: u64,
        /// The local length.
        local: u64,
        /// The peer's length.
        peer: u64,
    },
    /// Reconciliation found the block deleted when about to commit it (HDDS-16811 fix,
    /// part 2): the pulled chunks were removed, nothing was committed.
    #[error("container {container}: block {block} was deleted during its repair")]
    DeletedDuringRepair {
        /// The container.
        container: ContainerId,
        /// The block.
        block: LocalId,
    },
    /// Reconciliation found the block file missing, or shorter than the data it pulled,
    /// when about to commit the block (beyond the seed's patch, which checks only the
    /// tree): the pulled chunks were removed, nothing was committed.
    #[error(
        "container {container}: block {block} file lost during its repair: {needed} byte(s) pulled, file {}",
        found.map_or_else(|| "absent".to_owned(), |len| format!("of {len} byte(s)"))
    )]
    BlockFileLostDuringRepair {
        /// The container.
        container: ContainerId,
        /// The block.
        block: LocalId,
        /// The end of the block's chunks, pulled and local.
        needed: u64,
        /// The file's length, `None` if there was no file.
        found: Option<u64>,
    },
    /// A reconciliation of the container is already running on this datanode; the request
    /// was dropped, as Ozone's replication supervisor drops a task equal to one in flight.
    #[error("container {container}: a reconciliation is already in progress")]
    ReconciliationInProgress {
        /// The container.
        container: ContainerId,
    },
    /// The repair of a block stopped before all of its chunks were pulled.
    #[error("container {container}: block {block} repair incomplete: {reason}")]
    IncompleteRepair {
        /// The container.
        container: ContainerId,
        /// The block.
        block: LocalId,
        /// Why.
        reason: String,
    },
    /// The tree file is not a tree file.
    #[error("container {container}: malformed checksum tree file: {source}")]
    MalformedTreeFile {
        /// The container.
        container: ContainerId,
        /// What is wrong with it.
        #[source]
        source: TreeDecodeError,
    },
    /// A peer's tree belongs to another container.
    #[error(transparent)]
    ContainerIdMismatch(#[from] ContainerIdMismatch),
    /// The peer returned no tree (empty payload).
    #[error("{peer} returned an empty checksum tree for container {container}")]
    EmptyPeerTree {
        /// The peer.
        peer: DatanodeId,
        /// The container.
        container: ContainerId,
    },
    /// A peer failed.
    #[error(transparent)]
    Peer(#[from] PeerError),
    /// The storage failed.
    #[error("container {container}: {source}")]
    Store {
        /// The container.
        container: ContainerId,
        /// The failure.
        #[source]
        source: StoreError,
    },
    /// The volume holding the replicas refused or failed.
    #[error(transparent)]
    Volume(#[from] VolumeError),
    /// A delete transaction that cannot be stored: id 0 (the SCM's ids start at 1), or an
    /// id stored already with another block list (storing it would replace a list the SCM
    /// was told is stored, and its blocks would never be deleted).
    #[error("container {container}: delete transaction {tx_id} refused: {reason}")]
    InvalidDeleteTransaction {
        /// The container.
        container: ContainerId,
        /// The transaction id.
        tx_id: u64,
        /// Why.
        reason: &'static str,
    },
    /// A command names peers, but this datanode has no way to reach peers.
    #[error("no peer directory: cannot reach {peer}")]
    NoPeerDirectory {
        /// The first peer named.
        peer: DatanodeId,
    },
}

impl ContainerError {
    /// Wraps a storage failure of `container`.
    pub fn store(container: ContainerId) -> impl FnOnce(StoreError) -> ContainerError {
        move |source| ContainerError::Store { container, source }
    }
}
