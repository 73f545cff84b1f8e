//! The seed's own reproductions of HDDS-17268, each as a small scenario of three spawned
//! threads, small enough for loom: MC5 (two SCMs answer as leader at once) and MC4 (a
//! stale leader's command reaches a restarted datanode before its term is initialised).
//!
//! The race: `HeartbeatEndpointTask.processResponse` raised the term with an unlocked
//! check-then-set (MC5), and `StateContext.updateTermOfLeaderSCM` discarded a heartbeat
//! term that came before `initTermOfLeaderSCM` (MC4).
//!
//! The fix (HDDS-17268): every term update holds the context lock, and a heartbeat term
//! seen before init is kept for init; what the patch leaves open is checked by
//! [`deposed_leader_command_never_runs_after_restart`].

use super::invariants::{
    datanode_term_covers_heard_terms, no_command_below_heard_term,
    no_command_of_leader_deposed_before_restart, replicas_follow_dispatched_deletes, violation,
};
use super::setup::{SCENARIO_START_MS, in_process_scms, queue_command, setup_error};
use crate::clock::ManualClock;
use crate::datanode::state_context::{StateContext, StateContextApi, StateContextFactory};
use crate::hdds::command::CommandKind;
use crate::hdds::ids::{ContainerId, DatanodeId, PipelineId};
use crate::hdds::term::Term;
use crate::scenarios::{Violation, join_all};
use crate::sim::fencing_datanode::{FencingDatanode, Observed};
use crate::sim::scm_endpoint::InProcessScm;
use crate::sync::{Arc, thread};

/// The seed's MC5: the term is 1; an old leader at term 2 that has not stepped down
/// answers with a term-2 close command while the new leader answers with term 3, on two
/// heartbeat threads, with the command processor running. Three spawned threads.
///
/// Checks [`term_covers_heard_terms`](super::term_covers_heard_terms) and
/// [`no_command_below_heard_term`]: the unlocked update can leave the term at 2 and run
/// the term-2 command.
pub fn concurrent_leader_heartbeats_keep_the_highest_term<F: StateContextFactory>(
    factory: F,
) -> Result<(), Violation> {
    let clock = ManualClock::new(SCENARIO_START_MS).shared();
    let scms = in_process_scms(2);
    let (old, new) = (&scms[0], &scms[1]);
    let dn = DatanodeId(1);
    let containers = [ContainerId(1), ContainerId(2)];
    let datanode =
        FencingDatanode::new(dn, factory, &scms, &containers, clock).map_err(setup_error)?;
    datanode.register_all().map_err(setup_error)?;

    let mut dispatches = first_command_ran(old, &datanode, containers[0])?;
    if datanode.context.term_of_leader() != Some(1) {
        return Err(violation(
            "scenario setup",
            format!("term {:?}, expected 1", datanode.context.term_of_leader()),
        ));
    }

    // Old leader re-elected at term 2 with a command; the new leader is at term 3.
    old.become_leader(2);
    queue_command(old, dn, close(containers[1]))?;
    new.become_leader(3);

    let datanode = two_leaders_race_the_processor(datanode, &mut dispatches, 1)?;
    datanode_term_covers_heard_terms(&datanode)?;
    no_command_below_heard_term(&dispatches)?;
    replicas_follow_dispatched_deletes(&datanode, &dispatches)
}

/// HDDS-7619: the term is 1; the old leader, still believing it leads at term 1, answers
/// with a close command while the new leader answers at term 2 with one of its own, on
/// two heartbeat threads, with the command processor running (three spawned threads).
/// The new leader's command always comes with its term, so only `addCommand` raising the
/// term (HDDS-7619) keeps the old leader's command queued ahead of it from running; a
/// heartbeat's term (HDDS-7621) is not needed. Checks [`no_command_below_heard_term`].
pub fn stale_command_queued_ahead_of_a_newer_one<F: StateContextFactory>(
    factory: F,
) -> Result<(), Violation> {
    let clock = ManualClock::new(SCENARIO_START_MS).shared();
    let scms = in_process_scms(2);
    let (old, new) = (&scms[0], &scms[1]);
    let dn = DatanodeId(1);
    let containers = [ContainerId(1), ContainerId(2), ContainerId(3)];
    let datanode =
        FencingDatanode::new(dn, factory, &scms, &containers, clock).map_err(setup_error)?;
    datanode.register_all().map_err(setup_error)?;
    let mut dispatches = first_command_ran(old, &datanode, containers[0])?;

    // The old leader, not told, queues another; the new leader, at term 2, one of its own.
    queue_command(old, dn, close(containers[1]))?;
    new.become_leader(2);
    queue_command(new, dn, close(containers[2]))?;

    two_leaders_race_the_processor(datanode, &mut dispatches, 2)?;
    no_command_below_heard_term(&dispatches)
}

/// What the old leader does when leadership moves in [`stale_leader_command_after_restart`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OldLeader {
    /// It has not been told yet and still answers with its term 1.
    StillBelievesItLeads,
    /// It stepped down but still holds the command, which it hands out without a term.
    SteppedDownHoldingCommand,
}

/// What a [`stale_leader_command_after_restart`] run observed, for the invariants to judge.
#[derive(Debug)]
pub struct StaleLeaderRun<C: StateContextApi = StateContext> {
    /// Every command the processor took.
    pub dispatches: Vec<Observed>,
    /// The lowest term among the SCMs that believed they led at the restart.
    pub leader_term_floor_at_restart: Term,
    /// The datanode, quiescent.
    pub datanode: FencingDatanode<C>,
}

/// The seed's MC4: SCM A led at term 1 and queued a force delete of a replica for the
/// datanode; leadership moves to SCM B (term 2) and the datanode restarts. B's heartbeats
/// (term 2, no commands) race A's response carrying the command and the command
/// processor; `rounds` heartbeats per thread. Three spawned threads.
pub fn stale_leader_command_after_restart<F: StateContextFactory>(
    factory: F,
    old_leader: OldLeader,
    rounds: usize,
) -> Result<StaleLeaderRun<F::Context>, Violation> {
    let clock = ManualClock::new(SCENARIO_START_MS).shared();
    let scms = in_process_scms(3);
    let (a, b) = (&scms[0], &scms[1]);
    let dn = DatanodeId(1);
    let replica = ContainerId(1);
    let datanode =
        FencingDatanode::new(dn, factory, &scms, &[replica], clock).map_err(setup_error)?;

    a.become_leader(1);
    let force_delete = CommandKind::DeleteContainer {
        container: replica,
        force: true,
    };
    queue_command(a, dn, force_delete)?;
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
    // B has answered by now, so even the hardened behavior can initialise.
    dispatches.extend(datanode.drain());
    let datanode = Arc::try_unwrap(datanode)
        .map_err(|_| violation("scenario setup", "datanode still shared".into()))?;
    Ok(StaleLeaderRun {
        dispatches,
        leader_term_floor_at_restart,
        datanode,
    })
}

/// The seed's MC4 ([`stale_leader_command_after_restart`]) judged by the heartbeat fence:
/// [`term_covers_heard_terms`](super::term_covers_heard_terms) and
/// [`no_command_below_heard_term`]. The term of the new leader's heartbeat, heard before
/// init, must keep the old leader's command from running.
pub fn heartbeat_term_fences_stale_leader_command<F: StateContextFactory>(
    factory: F,
    old_leader: OldLeader,
    rounds: usize,
) -> Result<(), Violation> {
    let run = stale_leader_command_after_restart(factory, old_leader, rounds)?;
    datanode_term_covers_heard_terms(&run.datanode)?;
    no_command_below_heard_term(&run.dispatches)?;
    replicas_follow_dispatched_deletes(&run.datanode, &run.dispatches)
}

/// The seed's MC4 ([`stale_leader_command_after_restart`]) with the old leader stepped
/// down, judged by [`no_command_of_leader_deposed_before_restart`]: the window the seed's
/// patch leaves open, when init happens before the new leader's first response.
pub fn deposed_leader_command_never_runs_after_restart<F: StateContextFactory>(
    factory: F,
    rounds: usize,
) -> Result<(), Violation> {
    let run =
        stale_leader_command_after_restart(factory, OldLeader::SteppedDownHoldingCommand, rounds)?;
    no_command_of_leader_deposed_before_restart(&run.dispatches, run.leader_term_floor_at_restart)?;
    replicas_follow_dispatched_deletes(&run.datanode, &run.dispatches)
}

/// A thread running `rounds` cycles of the endpoint thread of SCM number `task`.
pub(super) fn spawn_heartbeats<C: StateContextApi>(
    datanode: &Arc<FencingDatanode<C>>,
    task: usize,
    rounds: usize,
) -> thread::JoinHandle<Result<Vec<Observed>, Violation>> {
    let datanode = Arc::clone(datanode);
    thread::spawn_named(&format!("endpoint scm{}", task + 1), move || {
        for _ in 0..rounds {
            datanode.heartbeat(task).map_err(setup_error)?;
        }
        Ok(Vec::new())
    })
}

/// A thread running `rounds` calls of the command processor, returning what it took.
pub(super) fn spawn_processor<C: StateContextApi>(
    datanode: &Arc<FencingDatanode<C>>,
    rounds: usize,
) -> thread::JoinHandle<Result<Vec<Observed>, Violation>> {
    let datanode = Arc::clone(datanode);
    thread::spawn_named("command processor", move || {
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

/// A close of `container` on pipeline 1.
pub(super) fn close(container: ContainerId) -> CommandKind {
    CommandKind::CloseContainer {
        container,
        pipeline: PipelineId(1),
        force: false,
    }
}

/// `old` becomes leader at term 1 and queues a close of `container`; the datanode takes
/// it in a heartbeat and runs it, which initialises its term to 1 (the code before
/// HDDS-3988 sets none: that the command ran is the set-up). Returns what ran.
fn first_command_ran<C: StateContextApi>(
    old: &InProcessScm,
    datanode: &FencingDatanode<C>,
    container: ContainerId,
) -> Result<Vec<Observed>, Violation> {
    old.become_leader(1);
    queue_command(old, datanode.id, close(container))?;
    datanode.heartbeat(0).map_err(setup_error)?;
    let dispatches = datanode.drain();
    if dispatches.len() != 1 {
        return Err(violation(
            "scenario setup",
            format!("{} first command(s) ran, expected 1", dispatches.len()),
        ));
    }
    Ok(dispatches)
}

/// One heartbeat of SCM 1's endpoint and one of SCM 2's on their threads, beside the
/// command processor for `processor_rounds` calls (three spawned threads); then the
/// queue drained. What the processor took is added to `dispatches`.
fn two_leaders_race_the_processor<C: StateContextApi>(
    datanode: FencingDatanode<C>,
    dispatches: &mut Vec<Observed>,
    processor_rounds: usize,
) -> Result<Arc<FencingDatanode<C>>, Violation> {
    let datanode = Arc::new(datanode);
    let handles = vec![
        spawn_heartbeats(&datanode, 0, 1),
        spawn_heartbeats(&datanode, 1, 1),
        spawn_processor(&datanode, processor_rounds),
    ];
    dispatches.extend(join_all(handles)?);
    dispatches.extend(datanode.drain());
    Ok(datanode)
}
