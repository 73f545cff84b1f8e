//! A datanode's conversation with one SCM (`StorageContainerDatanodeProtocol`): the
//! heartbeat and its response, and the [`ScmEndpoint`] boundary a datanode's endpoint
//! thread talks through.

use std::fmt;

use super::command::{CommandId, DeleteBlockTransactionResult, ScmCommand};
use super::container::ContainerReplicaReport;
use super::ids::{DatanodeId, ScmId};
use super::report::StorageReport;
use super::term::Term;

/// What the datanode tells the SCM in a heartbeat (`SCMHeartbeatRequestProto`, the
/// fields used).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatRequest {
    /// The datanode.
    pub datanode: DatanodeId,
    /// Commands waiting in its queue.
    pub queued_commands: usize,
    /// Delete-blocks commands among them (`CommandQueueReportProto`).
    pub queued_delete_blocks: usize,
    /// Its volumes' space (`NodeReportProto`), when this heartbeat carries a report.
    pub node_report: Option<Vec<StorageReport>>,
    /// Its replicas (`ContainerReportsProto`), when this heartbeat carries a report.
    pub container_report: Option<Vec<ContainerReplicaReport>>,
    /// How commands it ran ended (`CommandStatusReportsProto`).
    pub command_statuses: Vec<CommandStatus>,
}

impl HeartbeatRequest {
    /// A heartbeat with no report and no command status.
    pub fn new(datanode: DatanodeId, queued_commands: usize) -> Self {
        Self {
            datanode,
            queued_commands,
            queued_delete_blocks: 0,
            node_report: None,
            container_report: None,
            command_statuses: Vec::new(),
        }
    }
}

/// How a command ended on the datanode (`CommandStatus.Status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommandState {
    /// It ran.
    Executed,
    /// It was refused or skipped.
    Failed,
}

/// One command's status in a heartbeat (`CommandStatus`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandStatus {
    /// The command.
    pub command: CommandId,
    /// How it ended.
    pub state: CommandState,
    /// For a delete-blocks command, each transaction's answer (`blockDeletionAck`).
    pub delete_results: Vec<DeleteBlockTransactionResult>,
}

/// The SCM's answer to a heartbeat (`SCMHeartbeatResponseProto`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatResponse {
    /// The datanode the response is for.
    pub datanode: DatanodeId,
    /// The SCM's leader term; only an SCM that believes it leads sends one.
    pub term: Option<Term>,
    /// Queued commands, each with the term of the leader that created it.
    pub commands: Vec<ScmCommand>,
}

/// Why an SCM call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// The SCM did not answer (down, paused, partitioned).
    #[error("SCM unavailable")]
    Unavailable,
}

/// An SCM as a datanode's endpoint thread sees it (`StorageContainerDatanodeProtocol`).
pub trait ScmEndpoint: Send + Sync + fmt::Debug {
    /// The SCM's id.
    fn scm_id(&self) -> ScmId;
    /// GETVERSION.
    fn get_version(&self, datanode: DatanodeId) -> Result<(), EndpointError>;
    /// REGISTER.
    fn register(&self, datanode: DatanodeId) -> Result<(), EndpointError>;
    /// HEARTBEAT: hands out the commands queued for the datanode.
    fn send_heartbeat(&self, request: HeartbeatRequest)
    -> Result<HeartbeatResponse, EndpointError>;
}
