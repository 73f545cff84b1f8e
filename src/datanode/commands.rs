//! SCM commands and their execution on the datanode (`SCMCommand`, `CommandDispatcher`
//! and the command handlers).
//!
//! **The race (HDDS-17268).** A command is fenced twice: `get_next_command` drops one whose
//! term is below the datanode's term, and the handler checks again when it runs, because
//! the term can rise between dispatch and execution. Both fences use a strict `<`, so a
//! wrongly low term lets the stale leader's command through both.
//!
//! **The fix** lives in [`StateContext`]; the delete-container and replication handlers
//! keep the second fence of spec A.6: an expired deadline (read from the [`Clock`]) or a
//! term below the current one skips the command when it is about to run.

use super::container::handler::KeyValueHandler;
use super::container_set::ContainerSet;
use super::state_context::{DispatchedCommand, StateContext};
use super::{ContainerId, DatanodeError, DatanodeId, Term};
use crate::clock::Clock;
use crate::sync::Arc;

/// Identifies a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommandId(pub u64);

/// One delete transaction of the SCM's deleted-blocks log, for one container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletedBlocksTransaction {
    /// Transaction id, increasing per SCM log.
    pub tx_id: u64,
    /// The container whose blocks are deleted.
    pub container: ContainerId,
    /// Local ids of the blocks.
    pub local_ids: Vec<u64>,
}

/// What a command asks the datanode to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandKind {
    /// Delete a container replica; `force` skips the OPEN and non-empty checks (spec A.7).
    DeleteContainer {
        /// The container.
        container: ContainerId,
        /// Skip the safety checks.
        force: bool,
    },
    /// Close an OPEN container.
    CloseContainer {
        /// The container.
        container: ContainerId,
    },
    /// Copy a closed replica from one of `sources`.
    ReplicateContainer {
        /// The container.
        container: ContainerId,
        /// Datanodes holding a replica.
        sources: Vec<DatanodeId>,
    },
    /// Store delete transactions for the block deleting service.
    DeleteBlocks {
        /// The transactions.
        transactions: Vec<DeletedBlocksTransaction>,
    },
    /// Register again (handled by the heartbeat task, never queued).
    Reregister,
}

/// A command from an SCM (`SCMCommand`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScmCommand {
    /// Command id.
    pub id: CommandId,
    /// Term of the SCM leader that created the command.
    pub term: Term,
    /// Datanode deadline in ms since the epoch; 0 means none.
    pub deadline_ms: u64,
    /// What to do.
    pub kind: CommandKind,
}

impl ScmCommand {
    /// A command without a deadline.
    pub fn new(id: CommandId, term: Term, kind: CommandKind) -> Self {
        Self {
            id,
            term,
            deadline_ms: 0,
            kind,
        }
    }

    /// The same command with a datanode deadline.
    pub fn with_deadline_ms(mut self, deadline_ms: u64) -> Self {
        self.deadline_ms = deadline_ms;
        self
    }

    /// `deadline > 0 && now > deadline` (strictly after the deadline).
    pub fn has_expired(&self, now_ms: u64) -> bool {
        self.deadline_ms > 0 && now_ms > self.deadline_ms
    }
}

/// How a dispatched command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandOutcome {
    /// The handler ran it.
    Executed,
    /// Its deadline had passed when the handler was about to run it.
    SkippedExpired {
        /// The clock's reading at the check.
        now_ms: u64,
    },
    /// The datanode's term had risen above the command's by the time it was to run.
    SkippedStaleTerm {
        /// The datanode's term at the check.
        current: Term,
    },
    /// The handler refused it.
    Failed(DatanodeError),
}

/// A dispatched command and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandReport {
    /// What the state context handed out.
    pub dispatched: DispatchedCommand,
    /// The result.
    pub outcome: CommandOutcome,
}

impl CommandReport {
    /// Whether the command passed both fences and its handler ran it (whether the handler
    /// then succeeded or refused it).
    pub fn ran(&self) -> bool {
        matches!(
            self.outcome,
            CommandOutcome::Executed | CommandOutcome::Failed(_)
        )
    }
}

/// Takes commands from the [`StateContext`] and runs them (`CommandDispatcher` and the
/// handlers). The command-processor thread calls [`CommandDispatcher::process_next`] in a
/// loop.
#[derive(Debug)]
pub struct CommandDispatcher {
    context: Arc<StateContext>,
    containers: Arc<ContainerSet>,
    key_value: Option<Arc<KeyValueHandler>>,
    clock: Arc<dyn Clock>,
}

impl CommandDispatcher {
    /// A dispatcher over `context` acting on `containers`.
    pub fn new(
        context: Arc<StateContext>,
        containers: Arc<ContainerSet>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            context,
            containers,
            key_value: None,
            clock,
        }
    }

    /// The same dispatcher handing delete-blocks commands to the replicas of `handler`
    /// (`DeleteBlocksCommandHandler`, HDDS-16811) instead of the container set.
    pub fn with_key_value_handler(mut self, handler: Arc<KeyValueHandler>) -> Self {
        self.key_value = Some(handler);
        self
    }

    /// The context commands come from.
    pub fn context(&self) -> &Arc<StateContext> {
        &self.context
    }

    /// The replicas the handlers act on.
    pub fn containers(&self) -> &Arc<ContainerSet> {
        &self.containers
    }

    /// Takes the next command and runs it; `None` if no command can be taken now.
    pub fn process_next(&self) -> Option<CommandReport> {
        let dispatched = self.context.get_next_command()?;
        Some(self.handle(dispatched))
    }

    /// Runs a dispatched command. The delete-container handler and the replication
    /// supervisor first apply the execution-time fences of spec A.6: deadline, then term
    /// (read lock-free, as their own threads do in Ozone). The other handlers run the
    /// command as it was dispatched.
    pub fn handle(&self, dispatched: DispatchedCommand) -> CommandReport {
        let command = &dispatched.command;
        let outcome = match self.execution_fence(command) {
            Some(skipped) => skipped,
            None => match self.execute(&command.kind) {
                Ok(()) => CommandOutcome::Executed,
                Err(error) => CommandOutcome::Failed(error),
            },
        };
        CommandReport {
            dispatched,
            outcome,
        }
    }

    /// Spec A.6: `DeleteContainerCommandHandler` and `ReplicationSupervisor` skip an
    /// expired command, then one whose term is below the datanode's (strict `<`).
    fn execution_fence(&self, command: &ScmCommand) -> Option<CommandOutcome> {
        if !matches!(
            command.kind,
            CommandKind::DeleteContainer { .. } | CommandKind::ReplicateContainer { .. }
        ) {
            return None;
        }
        let now_ms = self.clock.now_ms();
        if command.has_expired(now_ms) {
            return Some(CommandOutcome::SkippedExpired { now_ms });
        }
        match self.context.term_of_leader() {
            Some(current) if command.term < current => {
                Some(CommandOutcome::SkippedStaleTerm { current })
            }
            _ => None,
        }
    }

    fn execute(&self, kind: &CommandKind) -> Result<(), DatanodeError> {
        match kind {
            CommandKind::DeleteContainer { container, force } => {
                self.containers.delete(*container, *force)
            }
            CommandKind::CloseContainer { container } => self.containers.close(*container),
            CommandKind::ReplicateContainer { container, sources } => {
                self.containers.import_replica(*container, sources)
            }
            CommandKind::DeleteBlocks { transactions } => match &self.key_value {
                // Each transaction is acknowledged on its own; the first refusal is the
                // command's status (the SCM resends what was not acknowledged).
                Some(handler) => handler
                    .handle_delete_blocks(transactions)
                    .into_iter()
                    .find_map(Result::err)
                    .map_or(Ok(()), |error| Err(error.into())),
                None => self.containers.store_delete_transactions(transactions),
            },
            // The heartbeat task handles re-registration inline and never queues it.
            CommandKind::Reregister => Ok(()),
        }
    }
}
