//! The SCM's deleted-block log (`DeletedBlockLogImpl`, `SCMBlockDeletingService`): what a
//! round sends to whom, what an ack completes, and what a new leader starts with
//! (HDDS-17268 meets HDDS-16811 here: the delete commands a datanode fences by term).

use std::collections::{BTreeMap, BTreeSet};

use hadoop_ref::hdds::command::{
    CommandId, CommandKind, DeleteBlockTransactionResult as DeleteAck, DeletedBlocksTransaction,
    ScmCommand,
};
use hadoop_ref::hdds::container::{ContainerReplicaReport, ContainerState};
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, PipelineId};
use hadoop_ref::scm::deleted_block_log::{
    BlockDeletionConfig, ContainerView, DeleteTransactionStatus,
};
use hadoop_ref::scm::ha::Snapshot;
use hadoop_ref::scm::{ContainerInfo, LifeCycleState, ScmBehavior, StorageContainerManager};

use crate::test_util::allocation::Fixture;

const C1: ContainerId = ContainerId(1);

fn dns(ids: &[u64]) -> BTreeSet<DatanodeId> {
    ids.iter().copied().map(DatanodeId).collect()
}

fn tx(tx_id: u64, container: ContainerId, blocks: &[u64]) -> DeletedBlocksTransaction {
    DeletedBlocksTransaction {
        tx_id,
        container,
        local_ids: blocks.to_vec(),
    }
}

fn table(txs: &[DeletedBlocksTransaction]) -> BTreeMap<u64, DeletedBlocksTransaction> {
    txs.iter().map(|tx| (tx.tx_id, tx.clone())).collect()
}

fn closed_on(replicas: &[u64]) -> impl Fn(ContainerId) -> ContainerView {
    let replicas = dns(replicas);
    move |_| ContainerView::Closed {
        replicas: replicas.clone(),
        healthy: true,
    }
}

fn ok(tx_id: u64) -> DeleteAck {
    DeleteAck {
        tx_id,
        container: C1,
        success: true,
    }
}

#[test]
fn a_round_gives_each_transaction_to_every_replica_once_while_in_flight() {
    let mut status = DeleteTransactionStatus::new();
    let log = table(&[tx(1, C1, &[10, 11]), tx(2, C1, &[12])]);
    let config = BlockDeletionConfig::default();
    let round = status.pick(&log, closed_on(&[1, 2, 3]), &dns(&[1, 2, 3]), &config, 0);
    assert_eq!(round.per_datanode.len(), 3);
    for (dn, txs) in &round.per_datanode {
        let ids: Vec<u64> = txs.iter().map(|t| t.tx_id).collect();
        assert_eq!(ids, [1, 2]);
        status.record_created(*dn, CommandId(dn.0), ids, 0);
    }
    let again = status.pick(&log, closed_on(&[1, 2, 3]), &dns(&[1, 2, 3]), &config, 1);
    assert!(again.per_datanode.is_empty(), "in flight: not picked again");
    assert_eq!(status.retry_count(1), 1);
}

#[test]
fn a_transaction_completes_only_when_every_current_replica_acked() {
    let mut status = DeleteTransactionStatus::new();
    let log = table(&[tx(1, C1, &[10])]);
    let config = BlockDeletionConfig::default();
    status.pick(&log, closed_on(&[1, 2]), &dns(&[1, 2]), &config, 0);
    status.record_created(DatanodeId(1), CommandId(1), vec![1], 0);
    status.record_created(DatanodeId(2), CommandId(2), vec![1], 0);
    let replicas = |_| Some((dns(&[1, 2]), 2));
    assert!(
        status
            .on_ack(DatanodeId(1), CommandId(1), &[ok(1)], replicas)
            .is_empty()
    );
    assert_eq!(
        status.on_ack(DatanodeId(2), CommandId(2), &[ok(1)], replicas),
        [1]
    );
}

#[test]
fn a_failed_ack_leaves_the_transaction_for_a_later_round() {
    let mut status = DeleteTransactionStatus::new();
    let log = table(&[tx(1, C1, &[10])]);
    let config = BlockDeletionConfig::default();
    status.pick(&log, closed_on(&[1]), &dns(&[1]), &config, 0);
    status.record_created(DatanodeId(1), CommandId(1), vec![1], 0);
    let failed = DeleteAck {
        success: false,
        ..ok(1)
    };
    assert!(
        status
            .on_ack(DatanodeId(1), CommandId(1), &[failed], |_| Some((
                dns(&[1]),
                1
            )))
            .is_empty()
    );
    let round = status.pick(&log, closed_on(&[1]), &dns(&[1]), &config, 1);
    assert_eq!(round.per_datanode[&DatanodeId(1)], [tx(1, C1, &[10])]);
}

#[test]
fn acks_of_an_earlier_terms_commands_are_ignored_by_a_new_leader() {
    let mut status = DeleteTransactionStatus::new();
    let log = table(&[tx(1, C1, &[10])]);
    let config = BlockDeletionConfig::default();
    status.pick(&log, closed_on(&[1]), &dns(&[1]), &config, 0);
    status.record_created(DatanodeId(1), CommandId(1), vec![1], 0);
    status.on_become_leader();
    assert!(
        status
            .on_ack(DatanodeId(1), CommandId(1), &[ok(1)], |_| Some((
                dns(&[1]),
                1
            )))
            .is_empty(),
        "no entry of this term: the ack is ignored"
    );
    let round = status.pick(&log, closed_on(&[1]), &dns(&[1]), &config, 1);
    assert_eq!(round.per_datanode.len(), 1, "the new leader sends it again");
}

#[test]
fn open_containers_wait_and_missing_ones_are_purged() {
    let mut status = DeleteTransactionStatus::new();
    let log = table(&[tx(1, C1, &[10]), tx(2, ContainerId(2), &[20])]);
    let view = |c: ContainerId| {
        if c == C1 {
            ContainerView::Open
        } else {
            ContainerView::Missing
        }
    };
    let round = status.pick(&log, view, &dns(&[1]), &BlockDeletionConfig::default(), 0);
    assert!(round.per_datanode.is_empty());
    assert_eq!(round.purge, [2]);
}

#[test]
fn an_unhealthy_container_or_an_excluded_replica_holds_its_transactions_back() {
    let mut status = DeleteTransactionStatus::new();
    let log = table(&[tx(1, C1, &[10])]);
    let config = BlockDeletionConfig::default();
    let unhealthy = |_| ContainerView::Closed {
        replicas: dns(&[1, 2]),
        healthy: false,
    };
    assert!(
        status
            .pick(&log, unhealthy, &dns(&[1, 2]), &config, 0)
            .per_datanode
            .is_empty()
    );
    let round = status.pick(&log, closed_on(&[1, 2]), &dns(&[1]), &config, 0);
    assert!(
        round.per_datanode.is_empty(),
        "dn2 is over its command limit"
    );
}

#[test]
fn an_unanswered_command_times_out_and_its_transactions_are_picked_again() {
    let mut status = DeleteTransactionStatus::new();
    let log = table(&[tx(1, C1, &[10])]);
    let config = BlockDeletionConfig::default();
    status.pick(&log, closed_on(&[1]), &dns(&[1]), &config, 0);
    status.record_created(DatanodeId(1), CommandId(1), vec![1], 0);
    status.on_sent(DatanodeId(1), CommandId(1), 0);
    // `removeTimeoutScmCommand` drops a record strictly past the timeout.
    let early = config.command_timeout_ms;
    assert!(
        status
            .pick(&log, closed_on(&[1]), &dns(&[1]), &config, early)
            .per_datanode
            .is_empty()
    );
    let late = config.command_timeout_ms + 1;
    assert_eq!(
        status
            .pick(&log, closed_on(&[1]), &dns(&[1]), &config, late)
            .per_datanode
            .len(),
        1
    );
}

#[test]
fn a_round_keeps_within_its_block_limit_and_the_next_starts_where_it_stopped() {
    let mut status = DeleteTransactionStatus::new();
    let log = table(&[
        tx(1, C1, &[1, 2, 3]),
        tx(2, C1, &[4, 5, 6]),
        tx(3, C1, &[7]),
    ]);
    let config = BlockDeletionConfig {
        per_interval_max_blocks: 3,
        ..BlockDeletionConfig::default()
    };
    let ids = |status: &mut DeleteTransactionStatus| -> Vec<u64> {
        let round = status.pick(&log, closed_on(&[1]), &dns(&[1]), &config, 0);
        let ids: Vec<u64> = round.per_datanode[&DatanodeId(1)]
            .iter()
            .map(|t| t.tx_id)
            .collect();
        status.record_created(DatanodeId(1), CommandId(ids[0]), ids.clone(), 0);
        ids
    };
    assert_eq!(ids(&mut status), [1], "three blocks reach the limit");
    assert_eq!(ids(&mut status), [2], "the next round starts after tx 1");
    assert_eq!(ids(&mut status), [3]);
}

// --- through the SCM ------------------------------------------------------------------

/// Fixture SCMs 1 and 2 over one ring whose tables hold container 1, CLOSED on p1
/// (dn1, dn2, dn3), reported by all three; SCM 1 leads.
fn closed_container_cluster(f: &Fixture) -> (StorageContainerManager, StorageContainerManager) {
    for db in &f.dbs {
        db.install(Snapshot {
            index: 0,
            containers: [(
                C1,
                ContainerInfo {
                    id: C1,
                    state: LifeCycleState::Closed,
                    pipeline: PipelineId(1),
                    sequence_id: 0,
                },
            )]
            .into(),
            ..Snapshot::default()
        });
    }
    let scm1 = f.scm(1, ScmBehavior::Hardened, 4);
    let scm2 = f.scm(2, ScmBehavior::Hardened, 4);
    for scm in [&scm1, &scm2] {
        for dn in 1..=3 {
            let report = ContainerReplicaReport::new(C1, ContainerState::Closed, DatanodeId(dn));
            scm.process_container_report(DatanodeId(dn), &[report])
                .unwrap();
        }
    }
    f.lead(&scm1);
    (scm1, scm2)
}

fn delete_blocks(command: &ScmCommand) -> Vec<u64> {
    match &command.kind {
        CommandKind::DeleteBlocks { transactions } => {
            transactions.iter().map(|t| t.tx_id).collect()
        }
        other => panic!("not a delete-blocks command: {other:?}"),
    }
}

#[test]
fn the_leader_adds_transactions_through_the_log_and_every_scm_applies_them() {
    let f = Fixture::new();
    let (scm1, scm2) = closed_container_cluster(&f);
    let added = scm1
        .add_delete_transactions(&[(C1, vec![10, 11])].into())
        .unwrap();
    assert_eq!(added.len(), 1);
    scm2.catch_up();
    assert_eq!(scm2.deleted_block_log(), scm1.deleted_block_log());
    assert!(
        scm2.add_delete_transactions(&[(C1, vec![12])].into())
            .is_err(),
        "only the leader adds"
    );
}

#[test]
fn every_replica_gets_a_term_stamped_command_and_all_acks_complete_the_transaction() {
    let f = Fixture::new();
    let (scm1, scm2) = closed_container_cluster(&f);
    let [tx_id] = scm1
        .add_delete_transactions(&[(C1, vec![10])].into())
        .unwrap()[..]
    else {
        panic!("one transaction")
    };
    assert_eq!(scm1.run_block_deleting_service(), Ok(3));
    let term = scm1.context().term;
    for dn in 1..=3 {
        let commands = scm1.take_commands(DatanodeId(dn));
        assert_eq!(commands.len(), 1);
        assert_eq!(commands[0].term, term);
        assert_eq!(delete_blocks(&commands[0]), [tx_id]);
        let ack = DeleteAck {
            tx_id,
            container: C1,
            success: true,
        };
        let completed = scm1
            .process_delete_acks(DatanodeId(dn), commands[0].id, &[ack])
            .unwrap();
        assert_eq!(
            completed.is_empty(),
            dn < 3,
            "complete on the last replica's ack"
        );
    }
    scm2.catch_up();
    assert!(scm1.deleted_block_log().is_empty());
    assert!(
        scm2.deleted_block_log().is_empty(),
        "removed through the log"
    );
}

#[test]
fn a_deposed_leaders_queue_still_hands_out_its_old_terms_commands() {
    let f = Fixture::new();
    let (scm1, scm2) = closed_container_cluster(&f);
    scm1.add_delete_transactions(&[(C1, vec![10])].into())
        .unwrap();
    scm1.run_block_deleting_service().unwrap();
    let old_term = scm1.context().term;
    scm1.notify_not_leader();
    f.lead(&scm2);
    let stale = scm1.take_commands(DatanodeId(1));
    assert_eq!(
        stale.len(),
        1,
        "the queue outlives the step-down (HDDS-17268)"
    );
    assert_eq!(stale[0].term, old_term);
    assert_eq!(
        scm2.run_block_deleting_service(),
        Ok(3),
        "the new leader sends again"
    );
    let fresh = scm2.take_commands(DatanodeId(1));
    assert!(fresh[0].term > old_term);
    let ack = DeleteAck {
        tx_id: delete_blocks(&fresh[0])[0],
        container: C1,
        success: true,
    };
    assert_eq!(
        scm1.process_delete_acks(DatanodeId(1), stale[0].id, &[ack]),
        Ok(vec![]),
        "not leader"
    );
}
