//! [`FencingDatanode`]: a datanode's control plane wired to in-process SCMs, its tasks
//! driven step by step by a scenario, and the [`Observed`] record of each dispatch.
//!
//! **The race (HDDS-17268).** A restarted datanode that discards a heartbeat term before
//! `StateContext.initTermOfLeaderSCM`, or loses one of two concurrent
//! `updateTermOfLeaderSCM` calls, settles on a deposed leader's term and runs its commands.
//!
//! **What this wires.** A real `StateContext`, one real `HeartbeatEndpointTask` per SCM
//! and a real `CommandDispatcher` over real replicas; beside them a ghost record of the
//! highest term the datanode took, which the scenarios' invariants judge dispatches by.

use crate::clock::Clock;
use crate::datanode::DatanodeError;
use crate::datanode::container::controller::shared_controller;
use crate::datanode::container::handler::KeyValueHandler;
use crate::datanode::dispatcher::{CommandDispatcher, CommandReport};
use crate::datanode::executors::Executor;
use crate::datanode::heartbeat::{HeartbeatEndpointTask, TaskOutcome};
use crate::datanode::state_context::{StateContext, StateContextApi, StateContextFactory};
use crate::hdds::container::ContainerState;
use crate::hdds::heartbeat::ScmEndpoint;
use crate::hdds::ids::{ContainerId, DatanodeId, ScmId};
use crate::hdds::term::Term;
use crate::sim::replicas::replicas_in_state;
use crate::sim::scm_endpoint::InProcessScm;
use crate::sync::{Arc, RwLock, thread};
use crate::unmodelled::HighWater;

/// A dispatched command together with the highest term the harness had seen the datanode
/// take (from heartbeat responses and their commands) just before the dispatch.
///
/// The harness records terms itself, after each heartbeat task returns, so the judgement
/// does not rest on bookkeeping of the code under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    /// What the processor did.
    pub report: CommandReport,
    /// Highest term heard before the dispatch, `None` if none.
    pub heard_before: Option<Term>,
    /// Highest term heard after the dispatch, when the handler was about to run it (the
    /// delete-container handler and the replication supervisor read the term again then,
    /// HDDS-7620).
    pub heard_before_run: Option<Term>,
}

/// A datanode's control plane wired to in-process SCMs, driven step by step, over any
/// implementation of the term-fencing boundary ([`StateContextApi`]).
#[derive(Debug)]
pub struct FencingDatanode<C: StateContextApi = StateContext> {
    /// Its id.
    pub id: DatanodeId,
    /// The state context.
    pub context: Arc<C>,
    /// The replicas the commands act on.
    pub replicas: Arc<KeyValueHandler>,
    /// The containers it held a replica of when it was created.
    pub initial_containers: Vec<ContainerId>,
    /// The command processor.
    pub dispatcher: CommandDispatcher<C>,
    /// One heartbeat task per SCM, in the order of the SCMs given.
    pub tasks: Vec<HeartbeatEndpointTask<C>>,
    /// The harness's own record: the highest term the datanode took from a heartbeat
    /// response or its commands since the last restart. A ghost variable, invisible to
    /// the checkers, so it adds no interleaving of its own.
    heard: HighWater,
}

impl<C: StateContextApi> FencingDatanode<C> {
    /// A started datanode holding `containers` (closed, empty), with one endpoint per SCM,
    /// its context built by `factory` (a `StateContextBehavior` builds the crate's own).
    pub fn new<F: StateContextFactory<Context = C>>(
        id: DatanodeId,
        factory: F,
        scms: &[InProcessScm],
        containers: &[ContainerId],
        clock: Arc<dyn Clock>,
    ) -> Result<Self, DatanodeError> {
        let replicas = replicas_in_state(id, containers, ContainerState::Closed)?;
        Self::assemble(id, factory, scms, (replicas, containers.to_vec()), clock)
    }

    /// A started datanode over `replicas` (a handler set up elsewhere, with blocks), with
    /// one endpoint per SCM.
    pub fn over<F: StateContextFactory<Context = C>>(
        id: DatanodeId,
        factory: F,
        scms: &[InProcessScm],
        replicas: Arc<KeyValueHandler>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, DatanodeError> {
        let containers = replicas.container_ids();
        Self::assemble(id, factory, scms, (replicas, containers), clock)
    }

    fn assemble<F: StateContextFactory<Context = C>>(
        id: DatanodeId,
        factory: F,
        scms: &[InProcessScm],
        (replicas, initial_containers): (Arc<KeyValueHandler>, Vec<ContainerId>),
        clock: Arc<dyn Clock>,
    ) -> Result<Self, DatanodeError> {
        let endpoints: Vec<(ScmId, bool)> = scms.iter().map(|s| (s.scm_id(), false)).collect();
        let context = Arc::new(factory.create(id, &endpoints, Arc::clone(&clock))?);
        let controller = shared_controller(&replicas);
        let scm_endpoints: Vec<Arc<dyn ScmEndpoint>> =
            scms.iter().map(InProcessScm::endpoint).collect();
        let tasks = HeartbeatEndpointTask::for_all_endpoints(id, &context, &scm_endpoints)?;
        Ok(Self {
            id,
            dispatcher: CommandDispatcher::new(Arc::clone(&context), controller, clock),
            replicas,
            initial_containers,
            context,
            tasks,
            heard: HighWater::new(),
        })
    }

    /// One cycle of the endpoint thread of SCM number `index`; records the terms the
    /// datanode took once the task has returned.
    pub fn heartbeat(&self, index: usize) -> Result<TaskOutcome, DatanodeError> {
        let task = self
            .tasks
            .get(index)
            .ok_or_else(|| DatanodeError::InvalidConfig {
                reason: format!(
                    "no endpoint number {index}: the datanode has {}",
                    self.tasks.len()
                ),
            })?;
        let outcome = task.run_once()?;
        if let TaskOutcome::Heartbeat(summary) = &outcome {
            if let Some(term) = summary.term.max(summary.max_queued_term) {
                self.heard.record(term);
            }
        }
        Ok(outcome)
    }

    /// One call of the command processor, with what had been heard before it.
    pub fn process(&self) -> Option<Observed> {
        let heard_before = self.heard();
        let dispatched = self.dispatcher.take_next()?;
        if Executor::of(&dispatched.command.kind) != Executor::Processor {
            // The processor hands the command to its handler's own thread
            // (`executor.execute` in `DeleteContainerCommandHandler`, the
            // `ReplicationSupervisor`'s queue): a heartbeat may land before it runs, whether
            // or not the handler reads the term again (HDDS-7620).
            thread::yield_now();
        }
        // Harness bookkeeping, no scheduling point.
        let heard_before_run = self.heard();
        Some(Observed {
            report: self.dispatcher.handle(dispatched),
            heard_before,
            heard_before_run,
        })
    }

    /// The highest term heard since the last restart.
    pub fn heard(&self) -> Option<Term> {
        self.heard.get()
    }

    /// Restarts the process ([`StateContextApi::restart`]); the caller makes sure no step of
    /// the old process is in flight.
    pub fn restart(&self) {
        self.context.restart();
        self.heard.reset();
    }

    /// [`FencingDatanode::heartbeat`] while holding `lifetime` shared.
    pub fn heartbeat_within(
        &self,
        lifetime: &RwLock<()>,
        index: usize,
    ) -> Result<TaskOutcome, DatanodeError> {
        let _alive = lifetime.read();
        self.heartbeat(index)
    }

    /// [`FencingDatanode::process`] while holding `lifetime` shared.
    pub fn process_within(&self, lifetime: &RwLock<()>) -> Option<Observed> {
        let _alive = lifetime.read();
        self.process()
    }

    /// Runs every endpoint through GETVERSION and REGISTER, one after the other, so that
    /// all of them heartbeat next. No heartbeat response is processed.
    pub fn register_all(&self) -> Result<(), DatanodeError> {
        for task in &self.tasks {
            task.run_once()?;
            task.run_once()?;
        }
        Ok(())
    }

    /// Runs the command processor until it takes nothing; bounded by the queue length.
    pub fn drain(&self) -> Vec<Observed> {
        let bound = self.context.queue_len() + 1;
        (0..bound).map_while(|_| self.process()).collect()
    }
}
