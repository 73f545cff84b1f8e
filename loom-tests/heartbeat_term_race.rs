//! Loom, HDDS-17268 (the seed's MC5): two SCMs answer as leader at once, so two endpoint
//! threads run `HeartbeatEndpointTask.processResponse` and apply terms 2 and 3 through
//! `StateContext.updateTermOfLeaderSCM` while the command processor takes a queued term-2
//! command. Three spawned threads.

use crate::support::{assert_caught, assert_holds, explore};
use hadoop_ref::datanode::state_context::StateContextBehavior;
use hadoop_ref::scenarios::term_fencing::{
    SEED_KEY, concurrent_leader_heartbeats_keep_the_highest_term,
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
