//! The production driver (`DatanodeStateMachine`): one thread per SCM endpoint running its
//! [`HeartbeatEndpointTask`] and one command-processor thread running the
//! [`CommandDispatcher`].
//!
//! The drivers are thin on purpose: all decisions live in the tasks, which checker
//! scenarios call step by step on threads of their own. Pacing waits on a stop channel with
//! a timeout; no decision depends on that timeout, so in the model builds (where a timed
//! wait returns at once) the loops only spin faster.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use hadoop_ref::clock::ManualClock;
//! use hadoop_ref::datanode::DatanodeId;
//! use hadoop_ref::datanode::daemon::{DatanodeConfig, DatanodeStateMachine};
//! use hadoop_ref::scenarios::scm::InProcessScm;
//!
//! let scm = InProcessScm::new(hadoop_ref::datanode::ScmId(1));
//! scm.become_leader(1);
//! let config = DatanodeConfig {
//!     heartbeat_interval_ms: 1,
//!     initial_heartbeat_interval_ms: 1,
//!     ..Default::default()
//! };
//! let clock = ManualClock::new(0).shared();
//! let dn = DatanodeStateMachine::new(DatanodeId(1), config, vec![scm.endpoint()], clock)?;
//! dn.start()?;
//! dn.stop();
//! # Ok::<(), hadoop_ref::datanode::DatanodeError>(())
//! ```

use std::time::Duration;

use super::commands::{CommandDispatcher, CommandOutcome};
use super::container_set::ContainerSet;
use super::heartbeat::{HeartbeatEndpointTask, ScmEndpoint, TaskOutcome};
use super::state_context::{Behavior, EndpointState, StateContext, StateContextConfig};
use super::{DatanodeError, DatanodeId};
use crate::clock::Clock;
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::channel::{self, Receiver, Sender};
use crate::sync::{Arc, Mutex, stop_requested, thread};

/// Settings of a [`DatanodeStateMachine`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatanodeConfig {
    /// Fencing logic.
    pub behavior: Behavior,
    /// Queue limit and await bound.
    pub context: StateContextConfig,
    /// Heartbeat period once registered (`hdds.heartbeat.interval`, 30 s).
    pub heartbeat_interval_ms: u64,
    /// Period before registration completes (`hdds.heartbeat.initial-interval`, 2 s).
    pub initial_heartbeat_interval_ms: u64,
}

impl Default for DatanodeConfig {
    fn default() -> Self {
        Self {
            behavior: Behavior::Fixed,
            context: StateContextConfig::default(),
            heartbeat_interval_ms: 30_000,
            initial_heartbeat_interval_ms: 2_000,
        }
    }
}

/// What the command processor did since the datanode was created.
#[derive(Debug, Default)]
pub struct ProcessorStats {
    executed: AtomicU64,
    skipped_expired: AtomicU64,
    skipped_stale_term: AtomicU64,
    failed: AtomicU64,
}

impl ProcessorStats {
    /// Commands run.
    pub fn executed(&self) -> u64 {
        self.executed.load(Ordering::Relaxed)
    }
    /// Commands skipped for an expired deadline.
    pub fn skipped_expired(&self) -> u64 {
        self.skipped_expired.load(Ordering::Relaxed)
    }
    /// Commands skipped by the execution-time term fence.
    pub fn skipped_stale_term(&self) -> u64 {
        self.skipped_stale_term.load(Ordering::Relaxed)
    }
    /// Commands a handler refused.
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    fn record(&self, outcome: &CommandOutcome) {
        let counter = match outcome {
            CommandOutcome::Executed => &self.executed,
            CommandOutcome::SkippedExpired { .. } => &self.skipped_expired,
            CommandOutcome::SkippedStaleTerm { .. } => &self.skipped_stale_term,
            CommandOutcome::Failed(_) => &self.failed,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

#[derive(Debug)]
struct Running {
    stop: Sender<()>,
    threads: Vec<thread::JoinHandle<()>>,
}

/// A datanode's control plane with its threads (`DatanodeStateMachine`).
#[derive(Debug)]
pub struct DatanodeStateMachine {
    datanode: DatanodeId,
    config: DatanodeConfig,
    scms: Vec<Arc<dyn ScmEndpoint>>,
    context: Arc<StateContext>,
    dispatcher: Arc<CommandDispatcher>,
    stats: Arc<ProcessorStats>,
    running: Mutex<Option<Running>>,
}

impl DatanodeStateMachine {
    /// A stopped datanode talking to `scms` (all active endpoints), with no replicas.
    pub fn new(
        datanode: DatanodeId,
        config: DatanodeConfig,
        scms: Vec<Arc<dyn ScmEndpoint>>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, DatanodeError> {
        let endpoints: Vec<_> = scms.iter().map(|s| (s.scm_id(), false)).collect();
        let context = Arc::new(StateContext::new(
            config.behavior,
            config.context.clone(),
            &endpoints,
            Arc::clone(&clock),
        )?);
        let dispatcher = Arc::new(CommandDispatcher::new(
            Arc::clone(&context),
            Arc::new(ContainerSet::new()),
            clock,
        ));
        Ok(Self {
            datanode,
            config,
            scms,
            context,
            dispatcher,
            stats: Arc::new(ProcessorStats::default()),
            running: Mutex::new(None),
        })
    }

    /// The state context.
    pub fn context(&self) -> &Arc<StateContext> {
        &self.context
    }

    /// The replicas.
    pub fn containers(&self) -> &Arc<ContainerSet> {
        self.dispatcher.containers()
    }

    /// The command processor's counters.
    pub fn stats(&self) -> &ProcessorStats {
        &self.stats
    }

    /// Starts the endpoint threads and the command processor; starting a running datanode
    /// is a no-op.
    pub fn start(&self) -> Result<(), DatanodeError> {
        let mut running = self.running.lock();
        if running.is_some() {
            return Ok(());
        }
        let tasks =
            HeartbeatEndpointTask::for_all_endpoints(self.datanode, &self.context, &self.scms)?;
        // The await bound counts from the start of the threads, not from construction.
        self.context.mark_started();
        let (stop, stopped) = channel::bounded::<()>(1);
        let mut threads = Vec::with_capacity(tasks.len() + 1);
        for task in tasks {
            let stopped = stopped.clone();
            let config = self.config.clone();
            threads.push(thread::spawn(move || {
                endpoint_loop(&task, &config, &stopped)
            }));
        }
        let dispatcher = Arc::clone(&self.dispatcher);
        let stats = Arc::clone(&self.stats);
        let idle = Duration::from_millis(self.config.heartbeat_interval_ms);
        threads.push(thread::spawn(move || {
            processor_loop(&dispatcher, &stats, idle, &stopped)
        }));
        *running = Some(Running { stop, threads });
        Ok(())
    }

    /// Stops every thread and waits for them; stopping a stopped datanode is a no-op.
    pub fn stop(&self) {
        let Some(Running { stop, threads }) = self.running.lock().take() else {
            return;
        };
        // Disconnecting the channel wakes every waiting loop.
        drop(stop);
        for handle in threads {
            // A panicking loop already reported itself; stopping goes on with the others.
            let _ = handle.join();
        }
    }

    /// Restarts the process: stops the threads, loses the in-memory term and queue
    /// ([`StateContext::restart`]), starts again. Replicas survive.
    pub fn restart(&self) -> Result<(), DatanodeError> {
        self.stop();
        self.context.restart();
        self.start()
    }
}

impl Drop for DatanodeStateMachine {
    fn drop(&mut self) {
        self.stop();
    }
}

fn endpoint_loop(task: &HeartbeatEndpointTask, config: &DatanodeConfig, stopped: &Receiver<()>) {
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
        if stop_requested(stopped, Duration::from_millis(wait_ms)) {
            return;
        }
    }
}

fn processor_loop(
    dispatcher: &CommandDispatcher,
    stats: &ProcessorStats,
    idle: Duration,
    stopped: &Receiver<()>,
) {
    loop {
        let wait = match dispatcher.process_next() {
            Some(report) => {
                stats.record(&report.outcome);
                Duration::ZERO
            }
            None => idle,
        };
        if stop_requested(stopped, wait) {
            return;
        }
    }
}
