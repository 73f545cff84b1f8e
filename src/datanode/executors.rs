//! The command handlers' own threads: the `ReplicationSupervisor` (replicate and reconcile
//! commands, `ReconcileContainerCommandHandler` hands its tasks to it) and the executor of
//! `DeleteContainerCommandHandler`. The command processor hands these commands over and
//! goes on; the executor runs each when it gets to it.
//!
//! **The race (HDDS-17268, HDDS-16811).** Between the hand-over and the run, a heartbeat
//! may raise the datanode's term (the deposed leader's force delete must then be dropped),
//! and the block deleting service runs on while a reconciliation pulls a block it deletes.
//! **The fences** are upstream's: each executor checks the command's deadline and term
//! when it is about to run it ([`CommandDispatcher::execution_fence`]), and the replica's
//! own reconciliation fix (HDDS-16811) orders the commit against the deletion.
//!
//! A reconciliation runs a step at a time ([`ReconcileTask`]), so a driver that steps the
//! datanode action by action interleaves its steps with everything else; the
//! supervisor's thread runs it to its end. Upstream's pools have several threads
//! (`hdds.datanode.replication.streams.limit`, 10); each executor here has one, which
//! keeps one command of a kind at a time (`FIDELITY.md`).

use super::container::handler::{KeyValueHandler, ReconcileTask};
use super::dispatcher::{CommandDispatcher, CommandOutcome, CommandReport};
use super::error::DatanodeError;
use super::state_context::DispatchedCommand;
use super::work_queue::WorkQueue;
use crate::hdds::command::CommandKind;
use crate::sync::{Arc, Mutex};

/// Commands each executor queues at most before refusing more
/// (`hdds.datanode.replication.queue.limit` is 4096 upstream).
pub const EXECUTOR_QUEUE_LIMIT: usize = 4096;

/// Which executor runs a command kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Executor {
    /// The command processor itself (close, delete blocks).
    Processor,
    /// The replication supervisor (replicate, reconcile).
    Supervisor,
    /// `DeleteContainerCommandHandler`'s executor.
    DeleteContainer,
}

impl Executor {
    /// The executor upstream hands `kind` to.
    pub fn of(kind: &CommandKind) -> Executor {
        match kind {
            CommandKind::ReplicateContainer { .. } | CommandKind::ReconcileContainer { .. } => {
                Executor::Supervisor
            }
            CommandKind::DeleteContainer { .. } => Executor::DeleteContainer,
            _ => Executor::Processor,
        }
    }
}

/// What one step of an executor did.
#[derive(Debug)]
pub enum ExecutorStep {
    /// Nothing was queued or running.
    Idle,
    /// A reconciliation moved by one step and goes on.
    Progressed,
    /// A command ended (run, skipped by a fence, or refused).
    Finished(CommandReport),
}

/// The supervisor's command in progress: a reconciliation between its steps.
#[derive(Debug)]
struct Running {
    dispatched: DispatchedCommand,
    task: ReconcileTask,
}

/// The replication supervisor and the delete-container executor of one datanode.
#[derive(Debug)]
pub struct HandlerExecutors {
    dispatcher: Arc<CommandDispatcher>,
    handler: Arc<KeyValueHandler>,
    supervisor: WorkQueue<DispatchedCommand>,
    /// The reconciliation the supervisor runs, between two of its steps.
    running: Mutex<Option<Running>>,
    delete_container: WorkQueue<DispatchedCommand>,
}

impl HandlerExecutors {
    /// Executors running commands through `dispatcher` on the replicas of `handler`.
    pub fn new(dispatcher: Arc<CommandDispatcher>, handler: Arc<KeyValueHandler>) -> Self {
        Self {
            dispatcher,
            handler,
            supervisor: WorkQueue::new(EXECUTOR_QUEUE_LIMIT),
            running: Mutex::new(None),
            delete_container: WorkQueue::new(EXECUTOR_QUEUE_LIMIT),
        }
    }

    /// Hands `dispatched` to its executor's queue; a full queue refuses it (the report says
    /// so: the SCM sends again what it still wants).
    pub fn submit(&self, dispatched: DispatchedCommand) -> Result<(), Box<CommandReport>> {
        let queue = match Executor::of(&dispatched.command.kind) {
            Executor::Supervisor => &self.supervisor,
            Executor::DeleteContainer => &self.delete_container,
            Executor::Processor => return Err(Box::new(self.dispatcher.handle(dispatched))),
        };
        queue.push(dispatched).map_err(|refused| {
            let limit = queue.limit();
            Box::new(self.fail(refused, DatanodeError::ExecutorQueueFull { limit }))
        })
    }

    /// One step of the replication supervisor: the running reconciliation's next step, or
    /// the next queued command started (its fences checked first).
    pub fn supervisor_step(&self) -> ExecutorStep {
        let mut running = self.running.lock();
        if let Some(mut current) = running.take() {
            return match current.task.step() {
                None => {
                    *running = Some(current);
                    ExecutorStep::Progressed
                }
                Some(report) => {
                    drop(running);
                    ExecutorStep::Finished(self.end_reconciliation(current, &report))
                }
            };
        }
        let Some(dispatched) = self.supervisor.try_take() else {
            return ExecutorStep::Idle;
        };
        match self.start(dispatched) {
            Ok(started) => {
                *running = Some(started);
                ExecutorStep::Progressed
            }
            Err(report) => ExecutorStep::Finished(*report),
        }
    }

    /// One step of the delete-container executor: the next queued command run.
    pub fn delete_container_step(&self) -> ExecutorStep {
        match self.delete_container.try_take() {
            Some(dispatched) => ExecutorStep::Finished(self.dispatcher.handle(dispatched)),
            None => ExecutorStep::Idle,
        }
    }

    /// The supervisor's thread: waits for a command and runs it to its end; `None` once
    /// `stopped` (after [`wake`](Self::wake)). A reconciliation left between steps (by a
    /// stepping driver) is finished first.
    pub fn run_supervisor_waiting(&self, stopped: impl Fn() -> bool) -> Option<CommandReport> {
        loop {
            match self.supervisor_step() {
                ExecutorStep::Finished(report) => return Some(report),
                ExecutorStep::Progressed => {}
                ExecutorStep::Idle => {
                    let dispatched = self.supervisor.take(&stopped)?;
                    match self.start(dispatched) {
                        Ok(started) => *self.running.lock() = Some(started),
                        Err(report) => return Some(*report),
                    }
                }
            }
        }
    }

    /// The delete-container executor's thread: waits for a command and runs it; `None`
    /// once `stopped` (after [`wake`](Self::wake)).
    pub fn run_delete_container_waiting(
        &self,
        stopped: impl Fn() -> bool,
    ) -> Option<CommandReport> {
        let dispatched = self.delete_container.take(stopped)?;
        Some(self.dispatcher.handle(dispatched))
    }

    /// Wakes both executors' threads, so they check whether to stop.
    pub fn wake(&self) {
        self.supervisor.wake();
        self.delete_container.wake();
    }

    /// Commands queued or running, per executor: the supervisor's, then the
    /// delete-container executor's.
    pub fn in_flight(&self) -> (usize, usize) {
        let running = usize::from(self.running.lock().is_some());
        (self.supervisor.len() + running, self.delete_container.len())
    }

    /// Feeds `state` the commands each executor holds (queued, and the running
    /// reconciliation with how far it got).
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        self.supervisor.for_each(|d| d.command.digest(state));
        if let Some(running) = &*self.running.lock() {
            running.dispatched.command.digest(state);
            running.task.digest(state);
        }
        0xde1u16.hash(state);
        self.delete_container.for_each(|d| d.command.digest(state));
    }

    /// Forgets every queued and running command (a restart of the process loses them).
    pub fn clear(&self) {
        self.supervisor.clear();
        self.delete_container.clear();
        self.running.lock().take();
    }

    /// A supervisor command started: replicate runs whole (one step), reconcile starts its
    /// task. `Err`: it ended at once (a fence, a refusal, or it ran whole).
    fn start(&self, dispatched: DispatchedCommand) -> Result<Running, Box<CommandReport>> {
        if let Some(skipped) = self.dispatcher.execution_fence(&dispatched.command) {
            return Err(Box::new(self.dispatcher.report(
                dispatched,
                skipped,
                Vec::new(),
            )));
        }
        let CommandKind::ReconcileContainer { container, peers } = &dispatched.command.kind else {
            return Err(Box::new(self.dispatcher.handle(dispatched)));
        };
        match self.handler.start_reconciliation(*container, peers) {
            Ok(task) => Ok(Running { dispatched, task }),
            Err(error) => Err(Box::new(self.fail(dispatched, error.into()))),
        }
    }

    /// A reconciliation ended: the on-demand scan requested (`reconcileContainer` ends
    /// so, whatever the outcome), and the command reported; it failed when every peer did.
    fn end_reconciliation(
        &self,
        current: Running,
        report: &super::container::reconcile::ReconcileReport,
    ) -> CommandReport {
        let container = current.task.container();
        drop(current.task);
        // A replica deleted meanwhile has nothing to scan.
        let _ = self.handler.request_scan(container);
        let outcome = match report.peer_failures.first() {
            Some((_, error)) if report.rounds.is_empty() => {
                CommandOutcome::Failed(error.clone().into())
            }
            _ => CommandOutcome::Executed,
        };
        self.dispatcher
            .report(current.dispatched, outcome, Vec::new())
    }

    fn fail(&self, dispatched: DispatchedCommand, error: DatanodeError) -> CommandReport {
        self.dispatcher
            .report(dispatched, CommandOutcome::Failed(error), Vec::new())
    }
}
