//! Loom, HDDS-17268 (the seed's MC5): two SCMs answer as leader at once, so two endpoint
//! threads run `HeartbeatEndpointTask.processResponse` and apply terms 2 and 3 through
//! `StateContext.updateTermOfLeaderSCM` while the command processor takes a queued term-2
//! command. Three spawned threads.
//!
//! HDDS-7619: the old leader (still believing, term 1) and the new leader (term 2) each
//! answer with a close command, so the new leader's term comes with a queued command: the
//! code that raises the term on `addCommand` holds without reading heartbeat terms, the
//! code that raises it on poll only is caught. Three spawned threads.
//!
//! A restarted datanode with one SCM of three reachable: that SCM's heartbeats race the
//! command processor, which must take nothing until a majority heartbeats
//! (`initTermOfLeaderSCM`); the code before HDDS-3988 has no term to wait for. Two
//! spawned threads.

use crate::support::{assert_caught, assert_holds, explore};
use hadoop_ref::datanode::state_context::StateContextBehavior;
use hadoop_ref::scenarios::term_fencing::{
    SEED_KEY, concurrent_leader_heartbeats_keep_the_highest_term,
    restarted_datanode_waits_for_a_majority, stale_command_queued_ahead_of_a_newer_one,
};

#[test]
fn locked_term_update_keeps_highest_term() {
    let exploration = explore("concurrent-leader-heartbeats/SeedPatch", || {
        concurrent_leader_heartbeats_keep_the_highest_term(StateContextBehavior::SeedPatch)
    });
    assert_holds(&exploration);
}

#[test]
fn await_leader_term_keeps_highest_term() {
    let exploration = explore("concurrent-leader-heartbeats/Hardened", || {
        concurrent_leader_heartbeats_keep_the_highest_term(StateContextBehavior::Hardened)
    });
    assert_holds(&exploration);
}

#[test]
fn unlocked_check_then_set_loses_higher_term() {
    let exploration = explore(
        "concurrent-leader-heartbeats/LegacyUnlockedTermUpdate",
        || {
            concurrent_leader_heartbeats_keep_the_highest_term(
                StateContextBehavior::LegacyUnlockedTermUpdate,
            )
        },
    );
    assert_caught(&exploration, SEED_KEY);
    // The story is the failing execution's alone: it starts at the scenario's setup (the
    // first SCM taking the lead) and shows the unlocked read the race needs.
    let story = exploration.story.expect("a caught execution has a story");
    assert_eq!(story.events[0].name, "became leader");
    assert_eq!(story.events[0].step, 1);
    assert!(
        story
            .events
            .iter()
            .any(|e| e.name == "term read without the lock"),
        "{}",
        story.table()
    );
}

/// The code before the patch has both defects; the unlocked update alone loses the term.
#[test]
fn code_before_the_patch_loses_higher_term() {
    let exploration = explore("concurrent-leader-heartbeats/Legacy", || {
        concurrent_leader_heartbeats_keep_the_highest_term(StateContextBehavior::Legacy)
    });
    assert_caught(&exploration, SEED_KEY);
}

/// HDDS-7619: `addCommand` raises the term to the new leader's queued command, so the
/// deposed leader's command queued ahead of it is dropped; the code before HDDS-7621 (no
/// heartbeat term) holds here too.
#[test]
fn term_raised_on_add_drops_the_command_queued_ahead() {
    for behavior in [
        StateContextBehavior::SeedPatch,
        StateContextBehavior::LegacyTermFromCommandsOnly,
    ] {
        let exploration = explore(&format!("queued-ahead/{}", behavior.name()), move || {
            stale_command_queued_ahead_of_a_newer_one(behavior)
        });
        assert_holds(&exploration);
    }
}

/// Before HDDS-7619 the term rises only when a command is polled: the deposed leader's
/// command queued ahead of the new leader's runs at the old term.
#[test]
fn code_raising_the_term_on_poll_only_runs_the_command_queued_ahead() {
    let exploration = explore("queued-ahead/LegacyTermOnPoll", || {
        stale_command_queued_ahead_of_a_newer_one(StateContextBehavior::LegacyTermOnPoll)
    });
    assert_caught(&exploration, SEED_KEY);
}

/// `initTermOfLeaderSCM` waits for a majority of endpoints in HEARTBEAT: the one reachable
/// SCM's command stays queued, in every interleaving.
#[test]
fn init_waits_for_a_majority_of_heartbeating_scms() {
    for behavior in [
        StateContextBehavior::SeedPatch,
        StateContextBehavior::Hardened,
    ] {
        let exploration = explore(
            &format!("minority-after-restart/{}", behavior.name()),
            move || restarted_datanode_waits_for_a_majority(behavior, 1),
        );
        assert_holds(&exploration);
    }
}

/// Before HDDS-3988 there is no term: the processor runs the lone SCM's command at once.
#[test]
fn code_without_a_term_fence_runs_a_minoritys_command() {
    let exploration = explore("minority-after-restart/LegacyNoTermFence", || {
        restarted_datanode_waits_for_a_majority(StateContextBehavior::LegacyNoTermFence, 1)
    });
    assert_caught(&exploration, SEED_KEY);
}
