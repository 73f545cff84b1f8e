//! A restarted datanode's term waits for a majority of its SCMs, and its queue starts
//! empty.
//!
//! **The race.** After a restart the datanode knows no leader's term. Initialised from the
//! commands one SCM hands out while the others are still unreachable, the term is that
//! SCM's word alone; and a command queued before the restart, if kept, runs in a process
//! that never heard the terms it was fenced by.
//!
//! **The fix** (upstream's, the same in every behavior): `StateContext.initTermOfLeaderSCM`
//! returns until a majority of the non-passive endpoints are in HEARTBEAT, and the command
//! queue lives in the process's memory, so a restart starts it empty.

use super::invariants::violation;
use super::reproductions::{close, spawn_heartbeats, spawn_processor};
use super::setup::{SCENARIO_START_MS, in_process_scms, queue_command, setup_error};
use crate::clock::ManualClock;
use crate::datanode::state_context::{StateContextApi, StateContextFactory};
use crate::hdds::ids::{ContainerId, DatanodeId};
use crate::scenarios::{Violation, join_all};
use crate::sim::fencing_datanode::{FencingDatanode, Observed};
use crate::sync::Arc;

/// The property [`no_command_before_a_majority_heartbeats`] checks.
pub const NO_COMMAND_BEFORE_MAJORITY: &str = "no command runs while a minority of SCMs heartbeats";
/// The property [`no_command_queued_before_the_restart_runs`] checks.
pub const NO_COMMAND_ACROSS_RESTART: &str = "no command queued before a restart runs after it";

/// **No command runs while a minority of SCMs heartbeats**: `dispatches`, taken while
/// fewer than a majority of the datanode's endpoints were in HEARTBEAT, must be empty.
pub fn no_command_before_a_majority_heartbeats(dispatches: &[Observed]) -> Result<(), Violation> {
    match dispatches.first() {
        None => Ok(()),
        Some(first) => Err(violation(
            NO_COMMAND_BEFORE_MAJORITY,
            format!(
                "command {:?} of term {} was handed out while one SCM of three heartbeated",
                first.report.dispatched.command.kind, first.report.dispatched.command.term
            ),
        )),
    }
}

/// **No command queued before a restart runs after it**: none of `dispatches` (taken
/// after the restart) closes `before`, the container of the command queued before it.
pub fn no_command_queued_before_the_restart_runs(
    dispatches: &[Observed],
    before: ContainerId,
) -> Result<(), Violation> {
    let ran = dispatches
        .iter()
        .map(|o| &o.report.dispatched.command)
        .find(|command| command.kind == close(before));
    match ran {
        None => Ok(()),
        Some(command) => Err(violation(
            NO_COMMAND_ACROSS_RESTART,
            format!(
                "command {:?} of term {} was queued before the restart and ran after it",
                command.kind, command.term
            ),
        )),
    }
}

/// Both properties on one schedule (two spawned threads, `rounds` heartbeats and
/// processor calls each): SCM 1 leads at term 1 and the datanode queues its close of
/// container 1, then restarts. Only SCM 1 is reachable: its endpoint registers, it hands
/// out a close of container 2, and its heartbeats race the command processor, which must
/// take nothing. Then SCMs 2 and 3 register and the queue is drained: the close of
/// container 1 must not run.
pub fn restarted_datanode_waits_for_a_majority<F: StateContextFactory>(
    factory: F,
    rounds: usize,
) -> Result<(), Violation> {
    let clock = ManualClock::new(SCENARIO_START_MS).shared();
    let scms = in_process_scms(3);
    let leader = &scms[0];
    let dn = DatanodeId(1);
    let containers = [ContainerId(1), ContainerId(2)];
    let datanode =
        FencingDatanode::new(dn, factory, &scms, &containers, clock).map_err(setup_error)?;
    datanode.register_all().map_err(setup_error)?;
    leader.become_leader(1);
    queue_command(leader, dn, close(containers[0]))?;
    datanode.heartbeat(0).map_err(setup_error)?;
    if datanode.context.queue_len() != 1 {
        return Err(violation(
            "scenario setup",
            format!(
                "{} command(s) queued, expected 1",
                datanode.context.queue_len()
            ),
        ));
    }
    datanode.restart();
    register(&datanode, 0)?;
    queue_command(leader, dn, close(containers[1]))?;
    let datanode = Arc::new(datanode);
    let handles = vec![
        spawn_heartbeats(&datanode, 0, rounds),
        spawn_processor(&datanode, rounds),
    ];
    no_command_before_a_majority_heartbeats(&join_all(handles)?)?;
    register(&datanode, 1)?;
    register(&datanode, 2)?;
    no_command_queued_before_the_restart_runs(&datanode.drain(), containers[0])
}

/// Endpoint `index` through GETVERSION and REGISTER: it heartbeats next.
fn register<C: StateContextApi>(
    datanode: &FencingDatanode<C>,
    index: usize,
) -> Result<(), Violation> {
    for _ in 0..2 {
        datanode.heartbeat(index).map_err(setup_error)?;
    }
    Ok(())
}
