//! An exhaustive explorer of a cluster case's protocol steps: every sequence of enabled
//! actions up to a depth, breadth first, over the real components.
//!
//! **Why.** Shuttle samples a whole cluster's interleavings; a sampled run that holds
//! proves nothing about the orders it did not draw, and a sampler may never reach a race
//! window. TLC, stateright and P's systematic tester check every interleaving of a
//! model's actions up to a depth, with each distinct state expanded once; none runs
//! production code. Here the actions are calls on the real `MiniOzoneCluster`
//! ([`Action`]: a datanode's heartbeat to one SCM, its command processor taking one
//! command, one step of its replication supervisor or delete-container executor, one scan,
//! one block deleting pass, an SCM's replication manager pass, its processors, its block
//! deleting round, and the next step of a driver's script: a leader transfer, a restart,
//! a link healed, an operator's reconcile, a client's request).
//!
//! **How.** Stateless, as loom is: each state is re-executed from the case's set-up along
//! its path. The components hold locks, trait objects behind `Arc`s and the cluster's own
//! bookkeeping, so a deep copy of a state would be a second implementation of every
//! component's state, which is what this crate refuses to have; a re-execution costs the
//! set-up and the path, a few hundred microseconds. Each state is keyed by a canonical
//! fingerprint of everything that decides what the cluster does next
//! ([`MiniOzoneCluster::digest`](crate::sim::mini_cluster::MiniOzoneCluster::digest) and
//! the scripts' positions; counters, command ids and timestamps left out), so a state
//! reached by two orders is expanded once. Partial-order reduction by sleep sets: two
//! actions that touch nothing in common ([`Action::independent`]) commute, and only one
//! of their orders is tried; a state reached again with fewer actions asleep tries those
//! alone, and is not judged again (Godefroid's sleep sets with state caching). Breadth
//! first, so the first violation found is the shortest. A
//! depth's states are expanded by [`Options::workers`] workers side by side, each
//! re-execution on a thread of its own; the next depth starts when all are done.
//!
//! **What it judges.** A state where every driver script has run all its steps is a state
//! the case's run may end in: it is judged as the case judges (the cluster healed and
//! settled, then the invariants). No other state is judged, so a state with more script
//! steps left than actions left to the depth is not run at all ([`Report::beyond_reach`]):
//! nothing within the depth from it is judged. "Held to depth N" means:
//! no such state within N actions of the set-up breaks the invariants, for the steps
//! modelled here (see [`Action`]; time does not move, a reconciliation's block is pulled
//! and committed in one step, a whole heartbeat is one step). It says nothing of longer
//! runs, of interleavings inside a step (shuttle and loom explore those), or of the
//! settling phase's own orders.

mod action;
mod file;
mod replayed;
mod search;
mod spec;
mod worker;

pub use action::{Action, BadAction};
pub use file::{CounterexampleFile, CounterexampleFileError};
pub use spec::{ExploreCase, Options, Report, Verdict};

use crate::check::exploration::RaceWindow;
use crate::scenarios::Violation;

/// Explores `case` as `options` say, judging the race `windows` of its scenario. Runs
/// the components as they are built: call it in the production build, or inside one
/// shuttle execution in the shuttle build (its one task runs alone; each further worker,
/// [`Options::workers`], runs one shuttle execution of its own on a thread of its own).
pub fn explore(case: &ExploreCase, options: &Options, windows: &'static [RaceWindow]) -> Report {
    search::run(case, options, windows)
}

/// Runs `case` along `path` and judges it, as a counterexample replays: the first
/// violation, of an action or of the judgment.
pub fn replay_path(case: &ExploreCase, path: &[Action]) -> Result<(), Violation> {
    let replayed = replayed::Replayed::along(case, path)?;
    replayed.case.judge()
}
