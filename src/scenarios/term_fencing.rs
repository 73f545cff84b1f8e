//! Scenarios and invariants of datanode SCM-term fencing (HDDS-17268), shared by the loom
//! and shuttle tests, the soak tool and the property tests.
//!
//! **The race.** A datanode that discards the heartbeat term before init, or loses a
//! concurrent term update, settles on an old leader's term and runs that leader's commands
//! (a force delete of a replica in the seed's reproduction).
//!
//! **What is checked.** Every scenario wires real [`StateContext`]s, real
//! [`HeartbeatEndpointTask`]s and a real [`CommandDispatcher`] to [`InProcessScm`]s, runs
//! heartbeat threads and the command processor concurrently, and checks the invariants
//! below over what they observed. A scenario is a plain function: any checker, or none,
//! can run it.

use super::rng::SeededRng;
use super::{Violation, join_all};
use crate::clock::{Clock, ManualClock};
use crate::datanode::DatanodeError;
use crate::datanode::container::handler::KeyValueHandler;
use crate::datanode::dispatcher::{CommandDispatcher, CommandReport};
use crate::datanode::heartbeat::{HeartbeatEndpointTask, TaskOutcome};
use crate::datanode::state_context::{
    StateContext, StateContextBehavior, StateContextConfig, TermObservation,
};
use crate::hdds::command::CommandKind;
use crate::hdds::container::ContainerState;
use crate::hdds::heartbeat::ScmEndpoint;
use crate::hdds::ids::{ContainerId, DatanodeId, ScmId};
use crate::hdds::term::Term;
use crate::sim::replicas::{controller_of, replicas_in_state};
use crate::sim::scm_endpoint::InProcessScm;
use crate::sync::atomic::{AtomicBool, Ordering};
use crate::sync::{Arc, RwLock, thread};
use crate::unmodelled::HighWater;

/// The seed every violation of this module names.
pub const SEED_KEY: &str = "HDDS-17268";

/// Where the scenarios' clocks start (any fixed time; deadlines are relative to it).
pub const SCENARIO_START_MS: u64 = 1_700_000_000_000;

fn violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: SEED_KEY,
        property,
        detail,
    }
}

// ---------------------------------------------------------------------------------------
// Invariants
// ---------------------------------------------------------------------------------------

/// I-A1: within one process lifetime, the term one thread observes never goes down.
pub fn term_never_decreases(observations: &[TermObservation]) -> Result<(), Violation> {
    for pair in observations.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        if before.incarnation != after.incarnation {
            continue;
        }
        if let (Some(b), a) = (before.term, after.term) {
            if a.is_none_or(|a| a < b) {
                return Err(violation(
                    "term never decreases",
                    format!("term went from {b} to {a:?} without a restart"),
                ));
            }
        }
    }
    Ok(())
}

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
}

/// Once initialised, the term is at least every term the datanode took from heartbeat
/// responses and their commands (since its last restart). Checked at quiescence: a lost
/// update or a discarded term shows as a term below what was heard.
pub fn term_covers_heard_terms(term: Option<Term>, heard: Option<Term>) -> Result<(), Violation> {
    match (term, heard) {
        (Some(term), Some(heard)) if term < heard => Err(violation(
            "term covers every term heard",
            format!("term is {term} after the datanode took term {heard}"),
        )),
        _ => Ok(()),
    }
}

/// I-A2: no command leaves the queue whose term is below a term the datanode had already
/// taken, from a heartbeat response or a queued command, when it was handed out. Judged at
/// dispatch, whatever the handlers then do.
pub fn no_command_below_heard_term(dispatches: &[Observed]) -> Result<(), Violation> {
    for observed in dispatches {
        let command = &observed.report.dispatched.command;
        if let Some(heard) = observed.heard_before {
            if command.term < heard {
                return Err(violation(
                    "no command below a term already taken",
                    format!(
                        "command {:?} of term {} was dispatched after the datanode took term {heard}",
                        command.kind, command.term
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The residual window of the seed's patch: when every SCM that believed it led at the
/// datanode's (re)start had a term of at least `floor`, no command of a lower term (one
/// created by a leader deposed before the restart) runs. Holds with
/// [`StateContextBehavior::AwaitLeaderTerm`] (before its bound) when the deposed leader has stepped
/// down; [`StateContextBehavior::Fixed`] violates it by design when init happens before the new
/// leader's first response. While the deposed leader still believes it leads, `floor` is
/// its term and the property says nothing: no datanode can tell the two leaders apart.
pub fn no_command_of_leader_deposed_before_restart(
    dispatches: &[Observed],
    floor: Term,
) -> Result<(), Violation> {
    match dispatches
        .iter()
        .map(|o| &o.report)
        .find(|r| r.ran() && r.dispatched.command.term < floor)
    {
        Some(report) => Err(violation(
            "no command of a leader deposed before the restart",
            format!(
                "command {:?} of term {} ran although every leader had term >= {floor} at the restart",
                report.dispatched.command.kind, report.dispatched.command.term
            ),
        )),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------
// The datanode under test
// ---------------------------------------------------------------------------------------

/// A datanode's control plane wired to in-process SCMs, driven step by step.
#[derive(Debug)]
pub struct FencingDatanode {
    /// Its id.
    pub id: DatanodeId,
    /// The state context.
    pub context: Arc<StateContext>,
    /// The replicas the commands act on.
    pub replicas: Arc<KeyValueHandler>,
    /// The command processor.
    pub dispatcher: CommandDispatcher,
    /// One heartbeat task per SCM, in the order of the SCMs given.
    pub tasks: Vec<HeartbeatEndpointTask>,
    /// The harness's own record: the highest term the datanode took from a heartbeat
    /// response or its commands since the last restart. A ghost variable, invisible to
    /// the checkers, so it adds no interleaving of its own.
    heard: HighWater,
}

impl FencingDatanode {
    /// A started datanode holding `containers` (closed, empty), with one endpoint per SCM.
    pub fn new(
        id: DatanodeId,
        behavior: StateContextBehavior,
        scms: &[InProcessScm],
        containers: &[ContainerId],
        clock: Arc<dyn Clock>,
    ) -> Result<Self, DatanodeError> {
        let endpoints: Vec<(ScmId, bool)> = scms.iter().map(|s| (s.scm_id(), false)).collect();
        let context = Arc::new(StateContext::new(
            behavior,
            StateContextConfig::default(),
            &endpoints,
            Arc::clone(&clock),
        )?);
        let replicas = replicas_in_state(id, containers, ContainerState::Closed)?;
        let controller = controller_of(&replicas);
        let scm_endpoints: Vec<Arc<dyn ScmEndpoint>> =
            scms.iter().map(InProcessScm::endpoint).collect();
        let tasks = HeartbeatEndpointTask::for_all_endpoints(id, &context, &scm_endpoints)?;
        Ok(Self {
            id,
            dispatcher: CommandDispatcher::new(Arc::clone(&context), controller, clock),
            replicas,
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
            .ok_or_else(|| DatanodeError::ScmUnreachable {
                scm: ScmId(index as u64),
                reason: "no such endpoint".into(),
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
        self.dispatcher.process_next().map(|report| Observed {
            report,
            heard_before,
        })
    }

    /// The highest term heard since the last restart.
    pub fn heard(&self) -> Option<Term> {
        self.heard.get()
    }

    /// Restarts the process ([`StateContext::restart`]); the caller makes sure no step of
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

    /// Checks [`term_covers_heard_terms`] (call at quiescence).
    pub fn check_term_covers_heard_terms(&self) -> Result<(), Violation> {
        term_covers_heard_terms(self.context.term_of_leader(), self.heard())
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

fn scms(count: u64) -> Vec<InProcessScm> {
    (1..=count).map(|i| InProcessScm::new(ScmId(i))).collect()
}

fn setup_error(error: DatanodeError) -> Violation {
    violation("scenario setup", error.to_string())
}

// ---------------------------------------------------------------------------------------
// MC5: two SCMs answer as leader at once (spec A.13)
// ---------------------------------------------------------------------------------------

/// The seed's MC5 (spec A.13): the term is 1; an old leader at term 2 that has not stepped
/// down answers with a term-2 close command while the new leader answers with term 3, on
/// two heartbeat threads, with the command processor running. Three spawned threads.
///
/// Checks [`term_covers_heard_terms`] and [`no_command_below_heard_term`]: the
/// unlocked update can leave the term at 2 and run the term-2 command.
pub fn mc5_concurrent_leader_heartbeats(behavior: StateContextBehavior) -> Result<(), Violation> {
    let clock = ManualClock::new(SCENARIO_START_MS).shared();
    let scms = scms(2);
    let (old, new) = (&scms[0], &scms[1]);
    let dn = DatanodeId(1);
    let containers = [ContainerId(1), ContainerId(2)];
    let datanode =
        FencingDatanode::new(dn, behavior, &scms, &containers, clock).map_err(setup_error)?;
    datanode.register_all().map_err(setup_error)?;

    // Term 1 is initialised from a command of the first leader.
    old.become_leader(1);
    queue(
        old,
        dn,
        CommandKind::CloseContainer {
            container: containers[0],
        },
    )?;
    datanode.heartbeat(0).map_err(setup_error)?;
    let mut dispatches = datanode.drain();
    if datanode.context.term_of_leader() != Some(1) {
        return Err(violation(
            "scenario setup",
            format!("term {:?}, expected 1", datanode.context.term_of_leader()),
        ));
    }

    // Old leader re-elected at term 2 with a command; the new leader is at term 3.
    old.become_leader(2);
    queue(
        old,
        dn,
        CommandKind::CloseContainer {
            container: containers[1],
        },
    )?;
    new.become_leader(3);

    let datanode = Arc::new(datanode);
    let handles = vec![
        spawn_heartbeats(&datanode, 0, 1),
        spawn_heartbeats(&datanode, 1, 1),
        spawn_processor(&datanode, 1),
    ];
    dispatches.extend(join_all(handles)?);
    dispatches.extend(datanode.drain());

    datanode.check_term_covers_heard_terms()?;
    no_command_below_heard_term(&dispatches)
}

// ---------------------------------------------------------------------------------------
// MC4: a stale leader's command before term init (spec A.12)
// ---------------------------------------------------------------------------------------

/// What the old leader does when leadership moves in [`mc4_stale_leader_before_init`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OldLeader {
    /// It has not been told yet and still answers with its term 1.
    StillBelievesItLeads,
    /// It stepped down but still holds the command, which it hands out without a term.
    SteppedDownHoldingCommand,
}

/// What an MC4 run observed, for the invariants to judge.
#[derive(Debug)]
pub struct Mc4Run {
    /// Every command the processor took.
    pub dispatches: Vec<Observed>,
    /// The lowest term among the SCMs that believed they led at the restart.
    pub leader_term_floor_at_restart: Term,
    /// The datanode, quiescent.
    pub datanode: FencingDatanode,
}

/// The seed's MC4 (spec A.12): SCM A led at term 1 and queued a force delete of a replica
/// for the datanode; leadership moves to SCM B (term 2) and the datanode restarts. B's
/// heartbeats (term 2, no commands) race A's response carrying the command and the
/// command processor; `rounds` heartbeats per thread. Three spawned threads.
pub fn mc4_stale_leader_before_init(
    behavior: StateContextBehavior,
    old_leader: OldLeader,
    rounds: usize,
) -> Result<Mc4Run, Violation> {
    let clock = ManualClock::new(SCENARIO_START_MS).shared();
    let scms = scms(3);
    let (a, b) = (&scms[0], &scms[1]);
    let dn = DatanodeId(1);
    let replica = ContainerId(1);
    let datanode =
        FencingDatanode::new(dn, behavior, &scms, &[replica], clock).map_err(setup_error)?;

    a.become_leader(1);
    queue(
        a,
        dn,
        CommandKind::DeleteContainer {
            container: replica,
            force: true,
        },
    )?;
    b.become_leader(2);
    if old_leader == OldLeader::SteppedDownHoldingCommand {
        a.step_down();
    }
    datanode.context.restart();
    datanode.register_all().map_err(setup_error)?;
    let leader_term_floor_at_restart = scms
        .iter()
        .filter_map(|s| s.leadership())
        .min()
        .unwrap_or(Term::MIN);

    let datanode = Arc::new(datanode);
    let handles = vec![
        spawn_heartbeats(&datanode, 1, rounds),
        spawn_heartbeats(&datanode, 0, rounds),
        spawn_processor(&datanode, rounds),
    ];
    let mut dispatches = join_all(handles)?;
    // B has answered by now, so even AwaitLeaderTerm can initialise.
    dispatches.extend(datanode.drain());
    let datanode = Arc::try_unwrap(datanode)
        .map_err(|_| violation("scenario setup", "datanode still shared".into()))?;
    Ok(Mc4Run {
        dispatches,
        leader_term_floor_at_restart,
        datanode,
    })
}

/// [`mc4_stale_leader_before_init`] judged by the heartbeat fence:
/// [`term_covers_heard_terms`] and [`no_command_below_heard_term`].
pub fn mc4_heartbeat_fence(
    behavior: StateContextBehavior,
    old_leader: OldLeader,
    rounds: usize,
) -> Result<(), Violation> {
    let run = mc4_stale_leader_before_init(behavior, old_leader, rounds)?;
    run.datanode.check_term_covers_heard_terms()?;
    no_command_below_heard_term(&run.dispatches)
}

/// [`mc4_stale_leader_before_init`] with the old leader stepped down, judged by
/// [`no_command_of_leader_deposed_before_restart`]: the window the seed's patch leaves open.
pub fn mc4_residual_window(behavior: StateContextBehavior, rounds: usize) -> Result<(), Violation> {
    let run = mc4_stale_leader_before_init(behavior, OldLeader::SteppedDownHoldingCommand, rounds)?;
    no_command_of_leader_deposed_before_restart(&run.dispatches, run.leader_term_floor_at_restart)
}

// ---------------------------------------------------------------------------------------
// Three SCMs with leader transfers and a restarting datanode
// ---------------------------------------------------------------------------------------

/// Size of a [`cluster_with_leader_transfers`] run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterShape {
    /// Steps of the controller (transfers, commands, restarts, pauses, clock ticks).
    pub controller_steps: usize,
    /// Cycles each heartbeat thread and the processor run after the controller is done.
    pub tail_rounds: usize,
    /// Bound on the cycles of each heartbeat thread and of the processor.
    pub max_rounds: usize,
}

impl Default for ClusterShape {
    fn default() -> Self {
        Self {
            controller_steps: 12,
            tail_rounds: 3,
            max_rounds: 64,
        }
    }
}

/// Clock ticks of the controller stay this far below [`StateContextConfig`]'s default
/// await bound (90 s), so [`StateContextBehavior::AwaitLeaderTerm`] never falls back within a run.
const MAX_TICK_MS: u64 = 8_000;

/// Three in-process SCMs, one datanode with three replicas, a controller thread that
/// transfers leadership (the old leader sometimes lingering as a self-believed leader),
/// issues commands from whoever believes it leads, restarts the datanode, pauses and
/// resumes SCMs and ticks the clock, all from `seed`; three heartbeat threads and the
/// command processor run meanwhile (five spawned threads: a shuttle scenario, too big for
/// loom).
///
/// Checks [`term_never_decreases`] per thread, [`term_covers_heard_terms`] at the end
/// and [`no_command_below_heard_term`] over every command.
pub fn cluster_with_leader_transfers(
    behavior: StateContextBehavior,
    seed: u64,
    shape: ClusterShape,
) -> Result<(), Violation> {
    let clock = ManualClock::new(SCENARIO_START_MS);
    let scms = scms(3);
    let dn = DatanodeId(1);
    let containers: Vec<ContainerId> = (1..=3).map(ContainerId).collect();
    let datanode = Arc::new(
        FencingDatanode::new(dn, behavior, &scms, &containers, clock.shared())
            .map_err(setup_error)?,
    );
    scms[0].become_leader(1);

    // Every step holds the process lifetime shared, a restart holds it exclusively: a
    // restart ends the process, so no step of the old process runs across it.
    let lifetime = Arc::new(RwLock::new(()));
    // The datanode's threads run while the controller does, then a few cycles more.
    let controller_done = Arc::new(AtomicBool::new(false));
    let rounds = move |done: &AtomicBool, tail: &mut usize| {
        if done.load(Ordering::Acquire) {
            if *tail == 0 {
                return false;
            }
            *tail -= 1;
        }
        true
    };
    let mut handles = Vec::new();
    for index in 0..scms.len() {
        let datanode = Arc::clone(&datanode);
        let done = Arc::clone(&controller_done);
        let lifetime = Arc::clone(&lifetime);
        handles.push(thread::spawn(move || {
            let mut observations = Vec::new();
            let mut tail = shape.tail_rounds;
            for _ in 0..shape.max_rounds {
                if !rounds(&done, &mut tail) {
                    break;
                }
                // An unanswered or refused heartbeat is part of the scenario.
                let _ = datanode.heartbeat_within(&lifetime, index);
                observations.push(datanode.context.observe());
                thread::yield_now();
            }
            term_never_decreases(&observations).map(|()| Vec::new())
        }));
    }
    {
        let datanode = Arc::clone(&datanode);
        let done = Arc::clone(&controller_done);
        let lifetime = Arc::clone(&lifetime);
        handles.push(thread::spawn(move || {
            let mut reports = Vec::new();
            let mut observations = Vec::new();
            let mut tail = shape.tail_rounds;
            for _ in 0..shape.max_rounds {
                if !rounds(&done, &mut tail) {
                    break;
                }
                reports.extend(datanode.process_within(&lifetime));
                observations.push(datanode.context.observe());
                thread::yield_now();
            }
            term_never_decreases(&observations).map(|()| reports)
        }));
    }
    {
        let datanode = Arc::clone(&datanode);
        let scms = scms.clone();
        let done = Arc::clone(&controller_done);
        handles.push(thread::spawn(move || {
            let mut controller = Controller {
                lifetime,
                rng: SeededRng::new(seed),
                scms,
                datanode,
                clock,
                containers,
                next_term: 2,
            };
            for _ in 0..shape.controller_steps {
                let step = controller.step();
                if step.is_err() {
                    done.store(true, Ordering::Release);
                }
                step?;
                thread::yield_now();
            }
            done.store(true, Ordering::Release);
            Ok(Vec::new())
        }));
    }
    let mut dispatches = join_all(handles)?;
    dispatches.extend(datanode.drain());
    datanode.check_term_covers_heard_terms()?;
    no_command_below_heard_term(&dispatches)
}

struct Controller {
    lifetime: Arc<RwLock<()>>,
    rng: SeededRng,
    scms: Vec<InProcessScm>,
    datanode: Arc<FencingDatanode>,
    clock: ManualClock,
    containers: Vec<ContainerId>,
    next_term: Term,
}

impl Controller {
    fn step(&mut self) -> Result<(), Violation> {
        let scm_count = self.scms.len() as u64;
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
            30..=64 => {
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
            65..=74 => self.restart_datanode(),
            75..=89 => {
                let scm = &self.scms[self.rng.below(scm_count) as usize];
                if self.rng.chance(50) {
                    scm.pause();
                } else {
                    scm.resume();
                }
            }
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

    fn command_kind(&mut self) -> CommandKind {
        let container = self.containers[self.rng.below(self.containers.len() as u64) as usize];
        match self.rng.below(3) {
            0 => CommandKind::DeleteContainer {
                container,
                force: true,
            },
            1 => CommandKind::CloseContainer { container },
            _ => CommandKind::ReplicateContainer {
                container: ContainerId(100 + self.rng.below(3)),
                sources: vec![DatanodeId(2)],
            },
        }
    }
}

// ---------------------------------------------------------------------------------------
// Thread bodies
// ---------------------------------------------------------------------------------------

fn queue(scm: &InProcessScm, dn: DatanodeId, kind: CommandKind) -> Result<(), Violation> {
    scm.queue_command(dn, kind, 0)
        .map(|_| ())
        .map_err(|e| violation("scenario setup", e.to_string()))
}

fn spawn_heartbeats(
    datanode: &Arc<FencingDatanode>,
    task: usize,
    rounds: usize,
) -> thread::JoinHandle<Result<Vec<Observed>, Violation>> {
    let datanode = Arc::clone(datanode);
    thread::spawn(move || {
        for _ in 0..rounds {
            datanode.heartbeat(task).map_err(setup_error)?;
        }
        Ok(Vec::new())
    })
}

fn spawn_processor(
    datanode: &Arc<FencingDatanode>,
    rounds: usize,
) -> thread::JoinHandle<Result<Vec<Observed>, Violation>> {
    let datanode = Arc::clone(datanode);
    thread::spawn(move || {
        let mut reports = Vec::new();
        for _ in 0..rounds {
            reports.extend(datanode.process());
            if rounds > 1 {
                thread::yield_now();
            }
        }
        Ok(reports)
    })
}
