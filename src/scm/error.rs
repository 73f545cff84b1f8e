//! Why an SCM refused a request (`ScmError`).

use super::container_info::LifeCycleState;
use super::ha::SubmitError;
use crate::hdds::ids::{ContainerId, DatanodeId, ScmId};

/// Why an SCM refused a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScmError {
    /// Only the leader (whose Ratis division is leader-ready) serves allocations.
    #[error("{scm} is not the leader")]
    NotLeader {
        /// The SCM asked.
        scm: ScmId,
    },
    /// Allocation is refused in safe mode (`SAFE_MODE_EXCEPTION`).
    #[error("SCM is in safe mode")]
    InSafeMode,
    /// The leader has not finished rebuilding its pending allocations for this term.
    #[error("SCM leader is not ready: pending allocations are being rebuilt")]
    NotReady,
    /// The OPEN pipeline chosen at random has no slot on one of its datanodes, or there is
    /// no OPEN pipeline (`FAILED_TO_ALLOCATE_CONTAINER`).
    #[error("no suitable open pipeline with enough space")]
    NoPipelineWithSpace,
    /// The replicated add-container did not report success; the reservation is kept
    /// because the entry may still commit (Ratis may commit a request it answered
    /// with an error).
    #[error("replicated add of {container} not confirmed: {reason}")]
    SubmitNotConfirmed {
        /// The container.
        container: ContainerId,
        /// What the log answered.
        reason: SubmitError,
    },
    /// A report or request from a datanode that is not registered.
    #[error("datanode {datanode} is not registered")]
    UnknownDatanode {
        /// The datanode.
        datanode: DatanodeId,
    },
    /// A request naming a container that is not in the table.
    #[error("container {container} is not in the table")]
    UnknownContainer {
        /// The container.
        container: ContainerId,
    },
    /// A container report naming containers SCM does not know; the known ones were applied.
    #[error("report from {datanode} names unknown containers {containers:?}")]
    UnknownContainers {
        /// The reporting datanode.
        datanode: DatanodeId,
        /// The unknown containers.
        containers: Vec<ContainerId>,
    },
    /// A reconcile asked for a container that is not CLOSED or QUASI_CLOSED, or that has a
    /// replica not CLOSED, QUASI_CLOSED or UNHEALTHY (`ReconciliationEligibilityHandler`).
    #[error("container {container} ({state:?}) is not eligible for reconciliation")]
    NotEligibleForReconciliation {
        /// The container.
        container: ContainerId,
        /// Its state in the table.
        state: LifeCycleState,
    },
    /// A replicate asked for a container that is not CLOSED or QUASI_CLOSED, or for a
    /// target that already holds a replica.
    #[error("container {container} ({state:?}) is not eligible for a replica on {target}")]
    NotEligibleForReplication {
        /// The container.
        container: ContainerId,
        /// Its state in the table.
        state: LifeCycleState,
        /// The datanode asked to hold the copy.
        target: DatanodeId,
    },
    /// A datanode's command queue is full (this crate bounds it; Ozone's grows).
    #[error("the command queue of {datanode} is full ({limit} commands)")]
    CommandQueueFull {
        /// The datanode.
        datanode: DatanodeId,
        /// The bound.
        limit: usize,
    },
    /// A replicated change of the deleted-block log did not report success; it may
    /// still commit, and the next round or ack repeats it.
    #[error("replicated change of the deleted-block log not confirmed: {reason}")]
    DeleteNotConfirmed {
        /// What the log answered.
        reason: SubmitError,
    },
    /// A configuration value out of its range.
    #[error("invalid configuration: {reason}")]
    InvalidConfig {
        /// Which value and why.
        reason: String,
    },
}
