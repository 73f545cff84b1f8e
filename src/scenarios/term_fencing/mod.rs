//! Scenarios and invariants of datanode SCM-term fencing (HDDS-17268), shared by the loom
//! and shuttle tests, the soak tool and the property tests.
//!
//! **The race.** A restarted datanode discarded the term of a heartbeat response that came
//! before `StateContext.initTermOfLeaderSCM`, and `updateTermOfLeaderSCM` raised the term
//! with an unlocked check-then-set: either way it settles on a deposed leader's term and
//! `getNextCommand` hands out that leader's commands (a force delete of a replica).
//!
//! **The fix.** A heartbeat term seen before init is kept, and init takes the larger of it
//! and the highest queued command term; every term update holds the context lock. What
//! the patch leaves open (init before the new leader's first response) is checked too.
//!
//! **What is checked.** Every scenario wires a [`FencingDatanode`] (real `StateContext`,
//! real `HeartbeatEndpointTask`s, a real `CommandDispatcher` over real replicas) to
//! in-process SCMs, runs heartbeat threads and the command processor concurrently, and
//! checks the invariants ([`term_never_decreases`], [`term_covers_heard_terms`],
//! [`no_command_below_heard_term`], [`no_command_of_leader_deposed_before_restart`]) over
//! what they observed:
//!
//! - the seed's reproductions, MC5 ([`concurrent_leader_heartbeats_keep_the_highest_term`])
//!   and MC4 ([`heartbeat_term_fences_stale_leader_command`],
//!   [`deposed_leader_command_never_runs_after_restart`]), small enough for loom;
//! - a restart with one SCM of three reachable
//!   ([`restarted_datanode_waits_for_a_majority`]): init waits for a majority, and the
//!   queue starts empty;
//! - a random cluster with leader transfers and restarts
//!   ([`leader_transfers_never_run_a_stale_command`]), for shuttle and the soak tool.
//!
//! A scenario is a plain function: any checker, or none, can run it.
//!
//! [`FencingDatanode`]: crate::sim::fencing_datanode::FencingDatanode

mod cluster;
mod invariants;
mod reproductions;
mod restart;
mod setup;

pub use cluster::{FencingClusterShape, leader_transfers_never_run_a_stale_command};
pub use invariants::{
    NO_COMMAND_BELOW_TAKEN_TERM, NO_COMMAND_OF_DEPOSED_LEADER,
    NO_HANDED_OVER_COMMAND_BELOW_TAKEN_TERM, SEED_KEY, TERM_COVERS_HEARD_TERMS,
    TERM_NEVER_DECREASES, datanode_term_covers_heard_terms, no_command_below_heard_term,
    no_command_of_leader_deposed_before_restart, no_handed_over_command_runs_below_heard_term,
    replicas_follow_dispatched_deletes, term_covers_heard_terms, term_never_decreases,
};
pub use reproductions::{
    OldLeader, StaleLeaderRun, concurrent_leader_heartbeats_keep_the_highest_term,
    deposed_leader_command_never_runs_after_restart, heartbeat_term_fences_stale_leader_command,
    stale_command_queued_ahead_of_a_newer_one, stale_leader_command_after_restart,
};
pub use restart::{
    NO_COMMAND_ACROSS_RESTART, NO_COMMAND_BEFORE_MAJORITY, no_command_before_a_majority_heartbeats,
    no_command_queued_before_the_restart_runs, restarted_datanode_waits_for_a_majority,
};
pub use setup::SCENARIO_START_MS;
