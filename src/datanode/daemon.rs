//! The datanode assembled (`DatanodeStateMachine` with `OzoneContainer`): the state
//! context, one heartbeat thread per SCM, the command processor, the replicas behind their
//! [`ContainerController`], the block deleting service on its own thread, and the
//! on-demand scanner that reconciliation triggers. It restarts from its volume.
//!
//! The drivers are thin on purpose: all decisions live in the tasks, which checker
//! scenarios call step by step on threads of their own. Pacing waits on a stop channel
//! with a timeout; no decision depends on that timeout, so in the model builds (where a
//! timed wait returns at once) the loops only spin faster.
//!
//! # Example
//!
//! ```
//! # hadoop_ref::sync::run_driver_example(|| {
//! use hadoop_ref::clock::ManualClock;
//! use hadoop_ref::datanode::container::ContainerController;
//! use hadoop_ref::datanode::container::store::MemoryStore;
//! use hadoop_ref::datanode::container::volume::MemoryVolume;
//! use hadoop_ref::datanode::daemon::{Datanode, DatanodeConfig};
//! use hadoop_ref::hdds::container::ContainerState;
//! use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, ScmId};
//! use hadoop_ref::sim::scm_endpoint::InProcessScm;
//!
//! let scm = InProcessScm::new(ScmId(1));
//! scm.become_leader(1);
//! let volume = MemoryVolume::new();
//! volume.insert(ContainerId(1), MemoryStore::new(ContainerState::Closed))?;
//! let config = DatanodeConfig {
//!     heartbeat_interval_ms: 1,
//!     initial_heartbeat_interval_ms: 1,
//!     ..Default::default()
//! };
//! let dn = Datanode::new(
//!     DatanodeId(1),
//!     config,
//!     vec![scm.endpoint()],
//!     volume.shared(),
//!     None,
//!     ManualClock::new(0).shared(),
//! )?;
//! dn.start()?;
//! dn.restart()?; // the replica is found again in the volume
//! assert_eq!(dn.replicas().container_report().len(), 1);
//! dn.stop();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # });
//! ```
//!
//! [`ContainerController`]: super::container::controller::ContainerController

use super::container::controller::shared_controller;
use super::container::handler::KeyValueHandler;
use super::container::reconcile::PeerDirectory;
use super::container::volume::ContainerVolume;
use super::dispatcher::CommandDispatcher;
use super::error::DatanodeError;
use super::executors::{ExecutorStep, HandlerExecutors};
use super::heartbeat::{HeartbeatEndpointTask, TaskOutcome};
use super::reports::ReportPublisher;
use super::services::{Completion, Pacing, Processor, Threads};
pub use super::settings::{COMMAND_HISTORY_LIMIT, DatanodeConfig, ProcessorStats};
use super::state_context::StateContext;
use crate::clock::{Clock, StopFlag};
use crate::hdds::heartbeat::ScmEndpoint;
use crate::hdds::ids::DatanodeId;
use crate::sync::channel::{self, Sender};
use crate::sync::{Arc, Mutex, thread};

#[derive(Debug)]
struct Running {
    /// Wall-clock pacing's stop: dropping it disconnects every waiting loop.
    stopped: Sender<()>,
    stop: StopFlag,
    pacing: Pacing,
    threads: Vec<thread::JoinHandle<()>>,
}

/// One datanode: its control plane, its replicas, and its threads.
#[derive(Debug)]
pub struct Datanode {
    id: DatanodeId,
    config: DatanodeConfig,
    scms: Vec<Arc<dyn ScmEndpoint>>,
    context: Arc<StateContext>,
    handler: Arc<KeyValueHandler>,
    dispatcher: Arc<CommandDispatcher>,
    executors: Arc<HandlerExecutors>,
    reports: Arc<ReportPublisher>,
    stats: Arc<ProcessorStats>,
    running: Mutex<Option<Running>>,
}

impl Datanode {
    /// A stopped datanode talking to `scms` (all active endpoints), with the replicas
    /// `volume` holds, reaching its peers through `peers` (none: reconcile and replicate
    /// commands fail).
    pub fn new(
        id: DatanodeId,
        config: DatanodeConfig,
        scms: Vec<Arc<dyn ScmEndpoint>>,
        volume: Arc<dyn ContainerVolume>,
        peers: Option<Arc<dyn PeerDirectory>>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, DatanodeError> {
        let endpoints: Vec<_> = scms.iter().map(|s| (s.scm_id(), false)).collect();
        let context = Arc::new(
            StateContext::new(
                config.behavior,
                config.context.clone(),
                &endpoints,
                Arc::clone(&clock),
            )?
            .for_datanode(id),
        );
        let mut handler = KeyValueHandler::open(id, config.container, volume)?;
        if let Some(peers) = peers {
            handler = handler.with_peers(peers);
        }
        let handler = Arc::new(handler);
        let controller = shared_controller(&handler);
        let scm_ids: Vec<_> = endpoints.iter().map(|(scm, _)| *scm).collect();
        let reports = Arc::new(ReportPublisher::new(id, &scm_ids, Arc::clone(&controller)));
        let dispatcher = Arc::new(CommandDispatcher::new(
            Arc::clone(&context),
            controller,
            clock,
        ));
        let executors = Arc::new(HandlerExecutors::new(
            Arc::clone(&dispatcher),
            Arc::clone(&handler),
        ));
        Ok(Self {
            id,
            config,
            scms,
            context,
            handler,
            dispatcher,
            executors,
            reports,
            stats: Arc::new(ProcessorStats::default()),
            running: Mutex::new(None),
        })
    }

    /// The datanode's id.
    pub fn id(&self) -> DatanodeId {
        self.id
    }

    /// The state context.
    pub fn context(&self) -> &Arc<StateContext> {
        &self.context
    }

    /// The replicas (`KeyValueHandler`), as the command handlers and peers reach them.
    pub fn replicas(&self) -> &Arc<KeyValueHandler> {
        &self.handler
    }

    /// What its heartbeats carry (set the node report here).
    pub fn reports(&self) -> &Arc<ReportPublisher> {
        &self.reports
    }

    /// The command processor's counters.
    pub fn stats(&self) -> &ProcessorStats {
        &self.stats
    }

    /// Starts every thread ([`services`](super::services)) paced by the wall clock: a
    /// heartbeat thread per SCM, the command processor, the replication supervisor, the
    /// delete-container executor, the on-demand scanner and the block deleting service.
    /// Starting a running datanode is a no-op.
    pub fn start(&self) -> Result<(), DatanodeError> {
        self.start_with(Pacing::WallClock)
    }

    /// [`start`](Self::start) with the time-driven threads paced by `pacing`.
    pub fn start_with(&self, pacing: Pacing) -> Result<(), DatanodeError> {
        let mut running = self.running.lock();
        if running.is_some() {
            return Ok(());
        }
        let tasks = HeartbeatEndpointTask::for_all_endpoints(self.id, &self.context, &self.scms)?;
        // The await bound counts from the start of the threads, not from construction.
        self.context.mark_started();
        let (stopped, stopped_rx) = channel::bounded::<()>(1);
        let stop = StopFlag::new();
        let spawner = Threads {
            name: self.id.to_string(),
            config: &self.config,
            pacing: &pacing,
            stopped: &stopped_rx,
            stop: &stop,
        };
        let mut threads = Vec::with_capacity(tasks.len() + 5);
        for task in tasks {
            threads.push(spawner.endpoint(task.with_reports(Arc::clone(&self.reports))));
        }
        let processor = self.processor();
        threads.extend(spawner.executors(&self.executors, &processor.completion));
        threads.push(spawner.processor(processor));
        threads.push(spawner.scanner(&self.handler));
        threads.push(spawner.block_deleting(&self.handler));
        *running = Some(Running {
            stopped,
            stop,
            pacing,
            threads,
        });
        Ok(())
    }

    /// Stops every thread and waits for them; stopping a stopped datanode is a no-op. A
    /// command an executor has queued and not begun stays queued (a stepping driver runs
    /// it; a restart loses it).
    pub fn stop(&self) {
        let Some(running) = self.running.lock().take() else {
            return;
        };
        match &running.pacing {
            Pacing::Paced(pace) => pace.stop(&running.stop),
            Pacing::WallClock => running.stop.set(),
        }
        // Disconnecting the channel wakes every loop paced by the wall clock.
        drop(running.stopped);
        self.executors.wake();
        self.handler.scanner().wake();
        for handle in running.threads {
            // A panicking loop already reported itself; stopping goes on with the others.
            let _ = handle.join();
        }
    }

    /// Whether its threads run.
    pub fn is_started(&self) -> bool {
        self.running.lock().is_some()
    }

    /// Restarts the process: stops the threads, loses the in-memory term and queue
    /// ([`StateContext::restart`]) and every replica's in-memory state, reloads the
    /// replicas from the volume, and starts again.
    pub fn restart(&self) -> Result<(), DatanodeError> {
        let pacing = self.running.lock().as_ref().map(|r| r.pacing.clone());
        self.restart_stopped()?;
        self.start_with(pacing.unwrap_or(Pacing::WallClock))
    }

    /// [`restart`](Self::restart) without starting the threads: for a datanode driven by
    /// [`tick`](Self::tick).
    pub fn restart_stopped(&self) -> Result<(), DatanodeError> {
        self.stop();
        self.context.restart();
        self.executors.clear();
        self.handler.restart()?;
        self.context.mark_started();
        Ok(())
    }

    /// The datanode's work once, on the calling thread instead of its own threads: each
    /// SCM endpoint steps until it has sent a heartbeat (at most GETVERSION, REGISTER,
    /// HEARTBEAT), every command queued runs, then the block deleting service runs once.
    /// For a driver that steps a whole cluster; not to be mixed with [`start`](Self::start).
    /// An SCM that does not answer is skipped until the next tick.
    pub fn tick(&self) -> Result<Tick, DatanodeError> {
        let tick = self.tick_commands()?;
        // A failed task is retried next tick, as the service retries next interval.
        let _ = self.handler.run_block_deleting_service();
        Ok(tick)
    }

    /// [`tick`](Self::tick) without the block deleting service: the heartbeats and the
    /// commands only, for a driver that runs the service on a thread of its own (as a
    /// datanode does), so that a deletion can land while a command (a reconciliation)
    /// runs.
    ///
    /// ```
    /// # hadoop_ref::sync::run_driver_example(|| {
    /// use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;
    ///
    /// let cluster = MiniOzoneCluster::builder().build()?;
    /// let tick = cluster.datanode(0)?.tick_commands()?;
    /// // One heartbeat to each of the three SCMs.
    /// assert_eq!(tick.heartbeats, 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # });
    /// ```
    pub fn tick_commands(&self) -> Result<Tick, DatanodeError> {
        let mut tick = Tick::default();
        for scm in self.scms.iter().map(|scm| scm.scm_id()) {
            if self.heartbeat_to(scm)? {
                tick.heartbeats += 1;
            }
        }
        // What the executors hold from before (the datanode's threads stopped with work
        // queued) runs first. Then, bounded by the queue's limit (commands are queued only
        // by heartbeats), each command runs to its end before the next, so the queue's
        // order is the order they run in.
        self.run_executors_to_idle();
        let processor = self.processor();
        while processor.process_next() {
            tick.commands += 1;
            self.run_executors_to_idle();
        }
        Ok(tick)
    }

    /// The heartbeat thread of the endpoint of `scm`, stepped until it has sent a
    /// heartbeat (at most GETVERSION, REGISTER, HEARTBEAT): true when the SCM answered a
    /// heartbeat. An SCM that does not answer is skipped (false).
    pub fn heartbeat_to(&self, scm: crate::hdds::ids::ScmId) -> Result<bool, DatanodeError> {
        let tasks = HeartbeatEndpointTask::for_all_endpoints(self.id, &self.context, &self.scms)?;
        let Some(task) = tasks.into_iter().find(|t| t.endpoint().scm() == scm) else {
            return Ok(false);
        };
        let task = task.with_reports(Arc::clone(&self.reports));
        // Bounded: an endpoint moves GETVERSION → REGISTER → HEARTBEAT.
        for _ in 0..3 {
            match task.run_once() {
                Ok(TaskOutcome::Heartbeat(_)) => return Ok(true),
                Ok(TaskOutcome::Versioned | TaskOutcome::Registered) => {}
                Ok(TaskOutcome::Shutdown) | Err(_) => return Ok(false),
            }
        }
        Ok(false)
    }

    /// The command processor once: the next command run, or handed to its executor.
    /// False when no command could be taken.
    pub fn process_command(&self) -> bool {
        self.processor().process_next()
    }

    /// One step of the replication supervisor: a reconciliation's next step, or its next
    /// command started. `false` when it had nothing to do.
    pub fn supervisor_step(&self) -> bool {
        self.record_step(self.executors.supervisor_step())
    }

    /// The delete-container executor's next command run. `false` when none was queued.
    pub fn delete_container_step(&self) -> bool {
        self.record_step(self.executors.delete_container_step())
    }

    /// The on-demand scanner's next queued scan run. `false` when none was queued.
    pub fn scan_step(&self) -> bool {
        self.handler.scanner().run_next().is_some()
    }

    /// The executors' commands and the scans queued, each run to its end.
    pub fn run_executors_to_idle(&self) {
        // Bounded: the queues hold at most their limits and take nothing new meanwhile
        // (only the processor, on this thread, submits), and a reconciliation's steps are
        // bounded by its peers and their blocks.
        while self.supervisor_step() {}
        while self.delete_container_step() {}
        while self.scan_step() {}
    }

    /// Feeds `state` the datanode's protocol state: its state context, what its executors
    /// and its scanner hold, the statuses waiting for each SCM, and each replica
    /// ([`KeyValueContainer::digest`](super::container::replica::KeyValueContainer::digest)).
    /// Counters and the command history are left out.
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) -> Result<(), DatanodeError> {
        use std::hash::Hash;
        self.context.digest(state);
        self.executors.digest(state);
        self.reports.digest(state);
        self.handler.digest(state);
        for id in self.handler.container_ids() {
            id.hash(state);
            self.handler.container(id)?.digest(state)?;
        }
        Ok(())
    }

    /// The command handlers' executors (the replication supervisor, the delete-container
    /// executor).
    pub fn executors(&self) -> &Arc<HandlerExecutors> {
        &self.executors
    }

    /// Commands the executors hold (queued or running) and scans queued.
    pub fn executor_backlog(&self) -> usize {
        let (supervisor, delete_container) = self.executors.in_flight();
        supervisor + delete_container + self.handler.scanner().queued()
    }

    fn record_step(&self, step: ExecutorStep) -> bool {
        match step {
            ExecutorStep::Idle => false,
            ExecutorStep::Progressed => true,
            ExecutorStep::Finished(report) => {
                self.processor().completion.record(&report);
                true
            }
        }
    }
}

impl Datanode {
    /// The command processor's parts, for a thread or a tick.
    fn processor(&self) -> Processor {
        Processor {
            dispatcher: Arc::clone(&self.dispatcher),
            executors: Arc::clone(&self.executors),
            completion: Completion {
                reports: Arc::clone(&self.reports),
                stats: Arc::clone(&self.stats),
            },
        }
    }
}

/// What one [`Datanode::tick`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tick {
    /// Heartbeats an SCM answered.
    pub heartbeats: usize,
    /// Commands taken from the queue (run, skipped or refused).
    pub commands: usize,
}

impl Drop for Datanode {
    fn drop(&mut self) {
        self.stop();
    }
}
