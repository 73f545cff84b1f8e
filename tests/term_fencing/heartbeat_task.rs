//! `HeartbeatEndpointTask` (HDDS-17268) without a checker: the endpoint's states
//! (GETVERSION, REGISTER, HEARTBEAT), an unreachable SCM, and how
//! `HeartbeatEndpointTask.processResponse` treats a response: re-register, another
//! datanode's, a malformed term, an empty delete-blocks command, a full queue, and the
//! commands a stepped-down SCM still hands out without a term.

use hadoop_ref::clock::ManualClock;
use hadoop_ref::datanode::DatanodeError;
use hadoop_ref::datanode::heartbeat::{HeartbeatEndpointTask, TaskOutcome};
use hadoop_ref::datanode::state_context::{
    EndpointState, StateContext, StateContextBehavior, StateContextConfig,
};
use hadoop_ref::hdds::command::{CommandId, CommandKind, ScmCommand};
use hadoop_ref::hdds::heartbeat::HeartbeatResponse;
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, PipelineId, ScmId};
use hadoop_ref::sim::scm_endpoint::{InProcessScm, NotLeader};
use hadoop_ref::sync::Arc;

use crate::test_util::term_fencing::{START_MS, close_command, single_scm_context};

/// The heartbeat task of dn1 for `scm`, on the first endpoint of `context`.
fn task_for(scm: &InProcessScm, context: &Arc<StateContext>) -> HeartbeatEndpointTask {
    HeartbeatEndpointTask::new(
        DatanodeId(1),
        Arc::clone(&context.endpoints()[0]),
        scm.endpoint(),
        Arc::clone(context),
    )
}

/// A fixed context with the one endpoint of SCM 1, on a fresh clock.
fn fixed_context() -> Arc<StateContext> {
    single_scm_context(
        StateContextBehavior::SeedPatch,
        StateContextConfig::default(),
        &ManualClock::new(START_MS),
    )
}

#[test]
fn endpoint_moves_getversion_register_heartbeat() {
    let scm = InProcessScm::new(ScmId(1));
    scm.become_leader(7);
    let context = fixed_context();
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
    let context = fixed_context();
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
    let context = fixed_context();
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
    let context = fixed_context();
    let task = task_for(&scm, &context);
    let response = HeartbeatResponse {
        datanode: DatanodeId(2),
        term: Some(5),
        commands: vec![close_command(1, 5)],
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
    let context = fixed_context();
    let task = task_for(&scm, &context);
    let response = HeartbeatResponse {
        datanode: DatanodeId(1),
        term: Some(5),
        commands: vec![close_command(1, 5), close_command(2, -7)],
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
    let context = fixed_context();
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
    let context = single_scm_context(
        StateContextBehavior::SeedPatch,
        StateContextConfig {
            command_queue_limit: 1,
            ..StateContextConfig::default()
        },
        &ManualClock::new(START_MS),
    );
    let scm = InProcessScm::new(ScmId(1));
    let task = task_for(&scm, &context);
    let result = task.process_response(HeartbeatResponse {
        datanode: DatanodeId(1),
        term: Some(1),
        commands: vec![
            close_command(1, 1),
            close_command(2, 1),
            close_command(3, 1),
        ],
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
            pipeline: PipelineId(1),
            force: false,
        },
        0,
    )
    .unwrap();
    scm.step_down();
    assert!(matches!(
        scm.queue_command(DatanodeId(1), CommandKind::Reregister, 0),
        Err(NotLeader { .. })
    ));
    let context = fixed_context();
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

mod fuzz {
    //! Fuzzing `processResponse`: any response, well-formed or not, is taken or refused
    //! with a typed error; a refused one changes neither the term nor the queue.

    use proptest::prelude::*;
    use proptest::test_runner::FileFailurePersistence;

    use hadoop_ref::datanode::DatanodeError;
    use hadoop_ref::hdds::command::{CommandId, CommandKind, DeletedBlocksTransaction, ScmCommand};
    use hadoop_ref::hdds::heartbeat::HeartbeatResponse;
    use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, PipelineId, ScmId};
    use hadoop_ref::sim::scm_endpoint::InProcessScm;

    use super::{fixed_context, task_for};

    fn term() -> impl Strategy<Value = i64> {
        prop_oneof![-3..12i64, any::<i64>()]
    }

    fn kind() -> impl Strategy<Value = CommandKind> {
        let container = (0..4u64).prop_map(ContainerId);
        let datanodes = proptest::collection::vec((0..4u64).prop_map(DatanodeId), 0..3);
        prop_oneof![
            (container.clone(), any::<bool>())
                .prop_map(|(container, force)| CommandKind::DeleteContainer { container, force }),
            (container.clone(), any::<bool>()).prop_map(|(container, force)| {
                CommandKind::CloseContainer {
                    container,
                    pipeline: PipelineId(1),
                    force,
                }
            }),
            (container.clone(), datanodes.clone()).prop_map(|(container, sources)| {
                CommandKind::ReplicateContainer { container, sources }
            }),
            (container.clone(), datanodes).prop_map(|(container, peers)| {
                CommandKind::ReconcileContainer { container, peers }
            }),
            proptest::collection::vec(
                (
                    any::<u64>(),
                    container,
                    proptest::collection::vec(any::<u64>(), 0..3)
                ),
                0..3
            )
            .prop_map(|txs| CommandKind::DeleteBlocks {
                transactions: txs
                    .into_iter()
                    .map(|(tx_id, container, local_ids)| DeletedBlocksTransaction {
                        tx_id,
                        container,
                        local_ids,
                    })
                    .collect(),
            }),
            Just(CommandKind::Reregister),
        ]
    }

    fn response() -> impl Strategy<Value = HeartbeatResponse> {
        (
            (1..3u64).prop_map(DatanodeId),
            proptest::option::of(term()),
            proptest::collection::vec((any::<u64>(), term(), any::<u64>(), kind()), 0..6),
        )
            .prop_map(|(datanode, term, commands)| HeartbeatResponse {
                datanode,
                term,
                commands: commands
                    .into_iter()
                    .map(|(id, term, deadline_ms, kind)| ScmCommand {
                        id: CommandId(id),
                        term,
                        deadline_ms,
                        kind,
                    })
                    .collect(),
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 512,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
                "proptest-regressions/heartbeat_response.txt",
            ))),
            ..ProptestConfig::default()
        })]

        #[test]
        fn arbitrary_heartbeat_responses_never_panic(responses in proptest::collection::vec(response(), 1..6)) {
            let scm = InProcessScm::new(ScmId(1));
            let context = fixed_context();
            let task = task_for(&scm, &context);
            task.endpoint().set_state(hadoop_ref::datanode::state_context::EndpointState::Heartbeat);
            for response in responses {
                let before = (context.observe(), context.queue_len());
                match task.process_response(response) {
                    Ok(_) => {}
                    Err(
                        DatanodeError::ResponseForAnotherDatanode { .. }
                        | DatanodeError::InvalidTerm { .. },
                    ) => {
                        prop_assert_eq!((context.observe(), context.queue_len()), before);
                    }
                    Err(_) => {}
                }
            }
        }
    }
}
