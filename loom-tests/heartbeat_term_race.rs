//! Loom, spec A.13 (seed MC5, HDDS-17268): two heartbeat threads apply terms 2 and 3 while
//! the command processor takes a queued term-2 command. Three spawned threads.

use crate::support::{assert_caught, assert_holds, explore};
use hadoop_ref::datanode::state_context::StateContextBehavior;
use hadoop_ref::scenarios::term_fencing::{SEED_KEY, mc5_concurrent_leader_heartbeats};

#[test]
fn locked_term_update_keeps_highest_term() {
    let exploration = explore("mc5/Fixed", || {
        mc5_concurrent_leader_heartbeats(StateContextBehavior::Fixed)
    });
    assert_holds(&exploration);
}

#[test]
fn await_leader_term_keeps_highest_term() {
    let exploration = explore("mc5/AwaitLeaderTerm", || {
        mc5_concurrent_leader_heartbeats(StateContextBehavior::AwaitLeaderTerm)
    });
    assert_holds(&exploration);
}

#[test]
fn unlocked_check_then_set_loses_higher_term() {
    let exploration = explore("mc5/LegacyUnlockedTermUpdate", || {
        mc5_concurrent_leader_heartbeats(StateContextBehavior::LegacyUnlockedTermUpdate)
    });
    assert_caught(&exploration, SEED_KEY);
}
