//! What the datanode's control plane refuses (`DatanodeError`).

use super::container::error::ContainerError;
use crate::hdds::ids::{DatanodeId, ScmId};
use crate::hdds::term::{InvalidTerm, Term};

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
    /// A command handler's executor queue is at its limit; the command was not queued and
    /// the SCM will re-send it if it still wants it.
    #[error("command handler's executor queue full at {limit} commands")]
    ExecutorQueueFull {
        /// The queue's limit.
        limit: usize,
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

impl From<InvalidTerm> for DatanodeError {
    fn from(error: InvalidTerm) -> Self {
        DatanodeError::InvalidTerm { term: error.term }
    }
}
