//! Loom, HDDS-17268 (the seed's MC4): a freshly restarted datanode; the new leader's
//! heartbeat (term 2) races the old leader's response carrying a term-1 force delete and
//! the command processor, around `StateContext.initTermOfLeaderSCM`. Three spawned threads.

use crate::support::{assert_caught, assert_holds, explore};
use hadoop_ref::datanode::state_context::StateContextBehavior;
use hadoop_ref::scenarios::term_fencing::{
    OldLeader, SEED_KEY, deposed_leader_command_never_runs_after_restart,
    heartbeat_term_fences_stale_leader_command,
};

#[test]
fn heartbeat_term_seen_before_init_fences_stale_command() {
    let exploration = explore("stale-leader-believing/SeedPatch", || {
        heartbeat_term_fences_stale_leader_command(
            StateContextBehavior::SeedPatch,
            OldLeader::StillBelievesItLeads,
            1,
        )
    });
    assert_holds(&exploration);
}

#[test]
fn heartbeat_term_discarded_before_init_runs_stale_command() {
    let exploration = explore(
        "stale-leader-believing/LegacyIgnoreHeartbeatTermBeforeInit",
        || {
            heartbeat_term_fences_stale_leader_command(
                StateContextBehavior::LegacyIgnoreHeartbeatTermBeforeInit,
                OldLeader::StillBelievesItLeads,
                1,
            )
        },
    );
    assert_caught(&exploration, SEED_KEY);
}

/// The code before the patch has both defects; discarding the heartbeat term alone lets
/// the stale command run.
#[test]
fn code_before_the_patch_runs_stale_command() {
    let exploration = explore("stale-leader-believing/Legacy", || {
        heartbeat_term_fences_stale_leader_command(
            StateContextBehavior::Legacy,
            OldLeader::StillBelievesItLeads,
            1,
        )
    });
    assert_caught(&exploration, SEED_KEY);
}

/// The code before HDDS-3988 fences nothing: the stale command runs in some interleaving.
#[test]
fn code_before_the_term_fence_runs_stale_command() {
    let exploration = explore("stale-leader-believing/LegacyNoTermFence", || {
        heartbeat_term_fences_stale_leader_command(
            StateContextBehavior::LegacyNoTermFence,
            OldLeader::StillBelievesItLeads,
            1,
        )
    });
    assert_caught(&exploration, SEED_KEY);
}

/// The code before HDDS-7621 reads no heartbeat term: init takes the stale command's.
#[test]
fn code_reading_no_heartbeat_term_runs_stale_command() {
    let exploration = explore("stale-leader-believing/LegacyTermFromCommandsOnly", || {
        heartbeat_term_fences_stale_leader_command(
            StateContextBehavior::LegacyTermFromCommandsOnly,
            OldLeader::StillBelievesItLeads,
            1,
        )
    });
    assert_caught(&exploration, SEED_KEY);
}

#[test]
fn stepped_down_leader_command_fenced_by_heartbeat_term() {
    let exploration = explore("stale-leader-stepped-down/SeedPatch", || {
        heartbeat_term_fences_stale_leader_command(
            StateContextBehavior::SeedPatch,
            OldLeader::SteppedDownHoldingCommand,
            1,
        )
    });
    assert_holds(&exploration);
}

#[test]
fn awaiting_leader_term_closes_residual_window() {
    let exploration = explore("deposed-leader-after-restart/Hardened", || {
        deposed_leader_command_never_runs_after_restart(StateContextBehavior::Hardened, 1)
    });
    assert_holds(&exploration);
}

#[test]
fn fixed_rule_leaves_residual_window_open() {
    // The seed's patch narrows the window but does not close it: `initTermOfLeaderSCM`
    // needs only a majority of endpoints in HEARTBEAT and a queued command, so init before
    // the new leader's first response takes the deposed leader's term.
    let exploration = explore("deposed-leader-after-restart/SeedPatch", || {
        deposed_leader_command_never_runs_after_restart(StateContextBehavior::SeedPatch, 1)
    });
    assert_caught(&exploration, SEED_KEY);
    // Loom ran about two thousand executions; the story is the failing one's alone: one
    // restart, then the deposed leader's command initialising the term before the new
    // leader's term is applied.
    let story = exploration.story.expect("a caught execution has a story");
    let restarts = story
        .events
        .iter()
        .filter(|e| e.name == "restarted: term and queue lost")
        .count();
    assert_eq!(
        (story.events[0].step, restarts),
        (1, 1),
        "{}",
        story.table()
    );
    let initialised = story.events.iter().find(|e| e.name == "term initialised");
    assert_eq!(
        initialised.and_then(|e| e.number("term")),
        Some(1),
        "{}",
        story.table()
    );
}
