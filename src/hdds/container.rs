//! A container replica as the protocol names it: its state on a datanode
//! (`ContainerDataProto.State`) and the entry a datanode sends for it in a container
//! report (`ContainerReplicaProto`).

use super::ids::{ContainerId, DatanodeId};

/// Replica states on the datanode (`ContainerDataProto.State`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContainerState {
    /// Accepting writes.
    Open,
    /// Closing; no new blocks.
    Closing,
    /// Closed without the Ratis quorum.
    QuasiClosed,
    /// Closed.
    Closed,
    /// Failed a scan.
    Unhealthy,
    /// Invalid (not used by the transitions modelled here).
    Invalid,
    /// Deleted.
    Deleted,
    /// Being rebuilt by reconstruction; accepts writes like OPEN.
    Recovering,
}

impl ContainerState {
    /// CLOSED, QUASI_CLOSED or UNHEALTHY: the states in which a replica's data is fixed,
    /// so it may be served to a peer, scanned, and repaired by reconciliation.
    pub fn is_closed_for_data(self) -> bool {
        matches!(
            self,
            ContainerState::Closed | ContainerState::QuasiClosed | ContainerState::Unhealthy
        )
    }
}

/// One replica in a datanode's container report (`ContainerReplicaProto`, the fields
/// used here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContainerReplicaReport {
    /// The container.
    pub container: ContainerId,
    /// The replica's state.
    pub state: ContainerState,
    /// Blocks with metadata (`keyCount`).
    pub block_count: u64,
    /// Bytes the blocks' chunks cover (`used`).
    pub used_bytes: u64,
    /// The replica's data checksum, 0 when none was computed (`dataChecksum`).
    pub data_checksum: u64,
    /// The highest block commit sequence id among the blocks the replica committed
    /// (`blockCommitSequenceId`, BCSID); block deletion does not lower it.
    pub sequence_id: u64,
    /// The datanode on which the replica was created (`originNodeId`).
    pub origin: DatanodeId,
    /// The replica was marked empty: its block deleting service found no block left, or it
    /// was loaded closed with none (`isEmpty`, sticky).
    pub is_empty: bool,
}

impl ContainerReplicaReport {
    /// A report of a replica in `state`, created on `origin`, with no blocks, no data
    /// checksum and sequence id 0, not marked empty: what a datanode sends right after it
    /// created the container.
    pub fn new(container: ContainerId, state: ContainerState, origin: DatanodeId) -> Self {
        Self {
            container,
            state,
            block_count: 0,
            used_bytes: 0,
            data_checksum: 0,
            sequence_id: 0,
            origin,
            is_empty: false,
        }
    }
}
