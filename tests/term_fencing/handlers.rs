//! The command handlers on the real replicas (HDDS-17268) without a checker: the second
//! fence at execution (an expired deadline, a term that rose since dispatch), the harm a
//! stale force delete does when it passes both fences (`DeleteContainerCommandHandler`),
//! the checks of a non-force delete, and the close, delete-blocks, replicate
//! (`ReplicationSupervisor`) and reconcile handlers on a pair of peered datanodes.

use hadoop_ref::clock::ManualClock;
use hadoop_ref::datanode::DatanodeError;
use hadoop_ref::datanode::container::controller::shared_controller;
use hadoop_ref::datanode::container::handler::KeyValueHandler;
use hadoop_ref::datanode::container::store::MemoryStore;
use hadoop_ref::datanode::container::volume::MemoryVolume;
use hadoop_ref::datanode::container::{
    ContainerBehavior, ContainerConfig, ContainerController, ContainerError,
};
use hadoop_ref::datanode::dispatcher::{CommandDispatcher, CommandOutcome};
use hadoop_ref::datanode::state_context::{
    EndpointState, StateContextBehavior, StateContextConfig,
};
use hadoop_ref::hdds::command::{CommandId, CommandKind, DeletedBlocksTransaction, ScmCommand};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, PipelineId};
use hadoop_ref::sim::peers::PeerNetwork;
use hadoop_ref::sim::replica_node::write_block;
use hadoop_ref::sim::replicas::replicas_in_state;
use hadoop_ref::sync::Arc;

use crate::test_util::term_fencing::{START_MS, force_delete, single_scm_context};

/// The replicas of dn1 behind the dispatcher, in a volume: c1 CLOSED and empty, c2 OPEN
/// and empty, c3 CLOSED with five blocks.
struct Replicas {
    dispatcher: CommandDispatcher,
    handler: Arc<KeyValueHandler>,
    volume: MemoryVolume,
    clock: ManualClock,
}

/// [`Replicas`], dn1's one endpoint heartbeating.
fn replicas(behavior: StateContextBehavior) -> Replicas {
    let clock = ManualClock::new(START_MS);
    let context = single_scm_context(behavior, StateContextConfig::default(), &clock);
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
            ContainerConfig::new(ContainerBehavior::Hardened),
            volume.shared(),
        )
        .unwrap(),
    );
    Replicas {
        dispatcher: CommandDispatcher::new(context, shared_controller(&handler), clock.shared()),
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
    let dn = replicas(StateContextBehavior::SeedPatch);
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
    let dn = replicas(StateContextBehavior::SeedPatch);
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
    let dn = replicas(StateContextBehavior::SeedPatch);
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

/// The code before HDDS-7620: the handler does not read the term again, and the force
/// delete of the leader deposed between dispatch and execution removes the replica.
#[test]
fn handler_before_hdds_7620_runs_a_force_delete_whose_leader_was_deposed_after_dispatch() {
    let dn = replicas(StateContextBehavior::LegacyNoExecutorTermCheck);
    let context = dn.dispatcher.context();
    context.add_command(force_delete(1, 1, 3)).unwrap();
    let dispatched = context.get_next_command().unwrap();
    context.update_term_from_heartbeat(2).unwrap();
    let report = dn.dispatcher.handle(dispatched);
    assert_eq!(report.outcome, CommandOutcome::Executed);
    assert!(!dn.holds(3));
}

#[test]
fn non_force_delete_refuses_open_and_non_empty_replicas() {
    let dn = replicas(StateContextBehavior::SeedPatch);
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
    let dn = replicas(StateContextBehavior::SeedPatch);
    let context = dn.dispatcher.context();
    let tx = |tx_id, container| DeletedBlocksTransaction {
        tx_id,
        container: ContainerId(container),
        local_ids: vec![10, 11],
    };
    let commands = [
        CommandKind::CloseContainer {
            container: ContainerId(2),
            pipeline: PipelineId(1),
            force: false,
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
    assert_eq!(
        outcomes[1],
        CommandOutcome::Failed(DatanodeError::Container(ContainerError::NoPeerDirectory {
            peer: DatanodeId(7)
        })),
        "a datanode without a peer directory cannot reach the source"
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
    let mut dn1 = replicas(StateContextBehavior::SeedPatch);
    dn1.handler = Arc::new(
        KeyValueHandler::new(
            DatanodeId(1),
            ContainerConfig::new(ContainerBehavior::Hardened),
        )
        .with_peers(network.directory_for(DatanodeId(1))),
    );
    network.register(&dn1.handler);
    dn1.dispatcher = CommandDispatcher::new(
        Arc::clone(dn1.dispatcher.context()),
        shared_controller(&dn1.handler),
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
