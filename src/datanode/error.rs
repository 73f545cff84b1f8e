use super::container::ContainerError;
use super::{ContainerId, DatanodeId, ScmId, Term};

/// What the datanode's control plane refuses, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DatanodeError {
    /// A term below the non-HA sentinel −1 cannot come from an SCM.
    #[error("invalid SCM term {term}: terms are -1 (non-HA) or non-negative")]
    InvalidTerm {
        /// The term received.
        term: Term,
    },
    /// The command queue is at its limit (`hdds.datanode.command.queue.limit`); the
    /// commands were not queued and the SCM will re-send what it still wants.
    #[error("command queue full at {limit} commands: {dropped} command(s) not queued")]
    CommandQueueFull {
        /// The configured limit.
        limit: usize,
        /// How many commands of the response were not queued.
        dropped: usize,
    },
    /// A heartbeat response addressed to another datanode; nothing of it was applied.
    #[error("heartbeat response for {actual} received by {expected}")]
    ResponseForAnotherDatanode {
        /// This datanode.
        expected: DatanodeId,
        /// The datanode the response names.
        actual: DatanodeId,
    },
    /// The SCM did not answer.
    #[error("{scm} unreachable: {reason}")]
    ScmUnreachable {
        /// The endpoint.
        scm: ScmId,
        /// What the endpoint reported.
        reason: String,
    },
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
    /// A non-force delete of an OPEN container (`DELETE_ON_OPEN_CONTAINER`).
    #[error("container {container} is open: only a force delete removes it")]
    DeleteOnOpenContainer {
        /// The container.
        container: ContainerId,
    },
    /// A non-force delete of a container with blocks (`DELETE_ON_NON_EMPTY_CONTAINER`).
    #[error("container {container} has {blocks} block(s): only a force delete removes it")]
    DeleteOnNonEmptyContainer {
        /// The container.
        container: ContainerId,
        /// Its block count.
        blocks: u64,
    },
    /// A configuration value out of its range.
    #[error("invalid configuration: {reason}")]
    InvalidConfig {
        /// Which value and why.
        reason: String,
    },
    /// A container replica refused the command.
    #[error(transparent)]
    Container(#[from] ContainerError),
}
