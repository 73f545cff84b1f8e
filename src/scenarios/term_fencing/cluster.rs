//! The random term-fencing cluster (HDDS-17268): three in-process SCMs pass leadership
//! around while one datanode heartbeats to all of them, runs their commands and restarts,
//! every step drawn from a seed. Five spawned threads: a shuttle scenario, too big for loom.
//!
//! The race: a restart during a failover, while a deposed leader still holds commands for
//! the datanode (or still believes it leads), and two endpoint threads applying terms at
//! once. The fix under test: `StateContext.updateTermOfLeaderSCM` under the context lock,
//! and a heartbeat term seen before `initTermOfLeaderSCM` kept for init.

use super::invariants::{
    datanode_term_covers_heard_terms, no_command_below_heard_term,
    no_handed_over_command_runs_below_heard_term, replicas_follow_dispatched_deletes,
    term_never_decreases,
};
use super::setup::{SCENARIO_START_MS, in_process_scms, setup_error};
use crate::clock::{Clock, ManualClock};
use crate::datanode::state_context::{StateContextApi, StateContextFactory};
use crate::hdds::command::CommandKind;
use crate::hdds::ids::{ContainerId, DatanodeId, PipelineId};
use crate::hdds::term::Term;
use crate::scenarios::rng::SeededRng;
use crate::scenarios::{Violation, join_all};
use crate::sim::fencing_datanode::{FencingDatanode, Observed};
use crate::sim::scm_endpoint::InProcessScm;
use crate::sync::atomic::{AtomicBool, Ordering};
use crate::sync::{Arc, RwLock, thread};

/// Size of a [`leader_transfers_never_run_a_stale_command`] run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FencingClusterShape {
    /// Steps of the controller (transfers, commands, restarts, pauses, clock ticks).
    pub controller_steps: usize,
    /// Cycles each heartbeat thread and the processor run after the controller is done.
    pub tail_rounds: usize,
    /// Bound on the cycles of each heartbeat thread and of the processor.
    pub max_rounds: usize,
}

impl Default for FencingClusterShape {
    fn default() -> Self {
        Self {
            controller_steps: 12,
            tail_rounds: 3,
            max_rounds: 64,
        }
    }
}

/// Clock ticks of the controller stay this far below
/// [`StateContextConfig`](crate::datanode::state_context::StateContextConfig)'s default
/// await bound (90 s), so [`StateContextBehavior::Hardened`](crate::datanode::state_context::StateContextBehavior::Hardened) never falls back within
/// a run.
const MAX_TICK_MS: u64 = 8_000;

type StepThread = thread::JoinHandle<Result<Vec<Observed>, Violation>>;

/// Three in-process SCMs, one datanode with three replicas, a controller thread that
/// transfers leadership (the old leader sometimes lingering as a self-believed leader),
/// issues commands from whoever believes it leads, restarts the datanode, pauses and
/// resumes SCMs and ticks the clock, all from `seed`; three heartbeat threads and the
/// command processor run meanwhile (five spawned threads: a shuttle scenario, too big for
/// loom).
///
/// Checks [`term_never_decreases`] per thread,
/// [`term_covers_heard_terms`](super::term_covers_heard_terms) at the end,
/// [`no_command_below_heard_term`] and [`no_handed_over_command_runs_below_heard_term`]
/// over every command.
pub fn leader_transfers_never_run_a_stale_command<F: StateContextFactory>(
    factory: F,
    seed: u64,
    shape: FencingClusterShape,
) -> Result<(), Violation> {
    let clock = ManualClock::new(SCENARIO_START_MS);
    let scms = in_process_scms(3);
    let dn = DatanodeId(1);
    let containers: Vec<ContainerId> = (1..=3).map(ContainerId).collect();
    let datanode = Arc::new(
        FencingDatanode::new(dn, factory, &scms, &containers, clock.shared())
            .map_err(setup_error)?,
    );
    scms[0].become_leader(1);

    // Every step holds the process lifetime shared, a restart holds it exclusively: a
    // restart ends the process, so no step of the old process runs across it.
    let lifetime = Arc::new(RwLock::new(()));
    // The datanode's threads run while the controller does, then a few cycles more.
    let controller_done = Arc::new(AtomicBool::new(false));
    let threads = DatanodeThreads {
        datanode: &datanode,
        lifetime: &lifetime,
        controller_done: &controller_done,
        shape,
    };
    let mut handles: Vec<StepThread> = (0..scms.len())
        .map(|index| threads.spawn_heartbeats(index))
        .collect();
    handles.push(threads.spawn_processor());
    let controller = Controller {
        datanode: Arc::clone(&datanode),
        scms: scms.clone(),
        lifetime,
        rng: SeededRng::new(seed),
        clock,
        containers,
        next_term: 2,
    };
    handles.push(spawn_controller(
        controller,
        Arc::clone(&controller_done),
        shape.controller_steps,
    ));
    let mut dispatches = join_all(handles)?;
    dispatches.extend(datanode.drain());
    datanode_term_covers_heard_terms(&datanode)?;
    no_command_below_heard_term(&dispatches)?;
    no_handed_over_command_runs_below_heard_term(&dispatches)?;
    replicas_follow_dispatched_deletes(&datanode, &dispatches)
}

/// Whether a datanode thread runs another cycle: always while the controller runs, then
/// `tail` cycles more.
fn keep_running(done: &AtomicBool, tail: &mut usize) -> bool {
    if done.load(Ordering::Acquire) {
        if *tail == 0 {
            return false;
        }
        *tail -= 1;
    }
    true
}

/// What the datanode's threads share, for spawning them.
struct DatanodeThreads<'a, C: StateContextApi> {
    datanode: &'a Arc<FencingDatanode<C>>,
    lifetime: &'a Arc<RwLock<()>>,
    controller_done: &'a Arc<AtomicBool>,
    shape: FencingClusterShape,
}

impl<C: StateContextApi> DatanodeThreads<'_, C> {
    /// The endpoint thread of SCM number `index`; checks [`term_never_decreases`] over the
    /// terms it observed.
    fn spawn_heartbeats(&self, index: usize) -> StepThread {
        let datanode = Arc::clone(self.datanode);
        let done = Arc::clone(self.controller_done);
        let lifetime = Arc::clone(self.lifetime);
        let shape = self.shape;
        thread::spawn_named(&format!("endpoint scm{}", index + 1), move || {
            let mut observations = Vec::new();
            let mut tail = shape.tail_rounds;
            for _ in 0..shape.max_rounds {
                if !keep_running(&done, &mut tail) {
                    break;
                }
                // An unanswered or refused heartbeat is part of the scenario.
                let _ = datanode.heartbeat_within(&lifetime, index);
                observations.push(datanode.context.observe());
                thread::yield_now();
            }
            term_never_decreases(&observations).map(|()| Vec::new())
        })
    }

    /// The command processor; returns every command it took, after checking
    /// [`term_never_decreases`] over the terms it observed.
    fn spawn_processor(&self) -> StepThread {
        let datanode = Arc::clone(self.datanode);
        let done = Arc::clone(self.controller_done);
        let lifetime = Arc::clone(self.lifetime);
        let shape = self.shape;
        thread::spawn_named("command processor", move || {
            let mut reports = Vec::new();
            let mut observations = Vec::new();
            let mut tail = shape.tail_rounds;
            for _ in 0..shape.max_rounds {
                if !keep_running(&done, &mut tail) {
                    break;
                }
                reports.extend(datanode.process_within(&lifetime));
                observations.push(datanode.context.observe());
                thread::yield_now();
            }
            term_never_decreases(&observations).map(|()| reports)
        })
    }
}

/// The controller thread: `steps` random steps, then it tells the datanode's threads it
/// is done (also when a step fails, so that they stop).
fn spawn_controller<C: StateContextApi>(
    mut controller: Controller<C>,
    done: Arc<AtomicBool>,
    steps: usize,
) -> StepThread {
    thread::spawn_named("controller", move || {
        for _ in 0..steps {
            let step = controller.step();
            if step.is_err() {
                done.store(true, Ordering::Release);
            }
            step?;
            thread::yield_now();
        }
        done.store(true, Ordering::Release);
        Ok(Vec::new())
    })
}

/// The cluster's operator and its SCMs' leadership, drawing every step from a seed.
struct Controller<C: StateContextApi> {
    lifetime: Arc<RwLock<()>>,
    rng: SeededRng,
    scms: Vec<InProcessScm>,
    datanode: Arc<FencingDatanode<C>>,
    clock: ManualClock,
    containers: Vec<ContainerId>,
    next_term: Term,
}

impl<C: StateContextApi> Controller<C> {
    fn step(&mut self) -> Result<(), Violation> {
        match self.rng.below(100) {
            // Leadership moves; a third of the time the old leader lingers, believing it
            // leads, until a later transfer tells it.
            0..=19 => self.transfer_leadership(),
            // The seed's trigger: the datanode restarts during the failover, while the old
            // leader may still hold commands for it.
            20..=29 => {
                self.transfer_leadership();
                self.restart_datanode();
            }
            30..=64 => self.queue_command_from_a_believer(),
            65..=74 => self.restart_datanode(),
            75..=89 => self.pause_or_resume_an_scm(),
            _ => {
                self.clock.advance_ms(1 + self.rng.below(MAX_TICK_MS));
            }
        }
        Ok(())
    }

    fn restart_datanode(&self) {
        let _dead = self.lifetime.write();
        self.datanode.restart();
    }

    fn transfer_leadership(&mut self) {
        let to = self.rng.below(self.scms.len() as u64) as usize;
        let linger = self.rng.chance(35);
        for (i, scm) in self.scms.iter().enumerate() {
            if i != to && !(linger && scm.leadership().is_some()) {
                scm.step_down();
            }
        }
        self.scms[to].become_leader(self.next_term);
        self.next_term += 1;
    }

    /// An SCM that believes it leads (if any) queues a command for the datanode.
    fn queue_command_from_a_believer(&mut self) {
        let believers: Vec<_> = self
            .scms
            .iter()
            .filter(|s| s.leadership().is_some())
            .cloned()
            .collect();
        if !believers.is_empty() {
            let scm = believers[self.rng.below(believers.len() as u64) as usize].clone();
            let kind = self.command_kind();
            let deadline_ms = self.clock.now_ms() + 5_000 + self.rng.below(30_000);
            // A refusal means it stopped believing meanwhile: nothing to send.
            let _ = scm.queue_command(self.datanode.id, kind, deadline_ms);
        }
    }

    fn pause_or_resume_an_scm(&mut self) {
        let scm = &self.scms[self.rng.below(self.scms.len() as u64) as usize];
        if self.rng.chance(50) {
            scm.pause();
        } else {
            scm.resume();
        }
    }

    fn command_kind(&mut self) -> CommandKind {
        let container = self.containers[self.rng.below(self.containers.len() as u64) as usize];
        match self.rng.below(3) {
            0 => CommandKind::DeleteContainer {
                container,
                force: true,
            },
            1 => CommandKind::CloseContainer {
                container,
                pipeline: PipelineId(1),
                force: false,
            },
            _ => CommandKind::ReplicateContainer {
                container: ContainerId(100 + self.rng.below(3)),
                sources: vec![DatanodeId(2)],
            },
        }
    }
}
