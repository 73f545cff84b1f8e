//! The invariants of datanode SCM-term fencing (HDDS-17268), judged over what the
//! scenarios observed: the term a thread sees, the terms the datanode took from heartbeat
//! responses, and every command the processor handed out.
//!
//! The race they catch: a discarded heartbeat term before `initTermOfLeaderSCM`, or a
//! lost concurrent `updateTermOfLeaderSCM`, leaves the term below one the datanode already
//! took, and `getNextCommand` then hands out a deposed leader's command.

use crate::datanode::dispatcher::CommandOutcome;
use crate::datanode::executors::Executor;
use crate::datanode::state_context::{StateContextApi, TermObservation};
use crate::hdds::command::CommandKind;
use crate::hdds::term::Term;
use crate::scenarios::Violation;
use crate::sim::fencing_datanode::{FencingDatanode, Observed};

/// The seed every violation of the term-fencing scenarios names.
pub const SEED_KEY: &str = "HDDS-17268";

/// The property [`no_command_below_heard_term`] checks.
pub const NO_COMMAND_BELOW_TAKEN_TERM: &str = "no command below a term already taken";
/// The property [`term_covers_heard_terms`] checks.
pub const TERM_COVERS_HEARD_TERMS: &str = "term covers every term heard";
/// The property [`term_never_decreases`] checks.
pub const TERM_NEVER_DECREASES: &str = "term never decreases";
/// The property [`no_handed_over_command_runs_below_heard_term`] checks.
pub const NO_HANDED_OVER_COMMAND_BELOW_TAKEN_TERM: &str =
    "no handed-over command runs below a term already taken (HDDS-7620)";
/// The property [`no_command_of_leader_deposed_before_restart`] checks.
pub const NO_COMMAND_OF_DEPOSED_LEADER: &str = "no command of a leader deposed before the restart";

/// A violation of `property` of this seed.
pub(super) fn violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: SEED_KEY,
        property,
        detail,
    }
}

/// Within one process lifetime, the term one thread observes never goes down.
pub fn term_never_decreases(observations: &[TermObservation]) -> Result<(), Violation> {
    for pair in observations.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        if before.incarnation != after.incarnation {
            continue;
        }
        if let (Some(b), a) = (before.term, after.term) {
            if a.is_none_or(|a| a < b) {
                return Err(violation(
                    TERM_NEVER_DECREASES,
                    format!("term went from {b} to {a:?} without a restart"),
                ));
            }
        }
    }
    Ok(())
}

/// Once initialised, the term is at least every term the datanode took from heartbeat
/// responses and their commands (since its last restart). Checked at quiescence: a lost
/// update or a discarded term shows as a term below what was heard.
pub fn term_covers_heard_terms(term: Option<Term>, heard: Option<Term>) -> Result<(), Violation> {
    match (term, heard) {
        (Some(term), Some(heard)) if term < heard => Err(violation(
            TERM_COVERS_HEARD_TERMS,
            format!("term is {term} after the datanode took term {heard}"),
        )),
        _ => Ok(()),
    }
}

/// [`term_covers_heard_terms`] for `datanode`'s term and the terms the harness recorded it
/// taking (call at quiescence).
pub fn datanode_term_covers_heard_terms<C: StateContextApi>(
    datanode: &FencingDatanode<C>,
) -> Result<(), Violation> {
    term_covers_heard_terms(datanode.context.term_of_leader(), datanode.heard())
}

/// No command leaves the queue whose term is below a term the datanode had already taken,
/// from a heartbeat response or a queued command, when it was handed out. Judged at
/// dispatch, whatever the handlers then do.
pub fn no_command_below_heard_term(dispatches: &[Observed]) -> Result<(), Violation> {
    for observed in dispatches {
        let command = &observed.report.dispatched.command;
        if let Some(heard) = observed.heard_before {
            if command.term < heard {
                return Err(violation(
                    NO_COMMAND_BELOW_TAKEN_TERM,
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

/// No command that a handler runs on its own thread (delete container, replicate,
/// reconcile: `DeleteContainerCommandHandler`, `ReplicationSupervisor`) runs when its term
/// is below a term the datanode had taken by the time the handler was about to run it:
/// those handlers read the term again then (HDDS-7620), since a heartbeat may raise it
/// after the dispatch. Judged over the commands that ran (executed or failed).
pub fn no_handed_over_command_runs_below_heard_term(
    dispatches: &[Observed],
) -> Result<(), Violation> {
    for observed in dispatches {
        let report = &observed.report;
        let command = &report.dispatched.command;
        let handed_over = Executor::of(&command.kind) != Executor::Processor;
        if let (true, true, Some(heard)) = (handed_over, report.ran(), observed.heard_before_run)
            && command.term < heard
        {
            return Err(violation(
                NO_HANDED_OVER_COMMAND_BELOW_TAKEN_TERM,
                format!(
                    "command {:?} of term {} ran after the datanode took term {heard}",
                    command.kind, command.term
                ),
            ));
        }
    }
    Ok(())
}

/// The residual window of the seed's patch: when every SCM that believed it led at the
/// datanode's (re)start had a term of at least `floor`, no command of a lower term (one
/// created by a leader deposed before the restart) runs. Holds with
/// [`Hardened`](crate::datanode::state_context::StateContextBehavior::Hardened)
/// (before its bound) when the deposed leader has stepped down;
/// [`SeedPatch`](crate::datanode::state_context::StateContextBehavior::SeedPatch) violates it by
/// design when init happens before the new leader's first response. While the deposed
/// leader still believes it leads, `floor` is its term and the property says nothing: no
/// datanode can tell the two leaders apart.
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
            NO_COMMAND_OF_DEPOSED_LEADER,
            format!(
                "command {:?} of term {} ran although every leader had term >= {floor} at the restart",
                report.dispatched.command.kind, report.dispatched.command.term
            ),
        )),
        None => Ok(()),
    }
}

/// A replica is gone exactly when a delete of it ran: what the fences let through has its
/// real effect on the datanode's `KeyValueContainer`s, and nothing else removes a replica.
/// Judged over the replicas the datanode started with, at quiescence.
pub fn replicas_follow_dispatched_deletes<C: StateContextApi>(
    datanode: &FencingDatanode<C>,
    dispatches: &[Observed],
) -> Result<(), Violation> {
    for &container in &datanode.initial_containers {
        let deleted = dispatches.iter().any(|observed| {
            matches!(
                observed.report.dispatched.command.kind,
                CommandKind::DeleteContainer { container: c, .. } if c == container
            ) && observed.report.outcome == CommandOutcome::Executed
        });
        let present = datanode.replicas.container(container).is_ok();
        if present == deleted {
            return Err(violation(
                "a replica is gone exactly when a delete of it ran",
                format!(
                    "{container}: replica {}, a delete of it {}",
                    if present { "present" } else { "gone" },
                    if deleted { "ran" } else { "never ran" }
                ),
            ));
        }
    }
    Ok(())
}
