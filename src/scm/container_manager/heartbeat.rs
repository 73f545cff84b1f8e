//! The SCM as its datanodes see it (`SCMDatanodeProtocolServer` with
//! `SCMNodeManager.processHeartbeat`): registration, heartbeats that carry reports and
//! command statuses in, and commands out, each stamped with the term of the leader that
//! created it.
//!
//! **The race (HDDS-17268).** Every SCM answers heartbeats, a follower too: its queue is
//! not cleared when it steps down, so a deposed leader hands out commands of its old term,
//! and only a leader puts its term in the response. **The fix** is the datanode's: it
//! drops commands older than the highest term it saw (`StateContext`).

use super::super::datanode_details::DatanodeDetails;
use super::super::error::ScmError;
use super::StorageContainerManager;
use crate::hdds::command::{CommandId, CommandKind, ScmCommand};
use crate::hdds::heartbeat::{
    CommandState, EndpointError, HeartbeatRequest, HeartbeatResponse, ScmEndpoint,
};
use crate::hdds::ids::{DatanodeId, ScmId};
use crate::sync::atomic::Ordering;

impl StorageContainerManager {
    /// A command for `datanode`, stamped with this leader's term (`SCMContext.getTermOfLeader`,
    /// which refuses a follower), without a deadline, queued for the datanode's next
    /// heartbeat: what the SCM's event handlers fire (`DATANODE_COMMAND`). The replication
    /// manager's commands carry a deadline and a pending op
    /// (`ReplicationManager.sendDatanodeCommand`).
    pub fn send_command(
        &self,
        datanode: DatanodeId,
        kind: CommandKind,
    ) -> Result<ScmCommand, ScmError> {
        self.queue_command(datanode, kind, 0)
    }

    /// `kind` for `datanode` with this leader's term and the datanode deadline
    /// `deadline_ms` (0: none), queued.
    pub(super) fn queue_command(
        &self,
        datanode: DatanodeId,
        kind: CommandKind,
        deadline_ms: u64,
    ) -> Result<ScmCommand, ScmError> {
        let context = self.context();
        if !context.is_leader {
            return Err(ScmError::NotLeader { scm: self.id });
        }
        let command =
            ScmCommand::new(self.next_command(), context.term, kind).with_deadline_ms(deadline_ms);
        self.commands.add(datanode, command.clone())?;
        crate::events::debug!(
            node = %self.id,
            datanode = %datanode,
            term = context.term,
            command = command.kind.name(), container = command.kind.container_number(), force = command.kind.force(),
            "command queued"
        );
        Ok(command)
    }

    /// A copy of the commands queued for `datanode`'s next heartbeat, oldest first, each
    /// with its term and deadline; nothing is taken.
    pub fn queued_commands(&self, datanode: DatanodeId) -> Vec<ScmCommand> {
        self.commands.peek(datanode)
    }

    /// Commands queued for `datanode`'s next heartbeat.
    pub fn queued_for(&self, datanode: DatanodeId) -> usize {
        self.commands.len(datanode)
    }

    /// A fresh command id, with this SCM's id in the high bits.
    pub(super) fn next_command(&self) -> CommandId {
        CommandId(self.id.0 << 32 | self.next_command_id.fetch_add(1, Ordering::Relaxed))
    }

    /// One heartbeat of `request.datanode` (`SCMDatanodeHeartbeatDispatcher.dispatch`, then
    /// `SCMDatanodeProtocolServer.sendHeartbeat`): an unregistered datanode is told to
    /// register again, with whatever is queued for it; a registered one takes its queued
    /// commands first, then its reports and command statuses are processed (upstream fires
    /// them to event handlers after the queue was drained, so what they queue goes out
    /// with the next heartbeat). The response carries this SCM's term if it leads once all
    /// that is done.
    pub fn process_heartbeat(&self, request: HeartbeatRequest) -> HeartbeatResponse {
        let datanode = request.datanode;
        let commands = if self.nodes.get(datanode).is_err() {
            let mut commands = self.take_commands(datanode);
            let reregister =
                ScmCommand::new(CommandId(0), self.context().term, CommandKind::Reregister);
            commands.push(reregister);
            commands
        } else {
            let commands = self.take_commands(datanode);
            self.process_reports(&request);
            commands
        };
        let context = self.context();
        HeartbeatResponse {
            datanode,
            term: context.is_leader.then_some(context.term),
            commands,
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
            crate::events::debug!(node = %self.id, datanode = %datanode, %error, "heartbeat report refused");
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
