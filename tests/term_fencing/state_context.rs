//! `StateContext` (HDDS-17268) without a checker: the three outcomes of the seed's patch
//! when a heartbeat term reaches `updateTermOfLeaderSCM` before `initTermOfLeaderSCM`
//! (a stale command dropped, a newer command's term taken, concurrent updates keeping the
//! highest), each legacy defect on its own, the init rules with the await mode's bound, and
//! the queue, term and restart with their typed errors.

use hadoop_ref::clock::ManualClock;
use hadoop_ref::datanode::DatanodeError;
use hadoop_ref::datanode::state_context::{
    EndpointState, StateContext, StateContextBehavior, StateContextConfig,
};
use hadoop_ref::hdds::command::CommandId;
use hadoop_ref::hdds::ids::ScmId;
use hadoop_ref::sync::{Arc, thread};

use crate::test_util::term_fencing::{
    START_MS, all_heartbeating, close_command, context_with, heartbeating,
};

// --- the three outcomes of the patch when a heartbeat term comes before init -------------

#[test]
fn drops_command_of_stale_leader_if_newer_term_was_seen_before_init() {
    let context = heartbeating(StateContextBehavior::SeedPatch);
    context.update_term_from_heartbeat(2).unwrap();
    context.add_command(close_command(1, 1)).unwrap();
    assert_eq!(context.get_next_command(), None);
    assert_eq!(context.term_of_leader(), Some(2));
    assert_eq!(context.stats().dropped_stale, 1);
}

#[test]
fn inits_term_from_command_if_older_term_was_seen_before_init() {
    let context = heartbeating(StateContextBehavior::SeedPatch);
    context.update_term_from_heartbeat(1).unwrap();
    context.add_command(close_command(1, 2)).unwrap();
    let dispatched = context.get_next_command().expect("term-2 command runs");
    assert_eq!(dispatched.command.term, 2);
    assert_eq!(dispatched.term_at_dispatch, 2);
    assert_eq!(context.term_of_leader(), Some(2));
}

#[test]
fn concurrent_term_updates_keep_highest_term() {
    // Real threads, many rounds: the locked update never loses the higher term.
    for _ in 0..200 {
        let context = Arc::new(heartbeating(StateContextBehavior::SeedPatch));
        context.add_command(close_command(1, 1)).unwrap();
        assert!(context.get_next_command().is_some());
        let handles: Vec<_> = [2, 3]
            .into_iter()
            .map(|term| {
                let context = Arc::clone(&context);
                thread::spawn(move || context.update_term_from_heartbeat(term).unwrap())
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
        assert_eq!(context.term_of_leader(), Some(3));
    }
}

// --- each legacy defect on its own ---------------------------------------------------------

#[test]
fn legacy_ignore_before_init_runs_stale_leader_command() {
    let context = heartbeating(StateContextBehavior::LegacyIgnoreHeartbeatTermBeforeInit);
    context.update_term_from_heartbeat(2).unwrap();
    context.add_command(close_command(1, 1)).unwrap();
    let dispatched = context.get_next_command().expect("the defect: term 1 runs");
    assert_eq!(dispatched.command.term, 1);
    assert_eq!(dispatched.heartbeat_term_high_water, Some(2));
}

#[test]
fn legacy_ignore_before_init_still_raises_term_after_init() {
    let context = heartbeating(StateContextBehavior::LegacyIgnoreHeartbeatTermBeforeInit);
    context.add_command(close_command(1, 1)).unwrap();
    assert!(context.get_next_command().is_some());
    context.update_term_from_heartbeat(4).unwrap();
    assert_eq!(context.term_of_leader(), Some(4));
}

#[test]
fn legacy_unlocked_update_records_term_before_init() {
    // Defect 2 alone: the before-init fix is in place.
    let context = heartbeating(StateContextBehavior::LegacyUnlockedTermUpdate);
    context.update_term_from_heartbeat(2).unwrap();
    context.add_command(close_command(1, 1)).unwrap();
    assert_eq!(context.get_next_command(), None);
    assert_eq!(context.term_of_leader(), Some(2));
}

// --- the fence's earlier upstream fixes undone ----------------------------------------------

/// Before HDDS-3988 nothing is fenced: a deposed leader's command runs after the new
/// leader's term was heard, and the term stays unset.
#[test]
fn context_before_hdds_3988_hands_out_a_deposed_leaders_command() {
    let context = heartbeating(StateContextBehavior::LegacyNoTermFence);
    context.add_command(close_command(1, 2)).unwrap();
    assert!(context.get_next_command().is_some());
    context.update_term_from_heartbeat(2).unwrap();
    context.add_command(close_command(2, 1)).unwrap();
    let dispatched = context.get_next_command().expect("the defect: term 1 runs");
    assert_eq!(dispatched.command.term, 1);
    assert_eq!(context.term_of_leader(), None);
    assert_eq!(context.stats().dropped_stale, 0);
}

/// Before HDDS-7621 a heartbeat response's term is not read: with the term at 1, the new
/// leader's heartbeats (term 2) without commands leave it there, and the deposed leader's
/// next command runs. The seed's patch drops it.
#[test]
fn context_before_hdds_7621_runs_a_stale_command_while_the_new_leader_only_heartbeats() {
    for (behavior, runs) in [
        (StateContextBehavior::LegacyTermFromCommandsOnly, true),
        (StateContextBehavior::SeedPatch, false),
    ] {
        let context = heartbeating(behavior);
        context.add_command(close_command(1, 1)).unwrap();
        assert!(context.get_next_command().is_some(), "{behavior:?}");
        context.update_term_from_heartbeat(2).unwrap();
        context.add_command(close_command(2, 1)).unwrap();
        assert_eq!(context.get_next_command().is_some(), runs, "{behavior:?}");
    }
}

/// Before HDDS-7619 a queued command does not raise the term: the deposed leader's
/// command queued ahead of the new leader's is polled first and runs at the old term.
/// From HDDS-7619 on (HDDS-7621 undone or not) it is dropped.
#[test]
fn context_before_hdds_7619_runs_a_command_queued_ahead_of_a_newer_one() {
    for (behavior, runs) in [
        (StateContextBehavior::LegacyTermOnPoll, true),
        (StateContextBehavior::LegacyTermFromCommandsOnly, false),
        (StateContextBehavior::SeedPatch, false),
    ] {
        let context = heartbeating(behavior);
        context.add_command(close_command(1, 1)).unwrap();
        assert!(context.get_next_command().is_some(), "{behavior:?}");
        context.add_command(close_command(2, 1)).unwrap();
        context.add_command(close_command(3, 2)).unwrap();
        let first = context.get_next_command().expect("a command runs");
        assert_eq!(first.command.term == 1, runs, "{behavior:?}");
    }
}

/// Before HDDS-7621 the new leader's term still comes with its commands: queued, it
/// raises the term (HDDS-7619) and the deposed leader's command queued before it is dropped.
#[test]
fn context_before_hdds_7621_learns_the_term_from_a_queued_command() {
    let context = heartbeating(StateContextBehavior::LegacyTermFromCommandsOnly);
    context.add_command(close_command(1, 1)).unwrap();
    assert!(context.get_next_command().is_some());
    context.add_command(close_command(2, 1)).unwrap();
    context.add_command(close_command(3, 2)).unwrap();
    assert_eq!(context.term_of_leader(), Some(2));
    let dispatched = context.get_next_command().expect("the term-2 command runs");
    assert_eq!(dispatched.command.term, 2);
    assert_eq!(context.stats().dropped_stale, 1);
}

// --- init rules --------------------------------------------------------------------------

#[test]
fn init_waits_for_majority_of_active_endpoints() {
    let (context, _) = context_with(
        StateContextBehavior::SeedPatch,
        StateContextConfig::default(),
    );
    context.add_command(close_command(1, 1)).unwrap();
    context.endpoints()[0].set_state(EndpointState::Heartbeat);
    assert_eq!(context.get_next_command(), None, "1 of 3 is no majority");
    assert_eq!(context.term_of_leader(), None);
    context.endpoints()[1].set_state(EndpointState::Heartbeat);
    assert!(context.get_next_command().is_some(), "2 of 3 is");
}

#[test]
fn passive_endpoints_do_not_count_toward_init() {
    let clock = ManualClock::new(START_MS);
    let context = StateContext::new(
        StateContextBehavior::SeedPatch,
        StateContextConfig::default(),
        &[(ScmId(1), false), (ScmId(9), true)],
        clock.shared(),
    )
    .unwrap();
    context.endpoints()[1].set_state(EndpointState::Heartbeat);
    context.add_command(close_command(1, 1)).unwrap();
    assert_eq!(
        context.get_next_command(),
        None,
        "Recon alone is not a majority"
    );
    context.endpoints()[0].set_state(EndpointState::Heartbeat);
    assert!(context.get_next_command().is_some());
}

#[test]
fn init_needs_a_queued_command() {
    let context = heartbeating(StateContextBehavior::SeedPatch);
    context.update_term_from_heartbeat(5).unwrap();
    assert_eq!(context.get_next_command(), None);
    assert_eq!(
        context.term_of_leader(),
        None,
        "init happens at the same moment as before"
    );
}

#[test]
fn await_leader_term_holds_commands_until_a_leader_term_arrives() {
    let context = heartbeating(StateContextBehavior::Hardened);
    context.add_command(close_command(1, 1)).unwrap();
    assert_eq!(context.get_next_command(), None);
    assert_eq!(
        context.queue_len(),
        1,
        "the command waits, it is not dropped"
    );
    context.update_term_from_heartbeat(1).unwrap();
    assert_eq!(context.get_next_command().map(|d| d.command.term), Some(1));
}

#[test]
fn await_leader_term_falls_back_after_its_bound() {
    let config = StateContextConfig {
        await_leader_term_bound_ms: 10_000,
        ..StateContextConfig::default()
    };
    let (context, clock) = context_with(StateContextBehavior::Hardened, config);
    all_heartbeating(&context);
    context.add_command(close_command(1, 1)).unwrap();
    clock.advance_ms(9_999);
    assert_eq!(context.get_next_command(), None);
    clock.advance_ms(1);
    assert_eq!(
        context.get_next_command().map(|d| d.command.term),
        Some(1),
        "SCMs that send no term still get their commands run"
    );
}

#[test]
fn await_leader_term_bound_restarts_with_the_datanode() {
    let config = StateContextConfig {
        await_leader_term_bound_ms: 10_000,
        ..StateContextConfig::default()
    };
    let (context, clock) = context_with(StateContextBehavior::Hardened, config);
    clock.advance_ms(20_000);
    context.restart();
    all_heartbeating(&context);
    context.add_command(close_command(1, 1)).unwrap();
    assert_eq!(context.get_next_command(), None);
}

// --- queue, term and restart -------------------------------------------------------------

#[test]
fn full_queue_refuses_command_with_typed_error() {
    let config = StateContextConfig {
        command_queue_limit: 2,
        ..StateContextConfig::default()
    };
    let (context, _) = context_with(StateContextBehavior::SeedPatch, config);
    context.add_command(close_command(1, 1)).unwrap();
    context.add_command(close_command(2, 1)).unwrap();
    assert_eq!(
        context.add_command(close_command(3, 1)),
        Err(DatanodeError::CommandQueueFull {
            limit: 2,
            dropped: 1
        })
    );
    assert_eq!(context.queue_len(), 2);
    assert_eq!(context.stats().rejected_queue_full, 1);
}

#[test]
fn default_queue_limit_is_ozones() {
    assert_eq!(StateContextConfig::default().command_queue_limit, 5000);
}

#[test]
fn zero_queue_limit_is_invalid_config() {
    let clock = ManualClock::new(0);
    let config = StateContextConfig {
        command_queue_limit: 0,
        ..StateContextConfig::default()
    };
    assert!(matches!(
        StateContext::new(StateContextBehavior::SeedPatch, config, &[], clock.shared()),
        Err(DatanodeError::InvalidConfig { .. })
    ));
}

#[test]
fn rejects_term_below_non_ha_sentinel() {
    let context = heartbeating(StateContextBehavior::SeedPatch);
    assert_eq!(
        context.update_term_from_heartbeat(-2),
        Err(DatanodeError::InvalidTerm { term: -2 })
    );
    assert_eq!(
        context.add_command(close_command(1, i64::MIN)),
        Err(DatanodeError::InvalidTerm { term: i64::MIN })
    );
    assert_eq!(context.queue_len(), 0);
}

#[test]
fn accepts_non_ha_sentinel_term() {
    let context = heartbeating(StateContextBehavior::SeedPatch);
    context.update_term_from_heartbeat(-1).unwrap();
    context.add_command(close_command(1, -1)).unwrap();
    assert_eq!(context.get_next_command().map(|d| d.command.term), Some(-1));
}

#[test]
fn command_of_higher_term_raises_term_and_older_ones_are_dropped() {
    let context = heartbeating(StateContextBehavior::SeedPatch);
    context.add_command(close_command(1, 1)).unwrap();
    assert!(context.get_next_command().is_some());
    context.add_command(close_command(2, 1)).unwrap();
    context.add_command(close_command(3, 3)).unwrap();
    context.add_command(close_command(4, 2)).unwrap();
    assert_eq!(context.term_of_leader(), Some(3), "add_command raised it");
    assert_eq!(
        context.get_next_command().map(|d| d.command.id),
        Some(CommandId(3))
    );
    assert_eq!(context.get_next_command(), None);
    assert_eq!(context.stats().dropped_stale, 2);
}

#[test]
fn restart_resets_term_and_queue() {
    let context = heartbeating(StateContextBehavior::SeedPatch);
    context.add_command(close_command(1, 4)).unwrap();
    assert!(context.get_next_command().is_some());
    context.add_command(close_command(2, 4)).unwrap();
    let before = context.observe();
    context.restart();
    let after = context.observe();
    assert_eq!(context.term_of_leader(), None);
    assert_eq!(context.queue_len(), 0);
    assert_eq!(context.heartbeat_term_high_water(), None);
    assert_eq!(after.incarnation, before.incarnation + 1);
    assert!(
        context
            .endpoints()
            .iter()
            .all(|e| e.state() == EndpointState::GetVersion)
    );
}
