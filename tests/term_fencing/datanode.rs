//! Datanode SCM-term fencing (HDDS-17268) without a checker: the three named outcomes of
//! the seed's patch (spec A.14), each legacy defect on its own, the await mode's bound,
//! the heartbeat task's handling of responses, the handlers' fences, every typed error,
//! and the production driver on real threads.

use hadoop_ref::clock::ManualClock;
use hadoop_ref::datanode::DatanodeError;
use hadoop_ref::datanode::container::handler::KeyValueHandler;
use hadoop_ref::datanode::container::store::MemoryStore;
use hadoop_ref::datanode::container::volume::MemoryVolume;
use hadoop_ref::datanode::container::{
    ContainerBehavior, ContainerConfig, ContainerController, ContainerError, PeerError,
};
use hadoop_ref::datanode::daemon::{Datanode, DatanodeConfig};
use hadoop_ref::datanode::dispatcher::{CommandDispatcher, CommandOutcome};
use hadoop_ref::datanode::heartbeat::{HeartbeatEndpointTask, TaskOutcome};
use hadoop_ref::datanode::state_context::{
    EndpointState, StateContext, StateContextBehavior, StateContextConfig,
};
use hadoop_ref::hdds::command::{CommandId, CommandKind, DeletedBlocksTransaction, ScmCommand};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::heartbeat::HeartbeatResponse;
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, ScmId};
use hadoop_ref::hdds::term::Term;
use hadoop_ref::scenarios::container::write_block;
use hadoop_ref::sim::peers::PeerNetwork;
use hadoop_ref::sim::replicas::{controller_of, replicas_in_state};
use hadoop_ref::sim::scm_endpoint::{InProcessScm, NotLeader};
use hadoop_ref::sync::{Arc, thread};

const START_MS: u64 = 1_000_000;

fn context_with(
    behavior: StateContextBehavior,
    config: StateContextConfig,
) -> (StateContext, ManualClock) {
    let clock = ManualClock::new(START_MS);
    let context = StateContext::new(
        behavior,
        config,
        &[(ScmId(1), false), (ScmId(2), false), (ScmId(3), false)],
        clock.shared(),
    )
    .expect("valid config");
    (context, clock)
}

/// A context whose endpoints all heartbeat, so init needs only a queued command.
fn heartbeating(behavior: StateContextBehavior) -> StateContext {
    let (context, _) = context_with(behavior, StateContextConfig::default());
    all_heartbeating(&context);
    context
}

fn all_heartbeating(context: &StateContext) {
    for endpoint in context.endpoints() {
        endpoint.set_state(EndpointState::Heartbeat);
    }
}

fn command(id: u64, term: Term) -> ScmCommand {
    ScmCommand::new(
        CommandId(id),
        term,
        CommandKind::CloseContainer {
            container: ContainerId(id),
        },
    )
}

fn force_delete(id: u64, term: Term, container: u64) -> ScmCommand {
    ScmCommand::new(
        CommandId(id),
        term,
        CommandKind::DeleteContainer {
            container: ContainerId(container),
            force: true,
        },
    )
}

// --- the three named outcomes of spec A.14 -------------------------------------------------

#[test]
fn drops_command_of_stale_leader_if_newer_term_was_seen_before_init() {
    let context = heartbeating(StateContextBehavior::Fixed);
    context.update_term_from_heartbeat(2).unwrap();
    context.add_command(command(1, 1)).unwrap();
    assert_eq!(context.get_next_command(), None);
    assert_eq!(context.term_of_leader(), Some(2));
    assert_eq!(context.stats().dropped_stale, 1);
}

#[test]
fn inits_term_from_command_if_older_term_was_seen_before_init() {
    let context = heartbeating(StateContextBehavior::Fixed);
    context.update_term_from_heartbeat(1).unwrap();
    context.add_command(command(1, 2)).unwrap();
    let dispatched = context.get_next_command().expect("term-2 command runs");
    assert_eq!(dispatched.command.term, 2);
    assert_eq!(dispatched.term_at_dispatch, 2);
    assert_eq!(context.term_of_leader(), Some(2));
}

#[test]
fn concurrent_term_updates_keep_highest_term() {
    // Real threads, many rounds: the locked update never loses the higher term.
    for _ in 0..200 {
        let context = Arc::new(heartbeating(StateContextBehavior::Fixed));
        context.add_command(command(1, 1)).unwrap();
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
    context.add_command(command(1, 1)).unwrap();
    let dispatched = context.get_next_command().expect("the defect: term 1 runs");
    assert_eq!(dispatched.command.term, 1);
    assert_eq!(dispatched.heartbeat_term_high_water, Some(2));
}

#[test]
fn legacy_ignore_before_init_still_raises_term_after_init() {
    let context = heartbeating(StateContextBehavior::LegacyIgnoreHeartbeatTermBeforeInit);
    context.add_command(command(1, 1)).unwrap();
    assert!(context.get_next_command().is_some());
    context.update_term_from_heartbeat(4).unwrap();
    assert_eq!(context.term_of_leader(), Some(4));
}

#[test]
fn legacy_unlocked_update_records_term_before_init() {
    // Defect 2 alone: the before-init fix is in place.
    let context = heartbeating(StateContextBehavior::LegacyUnlockedTermUpdate);
    context.update_term_from_heartbeat(2).unwrap();
    context.add_command(command(1, 1)).unwrap();
    assert_eq!(context.get_next_command(), None);
    assert_eq!(context.term_of_leader(), Some(2));
}

// --- init rules --------------------------------------------------------------------------

#[test]
fn init_waits_for_majority_of_active_endpoints() {
    let (context, _) = context_with(StateContextBehavior::Fixed, StateContextConfig::default());
    context.add_command(command(1, 1)).unwrap();
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
        StateContextBehavior::Fixed,
        StateContextConfig::default(),
        &[(ScmId(1), false), (ScmId(9), true)],
        clock.shared(),
    )
    .unwrap();
    context.endpoints()[1].set_state(EndpointState::Heartbeat);
    context.add_command(command(1, 1)).unwrap();
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
    let context = heartbeating(StateContextBehavior::Fixed);
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
    let context = heartbeating(StateContextBehavior::AwaitLeaderTerm);
    context.add_command(command(1, 1)).unwrap();
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
    let (context, clock) = context_with(StateContextBehavior::AwaitLeaderTerm, config);
    all_heartbeating(&context);
    context.add_command(command(1, 1)).unwrap();
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
    let (context, clock) = context_with(StateContextBehavior::AwaitLeaderTerm, config);
    clock.advance_ms(20_000);
    context.restart();
    all_heartbeating(&context);
    context.add_command(command(1, 1)).unwrap();
    assert_eq!(context.get_next_command(), None);
}

// --- queue, term and restart -------------------------------------------------------------

#[test]
fn full_queue_refuses_command_with_typed_error() {
    let config = StateContextConfig {
        command_queue_limit: 2,
        ..StateContextConfig::default()
    };
    let (context, _) = context_with(StateContextBehavior::Fixed, config);
    context.add_command(command(1, 1)).unwrap();
    context.add_command(command(2, 1)).unwrap();
    assert_eq!(
        context.add_command(command(3, 1)),
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
        StateContext::new(StateContextBehavior::Fixed, config, &[], clock.shared()),
        Err(DatanodeError::InvalidConfig { .. })
    ));
}

#[test]
fn rejects_term_below_non_ha_sentinel() {
    let context = heartbeating(StateContextBehavior::Fixed);
    assert_eq!(
        context.update_term_from_heartbeat(-2),
        Err(DatanodeError::InvalidTerm { term: -2 })
    );
    assert_eq!(
        context.add_command(command(1, i64::MIN)),
        Err(DatanodeError::InvalidTerm { term: i64::MIN })
    );
    assert_eq!(context.queue_len(), 0);
}

#[test]
fn accepts_non_ha_sentinel_term() {
    let context = heartbeating(StateContextBehavior::Fixed);
    context.update_term_from_heartbeat(-1).unwrap();
    context.add_command(command(1, -1)).unwrap();
    assert_eq!(context.get_next_command().map(|d| d.command.term), Some(-1));
}

#[test]
fn command_of_higher_term_raises_term_and_older_ones_are_dropped() {
    let context = heartbeating(StateContextBehavior::Fixed);
    context.add_command(command(1, 1)).unwrap();
    assert!(context.get_next_command().is_some());
    context.add_command(command(2, 1)).unwrap();
    context.add_command(command(3, 3)).unwrap();
    context.add_command(command(4, 2)).unwrap();
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
    let context = heartbeating(StateContextBehavior::Fixed);
    context.add_command(command(1, 4)).unwrap();
    assert!(context.get_next_command().is_some());
    context.add_command(command(2, 4)).unwrap();
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

// --- heartbeat task ----------------------------------------------------------------------

fn task_for(scm: &InProcessScm, context: &Arc<StateContext>) -> HeartbeatEndpointTask {
    HeartbeatEndpointTask::new(
        DatanodeId(1),
        Arc::clone(&context.endpoints()[0]),
        scm.endpoint(),
        Arc::clone(context),
    )
}

fn single_scm_context(behavior: StateContextBehavior) -> Arc<StateContext> {
    Arc::new(
        StateContext::new(
            behavior,
            StateContextConfig::default(),
            &[(ScmId(1), false)],
            ManualClock::new(START_MS).shared(),
        )
        .unwrap(),
    )
}

#[test]
fn endpoint_moves_getversion_register_heartbeat() {
    let scm = InProcessScm::new(ScmId(1));
    scm.become_leader(7);
    let context = single_scm_context(StateContextBehavior::Fixed);
    let task = task_for(&scm, &context);
    assert_eq!(task.run_once(), Ok(TaskOutcome::Versioned));
    assert_eq!(task.endpoint().state(), EndpointState::Register);
    assert_eq!(task.run_once(), Ok(TaskOutcome::Registered));
    assert_eq!(task.endpoint().state(), EndpointState::Heartbeat);
    match task.run_once() {
        Ok(TaskOutcome::Heartbeat(summary)) => assert_eq!(summary.term, Some(7)),
        other => panic!("expected a heartbeat, got {other:?}"),
    }
}

#[test]
fn unreachable_scm_counts_missed_heartbeats() {
    let scm = InProcessScm::new(ScmId(1));
    scm.pause();
    let context = single_scm_context(StateContextBehavior::Fixed);
    let task = task_for(&scm, &context);
    assert!(matches!(
        task.run_once(),
        Err(DatanodeError::ScmUnreachable { scm: ScmId(1), .. })
    ));
    assert_eq!(task.endpoint().missed_count(), 1);
    assert_eq!(task.endpoint().state(), EndpointState::GetVersion);
    scm.resume();
    assert_eq!(task.run_once(), Ok(TaskOutcome::Versioned));
    assert_eq!(task.endpoint().missed_count(), 0);
}

#[test]
fn unregistered_datanode_is_told_to_reregister() {
    let scm = InProcessScm::new(ScmId(1));
    let context = single_scm_context(StateContextBehavior::Fixed);
    let task = task_for(&scm, &context);
    // Skip registration: the SCM does not know the datanode.
    task.endpoint().set_state(EndpointState::Heartbeat);
    match task.run_once() {
        Ok(TaskOutcome::Heartbeat(summary)) => assert!(summary.reregister),
        other => panic!("expected a heartbeat, got {other:?}"),
    }
    assert_eq!(task.endpoint().state(), EndpointState::GetVersion);
    assert_eq!(context.queue_len(), 0, "re-register is never queued");
}

#[test]
fn response_for_another_datanode_changes_nothing() {
    let scm = InProcessScm::new(ScmId(1));
    let context = single_scm_context(StateContextBehavior::Fixed);
    let task = task_for(&scm, &context);
    let response = HeartbeatResponse {
        datanode: DatanodeId(2),
        term: Some(5),
        commands: vec![command(1, 5)],
    };
    assert_eq!(
        task.process_response(response),
        Err(DatanodeError::ResponseForAnotherDatanode {
            expected: DatanodeId(1),
            actual: DatanodeId(2)
        })
    );
    assert_eq!(context.queue_len(), 0);
    assert_eq!(context.heartbeat_term_high_water(), None);
}

#[test]
fn malformed_response_is_rejected_whole() {
    let scm = InProcessScm::new(ScmId(1));
    let context = single_scm_context(StateContextBehavior::Fixed);
    let task = task_for(&scm, &context);
    let response = HeartbeatResponse {
        datanode: DatanodeId(1),
        term: Some(5),
        commands: vec![command(1, 5), command(2, -7)],
    };
    assert_eq!(
        task.process_response(response),
        Err(DatanodeError::InvalidTerm { term: -7 })
    );
    assert_eq!(context.queue_len(), 0);
    assert_eq!(context.heartbeat_term_high_water(), None);
}

#[test]
fn empty_delete_blocks_command_is_ignored() {
    let scm = InProcessScm::new(ScmId(1));
    let context = single_scm_context(StateContextBehavior::Fixed);
    let task = task_for(&scm, &context);
    let empty = ScmCommand::new(
        CommandId(1),
        1,
        CommandKind::DeleteBlocks {
            transactions: vec![],
        },
    );
    let summary = task
        .process_response(HeartbeatResponse {
            datanode: DatanodeId(1),
            term: None,
            commands: vec![empty],
        })
        .unwrap();
    assert_eq!(summary.queued, 0);
    assert_eq!(context.queue_len(), 0);
}

#[test]
fn full_queue_reports_every_command_it_dropped() {
    let context = Arc::new(
        StateContext::new(
            StateContextBehavior::Fixed,
            StateContextConfig {
                command_queue_limit: 1,
                ..StateContextConfig::default()
            },
            &[(ScmId(1), false)],
            ManualClock::new(START_MS).shared(),
        )
        .unwrap(),
    );
    let scm = InProcessScm::new(ScmId(1));
    let task = task_for(&scm, &context);
    let result = task.process_response(HeartbeatResponse {
        datanode: DatanodeId(1),
        term: Some(1),
        commands: vec![command(1, 1), command(2, 1), command(3, 1)],
    });
    assert_eq!(
        result,
        Err(DatanodeError::CommandQueueFull {
            limit: 1,
            dropped: 2
        })
    );
    assert_eq!(context.queue_len(), 1);
}

#[test]
fn follower_hands_out_queued_commands_without_a_term() {
    let scm = InProcessScm::new(ScmId(1));
    scm.become_leader(3);
    scm.queue_command(
        DatanodeId(1),
        CommandKind::CloseContainer {
            container: ContainerId(1),
        },
        0,
    )
    .unwrap();
    scm.step_down();
    assert!(matches!(
        scm.queue_command(DatanodeId(1), CommandKind::Reregister, 0),
        Err(NotLeader { .. })
    ));
    let context = single_scm_context(StateContextBehavior::Fixed);
    let task = task_for(&scm, &context);
    task.run_once().unwrap();
    task.run_once().unwrap();
    match task.run_once() {
        Ok(TaskOutcome::Heartbeat(summary)) => {
            assert_eq!(summary.term, None);
            assert_eq!(summary.queued, 1);
        }
        other => panic!("expected a heartbeat, got {other:?}"),
    }
    assert_eq!(scm.queued_for(DatanodeId(1)), 0);
}

// --- handlers, on the real replicas -------------------------------------------------------

/// The replicas of dn1 behind the dispatcher, in a volume: c1 CLOSED and empty, c2 OPEN
/// and empty, c3 CLOSED with five blocks.
struct Replicas {
    dispatcher: CommandDispatcher,
    handler: Arc<KeyValueHandler>,
    volume: MemoryVolume,
    clock: ManualClock,
}

fn replicas(behavior: StateContextBehavior) -> Replicas {
    let clock = ManualClock::new(START_MS);
    let context = Arc::new(
        StateContext::new(
            behavior,
            StateContextConfig::default(),
            &[(ScmId(1), false)],
            clock.shared(),
        )
        .unwrap(),
    );
    context.endpoints()[0].set_state(EndpointState::Heartbeat);
    let volume = MemoryVolume::new();
    for (id, state) in [(1, ContainerState::Closed), (2, ContainerState::Open)] {
        volume
            .insert(ContainerId(id), MemoryStore::new(state))
            .unwrap();
    }
    let full = MemoryStore::new(ContainerState::Closed);
    for block in 1..=5 {
        write_block(&full, block, 1).unwrap();
    }
    volume.insert(ContainerId(3), full).unwrap();
    let handler = Arc::new(
        KeyValueHandler::open(
            DatanodeId(1),
            ContainerConfig::new(ContainerBehavior::Fixed),
            volume.shared(),
        )
        .unwrap(),
    );
    Replicas {
        dispatcher: CommandDispatcher::new(context, controller_of(&handler), clock.shared()),
        handler,
        volume,
        clock,
    }
}

impl Replicas {
    /// Whether dn1 still has a replica of `container`: in its set and in its volume.
    fn holds(&self, container: u64) -> bool {
        let id = ContainerId(container);
        let in_set = self.handler.container(id).is_ok();
        assert_eq!(
            in_set,
            self.volume.store(id).is_some(),
            "set and volume agree"
        );
        in_set
    }
}

#[test]
fn handler_skips_command_whose_deadline_passed() {
    let dn = replicas(StateContextBehavior::Fixed);
    let cmd = force_delete(1, 1, 1).with_deadline_ms(START_MS + 100);
    dn.dispatcher.context().add_command(cmd).unwrap();
    dn.clock.advance_ms(101);
    let report = dn.dispatcher.process_next().unwrap();
    assert_eq!(
        report.outcome,
        CommandOutcome::SkippedExpired {
            now_ms: START_MS + 101
        }
    );
    assert!(dn.holds(1));
}

/// The harm of HDDS-17268, made real: a force delete that passes both fences removes the
/// replica's data, here a `KeyValueContainer` with five blocks.
#[test]
fn force_delete_through_the_dispatcher_removes_the_real_replica() {
    let dn = replicas(StateContextBehavior::Fixed);
    let cmd = force_delete(1, 1, 3).with_deadline_ms(START_MS + 100);
    dn.dispatcher.context().add_command(cmd).unwrap();
    dn.clock.advance_ms(100);
    assert_eq!(
        dn.dispatcher.process_next().unwrap().outcome,
        CommandOutcome::Executed,
        "a command runs at its deadline"
    );
    assert!(!dn.holds(3));
    assert!(dn.holds(1) && dn.holds(2));
}

/// Beside the test above: the same force delete from a leader deposed between dispatch and
/// execution is fenced, and the replica keeps its data.
#[test]
fn stale_leader_force_delete_is_fenced_and_the_replica_survives() {
    let dn = replicas(StateContextBehavior::Fixed);
    dn.dispatcher
        .context()
        .add_command(force_delete(1, 1, 3))
        .unwrap();
    let dispatched = dn.dispatcher.context().get_next_command().unwrap();
    // The new leader's heartbeat lands between dispatch and execution.
    dn.dispatcher
        .context()
        .update_term_from_heartbeat(2)
        .unwrap();
    let report = dn.dispatcher.handle(dispatched);
    assert_eq!(
        report.outcome,
        CommandOutcome::SkippedStaleTerm { current: 2 }
    );
    assert!(!report.ran());
    assert!(dn.holds(3));
    assert_eq!(
        dn.handler
            .container(ContainerId(3))
            .unwrap()
            .report()
            .unwrap()
            .block_count,
        5
    );
}

#[test]
fn non_force_delete_refuses_open_and_non_empty_replicas() {
    let dn = replicas(StateContextBehavior::Fixed);
    let controller = dn.dispatcher.controller();
    assert_eq!(
        controller.delete_container(ContainerId(2), false),
        Err(ContainerError::DeleteOnOpenContainer {
            container: ContainerId(2)
        })
    );
    assert_eq!(
        controller.delete_container(ContainerId(3), false),
        Err(ContainerError::DeleteOnNonEmptyContainer {
            container: ContainerId(3),
            blocks: 5
        })
    );
    assert_eq!(controller.delete_container(ContainerId(1), false), Ok(()));
    assert_eq!(
        controller.delete_container(ContainerId(3), true),
        Ok(()),
        "force skips the checks"
    );
    assert_eq!(
        controller.delete_container(ContainerId(9), true),
        Err(ContainerError::UnknownContainer {
            container: ContainerId(9)
        })
    );
    assert!(!dn.holds(1) && dn.holds(2) && !dn.holds(3));
}

#[test]
fn handlers_close_and_store_delete_transactions_on_the_replicas() {
    let dn = replicas(StateContextBehavior::Fixed);
    let context = dn.dispatcher.context();
    let tx = |tx_id, container| DeletedBlocksTransaction {
        tx_id,
        container: ContainerId(container),
        local_ids: vec![10, 11],
    };
    let commands = [
        CommandKind::CloseContainer {
            container: ContainerId(2),
        },
        CommandKind::ReplicateContainer {
            container: ContainerId(4),
            sources: vec![DatanodeId(7)],
        },
        CommandKind::DeleteBlocks {
            transactions: vec![tx(5, 1), tx(5, 1), tx(6, 1)],
        },
        CommandKind::DeleteBlocks {
            transactions: vec![tx(7, 1), tx(8, 42)],
        },
    ];
    for (i, kind) in commands.into_iter().enumerate() {
        context
            .add_command(ScmCommand::new(CommandId(i as u64), 1, kind))
            .unwrap();
    }
    let outcomes: Vec<_> = std::iter::from_fn(|| dn.dispatcher.process_next())
        .map(|r| r.outcome)
        .collect();
    assert_eq!(outcomes[0], CommandOutcome::Executed);
    assert!(
        matches!(
            &outcomes[1],
            CommandOutcome::Failed(DatanodeError::Container(ContainerError::Peer(
                PeerError::Unreachable {
                    peer: DatanodeId(7),
                    ..
                }
            )))
        ),
        "no route to the source: {:?}",
        outcomes[1]
    );
    assert_eq!(outcomes[2], CommandOutcome::Executed);
    assert_eq!(
        outcomes[3],
        CommandOutcome::Failed(DatanodeError::Container(ContainerError::UnknownContainer {
            container: ContainerId(42)
        }))
    );
    let state = dn.handler.container(ContainerId(2)).unwrap().state();
    assert_eq!(state, ContainerState::Closed);
    assert!(!dn.holds(4), "a failed import leaves nothing behind");
    let summary = dn
        .handler
        .container(ContainerId(1))
        .unwrap()
        .store()
        .summary()
        .unwrap();
    assert_eq!(
        (summary.pending_transactions, summary.last_delete_tx_id),
        (3, 7),
        "a duplicate is kept once; each transaction is acknowledged on its own, so the one \
         of a known container is stored although its command names an unknown one"
    );
}

/// Two datanodes as each other's peers: `dn1` (an empty set of replicas) and `dn7`,
/// holding c4 CLOSED with two blocks.
fn peered_pair() -> (Replicas, Arc<KeyValueHandler>) {
    let network = PeerNetwork::new();
    let dn7 = replicas_in_state(DatanodeId(7), &[ContainerId(4)], ContainerState::Closed).unwrap();
    let store = dn7.container(ContainerId(4)).unwrap();
    for block in [1, 2] {
        write_block(store.store().as_ref(), block, 2).unwrap();
    }
    network.register(&dn7);
    let mut dn1 = replicas(StateContextBehavior::Fixed);
    dn1.handler = Arc::new(
        KeyValueHandler::new(
            DatanodeId(1),
            ContainerConfig::new(ContainerBehavior::Fixed),
        )
        .with_peers(network.directory_for(DatanodeId(1))),
    );
    network.register(&dn1.handler);
    dn1.dispatcher = CommandDispatcher::new(
        Arc::clone(dn1.dispatcher.context()),
        controller_of(&dn1.handler),
        dn1.clock.shared(),
    );
    (dn1, dn7)
}

#[test]
fn replicate_command_imports_the_replica_from_its_source() {
    let (dn1, _dn7) = peered_pair();
    let replicate = CommandKind::ReplicateContainer {
        container: ContainerId(4),
        sources: vec![DatanodeId(9), DatanodeId(7)],
    };
    let context = dn1.dispatcher.context();
    context
        .add_command(ScmCommand::new(CommandId(1), 1, replicate))
        .unwrap();
    assert_eq!(
        dn1.dispatcher.process_next().unwrap().outcome,
        CommandOutcome::Executed
    );
    let report = dn1
        .handler
        .container(ContainerId(4))
        .unwrap()
        .report()
        .unwrap();
    assert_eq!(
        (report.state, report.block_count),
        (ContainerState::Closed, 2)
    );
}

#[test]
fn reconcile_command_repairs_the_replica_from_its_peers() {
    let (dn1, dn7) = peered_pair();
    let c4 = ContainerId(4);
    dn1.handler
        .add_container(c4, MemoryStore::new(ContainerState::Closed).shared())
        .unwrap();
    let reconcile = CommandKind::ReconcileContainer {
        container: c4,
        peers: vec![DatanodeId(7)],
    };
    let context = dn1.dispatcher.context();
    context
        .add_command(ScmCommand::new(CommandId(1), 1, reconcile))
        .unwrap();
    assert_eq!(
        dn1.dispatcher.process_next().unwrap().outcome,
        CommandOutcome::Executed
    );
    let ours = dn1.handler.container(c4).unwrap().report().unwrap();
    let theirs = dn7.container(c4).unwrap().report().unwrap();
    assert_eq!(ours.block_count, 2);
    assert_eq!(ours.data_checksum, theirs.data_checksum);
}

// --- the production driver ---------------------------------------------------------------

/// Polls `condition` up to `attempts` times, sleeping a millisecond between tries.
fn eventually(attempts: u32, mut condition: impl FnMut() -> bool) -> bool {
    (0..attempts).any(|_| {
        let met = condition();
        if !met {
            thread::sleep(std::time::Duration::from_millis(1));
        }
        met
    })
}

#[test]
fn daemon_drops_stale_leader_force_delete_after_restart() {
    // The seed's MC4 on real threads: A (term 1) holds a force delete, B leads at term 2,
    // the datanode restarts. A is paused until B's term has reached the datanode.
    let scms: Vec<_> = (1..=3).map(|i| InProcessScm::new(ScmId(i))).collect();
    let clock = ManualClock::new(START_MS);
    let config = DatanodeConfig {
        heartbeat_interval_ms: 1,
        initial_heartbeat_interval_ms: 1,
        ..DatanodeConfig::default()
    };
    let volume = MemoryVolume::new();
    volume
        .insert(ContainerId(1), MemoryStore::new(ContainerState::Closed))
        .unwrap();
    let dn = Datanode::new(
        DatanodeId(1),
        config,
        scms.iter().map(InProcessScm::endpoint).collect(),
        volume.shared(),
        None,
        clock.shared(),
    )
    .unwrap();
    scms[0].become_leader(1);
    scms[0].pause();
    scms[0]
        .queue_command(
            DatanodeId(1),
            CommandKind::DeleteContainer {
                container: ContainerId(1),
                force: true,
            },
            0,
        )
        .unwrap();
    scms[0].step_down();
    scms[1].become_leader(2);
    dn.restart().unwrap();
    assert!(
        eventually(5_000, || dn.context().heartbeat_term_high_water()
            == Some(2)),
        "B's heartbeat reaches the datanode"
    );
    scms[0].resume();
    assert!(
        eventually(5_000, || scms[0].queued_for(DatanodeId(1)) == 0
            && dn.context().queue_len() == 0
            && dn.context().term_of_leader().is_some()),
        "A hands the command out and the processor takes it"
    );
    dn.stop();
    assert!(
        dn.controller().container(ContainerId(1)).is_ok() && volume.store(ContainerId(1)).is_some(),
        "the stale delete was dropped"
    );
    assert_eq!(dn.context().term_of_leader(), Some(2));
    assert_eq!(dn.stats().executed(), 0);
}

#[test]
fn daemon_runs_current_leader_commands_and_stops_cleanly() {
    let scm = InProcessScm::new(ScmId(1));
    scm.become_leader(4);
    let config = DatanodeConfig {
        heartbeat_interval_ms: 1,
        initial_heartbeat_interval_ms: 1,
        ..DatanodeConfig::default()
    };
    let volume = MemoryVolume::new();
    volume
        .insert(ContainerId(1), MemoryStore::new(ContainerState::Open))
        .unwrap();
    let dn = Datanode::new(
        DatanodeId(1),
        config,
        vec![scm.endpoint()],
        volume.shared(),
        None,
        ManualClock::new(START_MS).shared(),
    )
    .unwrap();
    dn.start().unwrap();
    dn.start().unwrap();
    scm.queue_command(
        DatanodeId(1),
        CommandKind::CloseContainer {
            container: ContainerId(1),
        },
        0,
    )
    .unwrap();
    assert!(eventually(5_000, || dn.stats().executed() == 1));
    dn.stop();
    dn.stop();
    assert_eq!(
        dn.controller().container(ContainerId(1)).unwrap().state(),
        ContainerState::Closed
    );
}
