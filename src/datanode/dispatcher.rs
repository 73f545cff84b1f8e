//! The execution of SCM commands on the datanode (`CommandDispatcher` and the command
//! handlers), on the real replicas through the [`ContainerController`].
//!
//! **The race (HDDS-17268).** A command is fenced twice: `get_next_command` drops one whose
//! term is below the datanode's term, and the handler checks again when it runs, because
//! the term can rise between dispatch and execution. Both fences use a strict `<`, so a
//! wrongly low term lets the stale leader's command through both.
//!
//! **The fix** lives in [`StateContext`]; the delete-container, replication and
//! reconciliation handlers keep the second fence: an expired deadline (read from the
//! [`Clock`]) or a term below the current one skips the command when it is about to run.

use super::container::controller::ContainerController;
use super::error::DatanodeError;
use super::state_context::{DispatchedCommand, StateContext, StateContextApi};
use crate::clock::Clock;
use crate::hdds::command::{CommandKind, DeleteBlockTransactionResult, ScmCommand};
use crate::hdds::heartbeat::{CommandState, CommandStatus};
use crate::hdds::term::Term;
use crate::sync::Arc;

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
    /// For a delete-blocks command that ran, each transaction's answer, in order.
    pub delete_results: Vec<DeleteBlockTransactionResult>,
}

impl CommandReport {
    /// The status the SCM hears of a delete-blocks command (the commands whose statuses
    /// SCM acts on); `None` for the other kinds.
    pub fn status(&self) -> Option<CommandStatus> {
        let command = &self.dispatched.command;
        if !matches!(command.kind, CommandKind::DeleteBlocks { .. }) {
            return None;
        }
        let state = match self.outcome {
            CommandOutcome::Executed | CommandOutcome::Failed(_)
                if !self.delete_results.is_empty() =>
            {
                CommandState::Executed
            }
            _ => CommandState::Failed,
        };
        Some(CommandStatus {
            command: command.id,
            state,
            delete_results: self.delete_results.clone(),
        })
    }

    /// Whether the command passed both fences and its handler ran it (whether the handler
    /// then succeeded or refused it).
    pub fn ran(&self) -> bool {
        matches!(
            self.outcome,
            CommandOutcome::Executed | CommandOutcome::Failed(_)
        )
    }
}

/// Takes commands from the [`StateContext`] (or any [`StateContextApi`]) and runs them on
/// the replicas of a [`ContainerController`] (`CommandDispatcher` and the handlers). The
/// command-processor thread calls [`CommandDispatcher::process_next`] in a loop.
#[derive(Debug)]
pub struct CommandDispatcher<C: StateContextApi = StateContext> {
    context: Arc<C>,
    controller: Arc<dyn ContainerController>,
    clock: Arc<dyn Clock>,
}

impl<C: StateContextApi> CommandDispatcher<C> {
    /// A dispatcher over `context` acting on the replicas of `controller`.
    pub fn new(
        context: Arc<C>,
        controller: Arc<dyn ContainerController>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            context,
            controller,
            clock,
        }
    }

    /// The context commands come from.
    pub fn context(&self) -> &Arc<C> {
        &self.context
    }

    /// The replicas the handlers act on.
    pub fn controller(&self) -> &Arc<dyn ContainerController> {
        &self.controller
    }

    /// Takes the next command and runs it; `None` if no command can be taken now.
    pub fn process_next(&self) -> Option<CommandReport> {
        let dispatched = self.context.get_next_command()?;
        Some(self.handle(dispatched))
    }

    /// Takes the next command without running it (`None` if none can be taken now): for a
    /// processor that hands some kinds to their handler's own thread.
    pub fn take_next(&self) -> Option<DispatchedCommand> {
        self.context.get_next_command()
    }

    /// Runs a dispatched command. The delete-container handler and the replication
    /// supervisor first apply the execution-time fences: deadline, then term (read
    /// lock-free, as their own threads do in Ozone). The other handlers run the command as
    /// it was dispatched.
    pub fn handle(&self, dispatched: DispatchedCommand) -> CommandReport {
        let mut delete_results = Vec::new();
        let outcome = match self.execution_fence(&dispatched.command) {
            Some(skipped) => skipped,
            None => match self.execute(&dispatched.command.kind, &mut delete_results) {
                Ok(()) => CommandOutcome::Executed,
                Err(error) => CommandOutcome::Failed(error),
            },
        };
        self.report(dispatched, outcome, delete_results)
    }

    /// How a command ran, as the handler that ran it reports it (the `command run` event).
    /// For a command a handler's own thread ran to its end after [`handle`](Self::handle)'s
    /// fences ([`execution_fence`](Self::execution_fence)).
    pub fn report(
        &self,
        dispatched: DispatchedCommand,
        outcome: CommandOutcome,
        delete_results: Vec<DeleteBlockTransactionResult>,
    ) -> CommandReport {
        let command = &dispatched.command;
        crate::events::debug!(
            node = self.context.datanode(),
            command = command.kind.name(), container = command.kind.container_number(), force = command.kind.force(),
            term = command.term,
            outcome = ?outcome,
            "command run"
        );
        CommandReport {
            dispatched,
            outcome,
            delete_results,
        }
    }

    /// `DeleteContainerCommandHandler` and `ReplicationSupervisor` skip an expired command,
    /// then one whose term is below the datanode's (strict `<`, HDDS-7620); `None`: it may
    /// run.
    pub fn execution_fence(&self, command: &ScmCommand) -> Option<CommandOutcome> {
        if !matches!(
            command.kind,
            CommandKind::DeleteContainer { .. }
                | CommandKind::ReplicateContainer { .. }
                | CommandKind::ReconcileContainer { .. }
        ) {
            return None;
        }
        let now_ms = self.clock.now_ms();
        if command.has_expired(now_ms) {
            return Some(CommandOutcome::SkippedExpired { now_ms });
        }
        if !self.context.rechecks_term_at_execution() {
            // The code before HDDS-7620: the deadline alone is checked here.
            return None;
        }
        match self.context.term_of_leader() {
            Some(current) if command.term < current => {
                Some(CommandOutcome::SkippedStaleTerm { current })
            }
            _ => None,
        }
    }

    /// Runs `kind` on the replicas; a delete-blocks command's per-transaction answers go
    /// to `delete_results`.
    fn execute(
        &self,
        kind: &CommandKind,
        delete_results: &mut Vec<DeleteBlockTransactionResult>,
    ) -> Result<(), DatanodeError> {
        let controller = &self.controller;
        match kind {
            CommandKind::DeleteContainer { container, force } => {
                controller.delete_container(*container, *force)?;
            }
            CommandKind::CloseContainer {
                container,
                pipeline,
                force,
            } => {
                controller.close_container(*container, *pipeline, *force)?;
            }
            CommandKind::ReplicateContainer { container, sources } => {
                controller.replicate_container(*container, sources)?;
            }
            CommandKind::ReconcileContainer { container, peers } => {
                controller.reconcile_container(*container, peers)?;
            }
            CommandKind::DeleteBlocks { transactions } => {
                // Each transaction is acknowledged on its own; the first refusal is the
                // command's outcome (the SCM resends what was not acknowledged).
                let results = controller.delete_blocks(transactions);
                delete_results.extend(transactions.iter().zip(&results).map(|(tx, result)| {
                    DeleteBlockTransactionResult {
                        tx_id: tx.tx_id,
                        container: tx.container,
                        success: result.is_ok(),
                    }
                }));
                if let Some(error) = results.into_iter().find_map(Result::err) {
                    return Err(error.into());
                }
            }
            // The heartbeat task handles re-registration inline and never queues it.
            CommandKind::Reregister => {}
        }
        Ok(())
    }
}
