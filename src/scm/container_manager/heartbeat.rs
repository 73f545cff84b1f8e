//! The SCM as its datanodes see it (`SCMDatanodeProtocolServer` with
//! `SCMNodeManager.processHeartbeat`): registration, heartbeats that carry reports and
//! command statuses in, and commands out, each stamped with the term of the leader that
//! created it.
//!
//! **The race (HDDS-17268).** Every SCM answers heartbeats, a follower too: its queue is
//! not cleared when it steps down, so a deposed leader hands out commands of its old term,
//! and only a leader puts its term in the response. **The fix** is the datanode's: it
//! drops commands older than the highest term it saw (`StateContext`).

use super::super::container_info::LifeCycleState;
use super::super::datanode_details::DatanodeDetails;
use super::super::error::ScmError;
use super::super::ha::LogEntry;
use super::StorageContainerManager;
use crate::hdds::command::{CommandId, CommandKind, ScmCommand};
use crate::hdds::heartbeat::{
    CommandState, EndpointError, HeartbeatRequest, HeartbeatResponse, ScmEndpoint,
};
use crate::hdds::ids::{ContainerId, DatanodeId, ScmId};
use crate::sync::atomic::Ordering;

impl StorageContainerManager {
    /// `ReplicationManager.sendDatanodeCommand`: a command for `datanode`, stamped with
    /// this leader's term (`SCMContext.getTermOfLeader`, which refuses a follower), queued
    /// for the datanode's next heartbeat.
    pub fn send_command(
        &self,
        datanode: DatanodeId,
        kind: CommandKind,
    ) -> Result<ScmCommand, ScmError> {
        let context = self.context();
        if !context.is_leader {
            return Err(ScmError::NotLeader { scm: self.id });
        }
        let command = ScmCommand::new(self.next_command(), context.term, kind);
        self.commands.add(datanode, command.clone())?;
        tracing::debug!(
            node = %self.id,
            datanode = %datanode,
            term = context.term,
            command = ?command.kind,
            "command queued"
        );
        Ok(command)
    }

    /// `ContainerManager.updateContainerState(CLOSE)` with the close commands
    /// (`CloseContainerEventHandler`): the container is CLOSED in every SCM's table
    /// through the log, and each datanode of its pipeline is told to close its replica.
    /// Only the leader closes.
    pub fn close_container(&self, container: ContainerId) -> Result<(), ScmError> {
        let context = self.context();
        if !context.is_leader {
            return Err(ScmError::NotLeader { scm: self.id });
        }
        let info = self
            .container(container)
            .ok_or(ScmError::UnknownContainer { container })?;
        let entry = LogEntry::UpdateContainerState(container, LifeCycleState::Closed);
        self.log
            .submit(self.id, context.term, entry)
            .map_err(|reason| ScmError::SubmitNotConfirmed { container, reason })?;
        self.catch_up();
        let nodes = self
            .config
            .pipelines
            .iter()
            .find(|p| p.id == info.pipeline)
            .map(|p| p.nodes.clone())
            .unwrap_or_default();
        for datanode in nodes {
            let kind = CommandKind::CloseContainer {
                container,
                force: false,
            };
            self.send_command(datanode, kind)?;
        }
        Ok(())
    }

    /// Commands queued for `datanode`'s next heartbeat.
    pub fn queued_for(&self, datanode: DatanodeId) -> usize {
        self.commands.len(datanode)
    }

    /// A fresh command id, with this SCM's id in the high bits.
    pub(super) fn next_command(&self) -> CommandId {
        CommandId(self.id.0 << 32 | self.next_command_id.fetch_add(1, Ordering::Relaxed))
    }

    /// One heartbeat of `request.datanode`: an unregistered datanode is told to register
    /// again; otherwise its reports and command statuses are processed, and it takes its
    /// queued commands, with this SCM's term if it leads.
    pub fn process_heartbeat(&self, request: HeartbeatRequest) -> HeartbeatResponse {
        let datanode = request.datanode;
        let context = self.context();
        let term = context.is_leader.then_some(context.term);
        if self.nodes.get(datanode).is_err() {
            let reregister = ScmCommand::new(CommandId(0), context.term, CommandKind::Reregister);
            return HeartbeatResponse {
                datanode,
                term,
                commands: vec![reregister],
            };
        }
        self.process_reports(&request);
        HeartbeatResponse {
            datanode,
            term,
            commands: self.take_commands(datanode),
        }
    }

    /// The reports and command statuses a heartbeat carries. A report naming unknown
    /// containers is applied for the known ones; a refused change of the deleted-block log
    /// is repeated by a later round or ack. Both are logged, not returned: the datanode
    /// has nothing to do about them.
    fn process_reports(&self, request: &HeartbeatRequest) {
        let datanode = request.datanode;
        self.commands
            .set_reported_delete_blocks(datanode, request.queued_delete_blocks);
        let mut errors = Vec::new();
        if let Some(reports) = &request.node_report {
            errors.extend(self.process_node_report(datanode, reports.clone()).err());
        }
        if let Some(replicas) = &request.container_report {
            errors.extend(self.process_full_container_report(datanode, replicas).err());
        }
        for status in &request.command_statuses {
            let results = match status.state {
                CommandState::Executed => status.delete_results.as_slice(),
                CommandState::Failed => &[],
            };
            errors.extend(
                self.process_delete_acks(datanode, status.command, results)
                    .err(),
            );
        }
        for error in errors {
            tracing::debug!(node = %self.id, datanode = %datanode, %error, "heartbeat report refused");
        }
    }
}

/// `SCMDatanodeProtocolServer`: the SCM behind a datanode's endpoint.
impl ScmEndpoint for StorageContainerManager {
    fn scm_id(&self) -> ScmId {
        self.id
    }

    fn get_version(&self, _datanode: DatanodeId) -> Result<(), EndpointError> {
        Ok(())
    }

    /// Registers the datanode with no storage report yet: its first heartbeat's node
    /// report gives its space.
    fn register(&self, datanode: DatanodeId) -> Result<(), EndpointError> {
        self.register_datanode(&DatanodeDetails::new(datanode), Vec::new());
        Ok(())
    }

    fn send_heartbeat(
        &self,
        request: HeartbeatRequest,
    ) -> Result<HeartbeatResponse, EndpointError> {
        Ok(self.process_heartbeat(request))
    }
}
