//! Containers and pipelines as the SCM's replicated tables hold them (`ContainerInfo`,
//! `Pipeline`).

use crate::hdds::ids::{ContainerId, DatanodeId, PipelineId};

/// A write pipeline: the datanodes a container's replicas go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    /// Its id.
    pub id: PipelineId,
    /// Its datanodes, in order.
    pub nodes: Vec<DatanodeId>,
}

/// Lifecycle of a container in SCM (the states used here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LifeCycleState {
    /// Accepting writes.
    Open,
    /// Closed.
    Closed,
    /// Every replica reported empty: each is being deleted (`DELETING`).
    Deleting,
    /// No replica is left (`DELETED`).
    Deleted,
}

/// A container as the replicated container table holds it (`ContainerInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerInfo {
    /// Its id.
    pub id: ContainerId,
    /// Its state.
    pub state: LifeCycleState,
    /// The pipeline it was allocated on.
    pub pipeline: PipelineId,
}
