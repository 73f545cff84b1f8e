//! Containers and pipelines as the SCM's replicated tables hold them (`ContainerInfo`,
//! `Pipeline`), and the container lifecycle (`HddsProtos.LifeCycleState` with the
//! transitions of `ContainerStateManagerImpl`).

use crate::hdds::ids::{ContainerId, DatanodeId, PipelineId};

/// A write pipeline: the datanodes a container's replicas go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    /// Its id.
    pub id: PipelineId,
    /// Its datanodes, in order.
    pub nodes: Vec<DatanodeId>,
}

/// Lifecycle of a container in SCM (`HddsProtos.LifeCycleState`, RECOVERING aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LifeCycleState {
    /// Accepting writes.
    Open,
    /// The SCM asked its replicas to close (`FINALIZE`); they may still take writes
    /// already allocated.
    Closing,
    /// A replica reported QUASI_CLOSED: closed without its Ratis pipeline, so the
    /// replicas may disagree on the last blocks (`QUASI_CLOSE`).
    QuasiClosed,
    /// A replica reported CLOSED with the container's sequence id (`CLOSE`,
    /// `FORCE_CLOSE`).
    Closed,
    /// Every replica reported empty: each is being deleted (`DELETE`).
    Deleting,
    /// No replica is left (`CLEANUP`).
    Deleted,
}

impl LifeCycleState {
    /// OPEN or CLOSING (`ContainerInfo.isOpen`): its replicas may still take blocks, so
    /// its delete transactions wait.
    pub fn is_open(self) -> bool {
        matches!(self, LifeCycleState::Open | LifeCycleState::Closing)
    }

    /// Whether `ContainerStateManagerImpl`'s state machine moves a container from `self`
    /// to `to` by an ordinary event: FINALIZE (OPEN → CLOSING), QUASI_CLOSE (CLOSING →
    /// QUASI_CLOSED), CLOSE (CLOSING → CLOSED), FORCE_CLOSE (QUASI_CLOSED → CLOSED),
    /// DELETE (QUASI_CLOSED or CLOSED → DELETING), CLEANUP (DELETING → DELETED). Any other
    /// move (backwards, or skipping a state) is refused; the replicated update then
    /// leaves the container as it is, as an event that does not apply does upstream.
    pub fn can_move_to(self, to: LifeCycleState) -> bool {
        use LifeCycleState as S;
        matches!(
            (self, to),
            (S::Open, S::Closing)
                | (S::Closing, S::QuasiClosed | S::Closed)
                | (S::QuasiClosed, S::Closed | S::Deleting)
                | (S::Closed, S::Deleting)
                | (S::Deleting, S::Deleted)
        )
    }

    /// Whether `ContainerManager.transitionDeletingOrDeletedToTargetState` brings a
    /// container back from `self` to `to` (HDDS-11136, HDDS-12421): only from DELETING or
    /// DELETED, only to CLOSED or QUASI_CLOSED.
    pub fn can_come_back_to(self, to: LifeCycleState) -> bool {
        use LifeCycleState as S;
        matches!(self, S::Deleting | S::Deleted) && matches!(to, S::Closed | S::QuasiClosed)
    }
}

/// A container as the replicated container table holds it (`ContainerInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ContainerInfo {
    /// Its id.
    pub id: ContainerId,
    /// Its state.
    pub state: LifeCycleState,
    /// The pipeline it was allocated on.
    pub pipeline: PipelineId,
    /// The highest block commit sequence id a healthy replica reported
    /// (`ContainerInfo.sequenceId`, raised by `updateContainerStats` on every SCM as
    /// reports arrive). Kept in the SCM's memory only: a restarted SCM or an installed
    /// snapshot starts from 0 and learns it again from the next reports.
    pub sequence_id: u64,
}

impl ContainerInfo {
    /// A new OPEN container on `pipeline`, sequence id 0.
    pub fn open(id: ContainerId, pipeline: PipelineId) -> Self {
        Self {
            id,
            state: LifeCycleState::Open,
            pipeline,
            sequence_id: 0,
        }
    }
}
