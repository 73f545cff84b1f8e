//! The datanode's threads, as `DatanodeStateMachine` starts them: one heartbeat thread per
//! SCM endpoint, the command processor, the replication supervisor, the delete-container
//! executor, the on-demand scanner and the block deleting service.
//!
//! **Why each is a thread (HDDS-17268, HDDS-16811).** The seeds' races are between them:
//! two heartbeat threads raising the term, a heartbeat raising it between a command's
//! dispatch and its run on an executor, the block deleting service deleting a block while
//! the supervisor reconciles the replica. **How they are paced**: the time-driven ones
//! (heartbeats, the processor when idle, the block deleting service) wait out their
//! interval of wall time ([`Pacing::WallClock`]), or wait for a [`Pace`]'s clock to move
//! ([`Pacing::Paced`], what a checker interleaves); the executors wait for work. No
//! decision depends on how long a wait lasted.

use std::time::Duration;

use super::container::handler::KeyValueHandler;
use super::dispatcher::{CommandDispatcher, CommandReport};
use super::executors::{Executor, HandlerExecutors};
use super::heartbeat::{HeartbeatEndpointTask, TaskOutcome};
use super::reports::ReportPublisher;
use super::settings::{DatanodeConfig, ProcessorStats};
use super::state_context::EndpointState;
use crate::clock::{Pace, StopFlag};
use crate::sync::channel::Receiver;
use crate::sync::{Arc, stop_requested, thread};

/// How a datanode's time-driven threads wait between runs.
#[derive(Debug, Clone)]
pub enum Pacing {
    /// Each waits out its interval of wall time (`DatanodeConfig`'s intervals), as
    /// upstream's threads do.
    WallClock,
    /// Each runs once each time the pace's clock moves: a move stands for every service's
    /// interval passing, and a checker interleaves the services' runs between moves.
    Paced(Pace),
}

/// How one thread waits and learns it must stop.
#[derive(Debug)]
pub(super) struct Waiter {
    pacing: Pacing,
    /// Wall-clock pacing: the stop channel (a message or its disconnect).
    stopped: Receiver<()>,
    stop: StopFlag,
    /// Paced: the moves of the clock this thread has seen.
    seen: u64,
}

impl Waiter {
    pub(super) fn new(pacing: &Pacing, stopped: &Receiver<()>, stop: &StopFlag) -> Self {
        let seen = match pacing {
            Pacing::Paced(pace) => pace.moves(),
            Pacing::WallClock => 0,
        };
        Self {
            pacing: pacing.clone(),
            stopped: stopped.clone(),
            stop: stop.clone(),
            seen,
        }
    }

    /// Waits `wait_ms` (or, paced, for the next move of the clock; at once for 0); false
    /// when the thread must stop.
    fn wait(&mut self, wait_ms: u64) -> bool {
        match &self.pacing {
            Pacing::WallClock => !stop_requested(&self.stopped, Duration::from_millis(wait_ms)),
            Pacing::Paced(_) if wait_ms == 0 => !self.stop.is_set(),
            Pacing::Paced(pace) => match pace.wait_moved(self.seen, &self.stop) {
                Some(moves) => {
                    self.seen = moves;
                    true
                }
                None => false,
            },
        }
    }
}

/// Where a command's end is recorded: the processor's counters and history, and the
/// status the next heartbeats carry.
#[derive(Debug, Clone)]
pub(super) struct Completion {
    pub(super) reports: Arc<ReportPublisher>,
    pub(super) stats: Arc<ProcessorStats>,
}

impl Completion {
    pub(super) fn record(&self, report: &CommandReport) {
        self.stats.record(report);
        if let Some(status) = report.status() {
            self.reports.add_command_status(&status);
        }
    }
}

/// What the command processor thread works with.
#[derive(Debug, Clone)]
pub(super) struct Processor {
    pub(super) dispatcher: Arc<CommandDispatcher>,
    pub(super) executors: Arc<HandlerExecutors>,
    pub(super) completion: Completion,
}

impl Processor {
    /// Takes the next command: runs it when the processor's own handler does, hands it to
    /// its executor otherwise (a refusal is recorded at once). False when no command
    /// could be taken.
    pub(super) fn process_next(&self) -> bool {
        let Some(dispatched) = self.dispatcher.take_next() else {
            return false;
        };
        if Executor::of(&dispatched.command.kind) == Executor::Processor {
            self.completion.record(&self.dispatcher.handle(dispatched));
        } else if let Err(refused) = self.executors.submit(dispatched) {
            self.completion.record(&refused);
        }
        true
    }
}

/// The threads of one datanode's run, as the datanode spawns them.
pub(super) struct Threads<'a> {
    pub(super) name: String,
    pub(super) config: &'a DatanodeConfig,
    pub(super) pacing: &'a Pacing,
    pub(super) stopped: &'a Receiver<()>,
    pub(super) stop: &'a StopFlag,
}

impl Threads<'_> {
    fn spawn(&self, label: &str, body: impl FnOnce() + Send + 'static) -> thread::JoinHandle<()> {
        thread::spawn_named(&format!("{} · {label}", self.name), body)
    }

    fn waiter(&self) -> Waiter {
        Waiter::new(self.pacing, self.stopped, self.stop)
    }

    /// A heartbeat thread for one SCM endpoint (`EndpointStateMachine` run by
    /// `HeartbeatEndpointTask`).
    pub(super) fn endpoint(&self, task: HeartbeatEndpointTask) -> thread::JoinHandle<()> {
        let (mut waiter, config) = (self.waiter(), self.config.clone());
        let label = format!("endpoint {}", task.endpoint().scm());
        self.spawn(&label, move || {
            loop {
                let wait_ms = match task.run_once() {
                    Ok(TaskOutcome::Shutdown) => return,
                    Ok(TaskOutcome::Heartbeat(summary)) if summary.reregister => 0,
                    // Errors are the SCM's or its response's; the endpoint retries next cycle.
                    _ if task.endpoint().state() == EndpointState::Heartbeat => {
                        config.heartbeat_interval_ms
                    }
                    _ => config.initial_heartbeat_interval_ms,
                };
                if !waiter.wait(wait_ms) {
                    return;
                }
            }
        })
    }

    /// The command processor: takes commands while there are any, then waits (upstream
    /// sleeps until the next heartbeat).
    pub(super) fn processor(&self, processor: Processor) -> thread::JoinHandle<()> {
        let mut waiter = self.waiter();
        let idle_ms = self.config.heartbeat_interval_ms;
        self.spawn("command processor", move || {
            loop {
                let wait_ms = if processor.process_next() { 0 } else { idle_ms };
                if !waiter.wait(wait_ms) {
                    return;
                }
            }
        })
    }

    /// The replication supervisor's thread and the delete-container executor's.
    pub(super) fn executors(
        &self,
        executors: &Arc<HandlerExecutors>,
        completion: &Completion,
    ) -> [thread::JoinHandle<()>; 2] {
        let (supervisor, stop) = (Arc::clone(executors), self.stop.clone());
        let done = completion.clone();
        let supervising = self.spawn("replication supervisor", move || {
            while let Some(report) = supervisor.run_supervisor_waiting(|| stop.is_set()) {
                done.record(&report);
            }
        });
        let (deleter, stop) = (Arc::clone(executors), self.stop.clone());
        let done = completion.clone();
        let deleting = self.spawn("delete container", move || {
            while let Some(report) = deleter.run_delete_container_waiting(|| stop.is_set()) {
                done.record(&report);
            }
        });
        [supervising, deleting]
    }

    /// The on-demand scanner's thread.
    pub(super) fn scanner(&self, handler: &Arc<KeyValueHandler>) -> thread::JoinHandle<()> {
        let (handler, stop) = (Arc::clone(handler), self.stop.clone());
        self.spawn("on-demand scanner", move || {
            // A scan's result is the replica's state (UNHEALTHY or not) and its events.
            while handler.scanner().run_waiting(|| stop.is_set()).is_some() {}
        })
    }

    /// The block deleting service: a run, then its interval.
    pub(super) fn block_deleting(&self, handler: &Arc<KeyValueHandler>) -> thread::JoinHandle<()> {
        let (handler, mut waiter) = (Arc::clone(handler), self.waiter());
        let interval_ms = self.config.block_deleting_interval_ms;
        self.spawn("block deleting service", move || {
            loop {
                // A failed task is retried next interval, as the service does.
                let _ = handler.run_block_deleting_service();
                if !waiter.wait(interval_ms) {
                    return;
                }
            }
        })
    }
}
