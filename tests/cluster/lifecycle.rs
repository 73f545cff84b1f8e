//! The container lifecycle the SCM drives from replica reports, and the replication
//! manager's handlers, on a stepped cluster: CLOSING and QUASI_CLOSED, the close of the
//! replicas with the best sequence id, the health gate of the deleted-block log
//! (HDDS-16811's trigger), the DELETING branch's force delete, over-replication, the
//! manager's start delay, and the eligibility of a reconcile.

use hadoop_ref::clock::Clock;
use hadoop_ref::hdds::command::CommandKind;
use hadoop_ref::hdds::container::{ContainerReplicaReport, ContainerState};
use hadoop_ref::hdds::ids::{DatanodeId, PipelineId};
use hadoop_ref::scm::datanode_details::DatanodeDetails;
use hadoop_ref::scm::{LifeCycleState, ReplicationManagerConfig, ScmError};
use hadoop_ref::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};

/// One SCM and three datanodes with the replication manager as `config` says.
fn cluster_with(config: ReplicationManagerConfig) -> MiniOzoneCluster {
    MiniOzoneCluster::builder()
        .scms(1)
        .replication_manager(config)
        .build()
        .unwrap()
}

fn state(cluster: &MiniOzoneCluster, key: &Key) -> LifeCycleState {
    cluster
        .leader()
        .unwrap()
        .container(key.container)
        .unwrap()
        .state
}

fn replica_state(cluster: &MiniOzoneCluster, dn: usize, key: &Key) -> ContainerState {
    cluster
        .datanode(dn)
        .unwrap()
        .replicas()
        .container(key.container)
        .unwrap()
        .state()
}

fn pipeline(cluster: &MiniOzoneCluster, key: &Key) -> PipelineId {
    cluster
        .leader()
        .unwrap()
        .container(key.container)
        .unwrap()
        .pipeline
}

/// Two keys in one container, the second lagging on datanode 3; every datanode out of
/// the container's pipeline, the container closed and settled.
fn quasi_closed(config: ReplicationManagerConfig) -> (MiniOzoneCluster, Key, Key) {
    let cluster = cluster_with(config);
    let keys = cluster.open_keys(2, 2).unwrap();
    cluster.write_blocks(&keys[0]).unwrap();
    let lagging = cluster.datanode(2).unwrap().id();
    cluster.write_blocks_lagging(&keys[1], lagging).unwrap();
    let pipeline = pipeline(&cluster, &keys[0]);
    for dn in 0..3 {
        cluster.leave_pipeline(dn, pipeline).unwrap();
    }
    cluster.close_key(&keys[0]).unwrap();
    (cluster, keys[0].clone(), keys[1].clone())
}

#[test]
fn a_closing_container_waits_for_its_replicas_reports() {
    let cluster = cluster_with(ReplicationManagerConfig::immediate());
    let key = cluster.open_key(1).unwrap();
    cluster.write_blocks(&key).unwrap();
    cluster.close_key(&key).unwrap();
    assert_eq!(state(&cluster, &key), LifeCycleState::Closing);
    cluster.run_until_quiescent(10).unwrap();
    assert_eq!(state(&cluster, &key), LifeCycleState::Closed);
    for dn in 0..3 {
        assert_eq!(replica_state(&cluster, dn, &key), ContainerState::Closed);
    }
}

#[test]
fn replicas_whose_pipeline_is_gone_quasi_close_and_so_does_their_container() {
    let (cluster, kept, _) = quasi_closed(ReplicationManagerConfig::default());
    cluster.run_until_quiescent(10).unwrap();
    assert_eq!(state(&cluster, &kept), LifeCycleState::QuasiClosed);
    for dn in 0..3 {
        assert_eq!(
            replica_state(&cluster, dn, &kept),
            ContainerState::QuasiClosed
        );
    }
}

/// HDDS-16811's trigger: all-QUASI_CLOSED replicas are HEALTHY whatever their sequence
/// ids, so the transaction reaches the lagging replica too.
#[test]
fn a_quasi_closed_containers_transaction_goes_to_its_lagging_replica_too() {
    let (cluster, _, doomed) = quasi_closed(ReplicationManagerConfig::default());
    cluster.run_until_quiescent(10).unwrap();
    let reports = cluster.leader().unwrap().replica_reports(doomed.container);
    let lagging = reports[&DatanodeId(3)].sequence_id;
    assert!(lagging < reports[&DatanodeId(1)].sequence_id, "{reports:?}");
    cluster.delete_key(&doomed).unwrap();
    cluster.run_until_quiescent(20).unwrap();
    for dn in 0..3 {
        assert_eq!(
            cluster.live_blocks_of(dn, &doomed).unwrap(),
            0,
            "datanode {dn}"
        );
    }
}

/// Once replicas of every origin are seen, the replication manager force-closes the ones
/// with the best sequence id; the lagging one, QUASI_CLOSED with a lower one, then counts
/// as unhealthy and the transactions are held back.
#[test]
fn the_best_replicas_close_and_the_lagging_one_holds_deletions_back() {
    let (cluster, kept, doomed) = quasi_closed(ReplicationManagerConfig::immediate());
    cluster.run_until_quiescent(20).unwrap();
    assert_eq!(state(&cluster, &kept), LifeCycleState::Closed);
    assert_eq!(replica_state(&cluster, 0, &kept), ContainerState::Closed);
    assert_eq!(replica_state(&cluster, 1, &kept), ContainerState::Closed);
    assert_eq!(
        replica_state(&cluster, 2, &kept),
        ContainerState::QuasiClosed
    );
    cluster.delete_key(&doomed).unwrap();
    for _ in 0..5 {
        cluster.tick().unwrap();
    }
    assert_eq!(cluster.leader().unwrap().deleted_block_log().len(), 1);
    for dn in 0..3 {
        assert!(
            cluster.live_blocks_of(dn, &doomed).unwrap() > 0,
            "datanode {dn}"
        );
    }
}

#[test]
fn the_replication_manager_waits_its_start_delay_after_becoming_the_serving_leader() {
    let config = ReplicationManagerConfig {
        interval_ms: 0,
        wait_after_safe_mode_exit_ms: 10_000,
        ..ReplicationManagerConfig::default()
    };
    let (cluster, kept, _) = quasi_closed(config);
    cluster.run_until_quiescent(5).unwrap();
    assert_eq!(state(&cluster, &kept), LifeCycleState::QuasiClosed);
    for _ in 0..12 {
        cluster.tick().unwrap();
    }
    assert_eq!(state(&cluster, &kept), LifeCycleState::Closed);
}

/// `sendDatanodeCommand`: the SCM deadline is now + 12 min, the datanode's 6 min less.
#[test]
fn a_replication_manager_command_carries_a_datanode_deadline() {
    let (cluster, kept, _) = quasi_closed(ReplicationManagerConfig::immediate());
    // The close event's own commands carry none; the first tick runs them.
    let leader = cluster.leader().unwrap();
    assert!(
        leader
            .queued_commands(DatanodeId(1))
            .iter()
            .all(|c| c.deadline_ms == 0)
    );
    cluster.tick().unwrap();
    // The replicas reported OPEN before they ran the close: the container is still
    // CLOSING, and `ClosingContainerHandler` tells them again.
    cluster.tick_scms().unwrap();
    assert_eq!(state(&cluster, &kept), LifeCycleState::Closing);
    let now_ms = cluster.clock().now_ms();
    let queued = leader.queued_commands(DatanodeId(1));
    assert!(
        queued
            .iter()
            .any(|c| matches!(c.kind, CommandKind::CloseContainer { .. })
                && c.deadline_ms == now_ms + 360_000),
        "{queued:?}"
    );
}

#[test]
fn a_reconcile_is_refused_for_a_container_not_closed() {
    let cluster = cluster_with(ReplicationManagerConfig::immediate());
    let key = cluster.open_key(1).unwrap();
    cluster.write_blocks(&key).unwrap();
    assert!(matches!(
        cluster.reconcile(key.container),
        Err(ClusterError::Scm(
            ScmError::NotEligibleForReconciliation { .. }
        ))
    ));
}

/// A replica that reports blocks while its container is DELETING is force-deleted
/// (HDDS-14416): here one that got a block back (a client write stands in for a repair's
/// copy) after it reported empty, so its datanode refuses the non-forced delete.
#[test]
fn a_replica_with_blocks_of_a_deleting_container_is_force_deleted() {
    let cluster = cluster_with(ReplicationManagerConfig::immediate());
    let key = cluster.write_key(1).unwrap();
    cluster.run_until_quiescent(10).unwrap();
    cluster.delete_key(&key).unwrap();
    // Stepped by hand to stop right after the replication manager moved the container
    // to DELETING, before any datanode took its delete.
    for _ in 0..30 {
        cluster.tick_scms().unwrap();
        if state(&cluster, &key) == LifeCycleState::Deleting {
            break;
        }
        for dn in 0..3 {
            cluster.tick_datanode(dn).unwrap();
        }
        cluster.clock().advance_ms(1_000);
    }
    assert_eq!(state(&cluster, &key), LifeCycleState::Deleting);
    let dn3 = cluster.datanode(2).unwrap().id();
    cluster.write_replica(&key, dn3, &[999]).unwrap();
    cluster.tick().unwrap();
    let leader = cluster.leader().unwrap();
    let forced = leader.queued_commands(dn3).iter().any(|c| {
        c.kind
            == CommandKind::DeleteContainer {
                container: key.container,
                force: true,
            }
    });
    assert!(forced, "{:?}", leader.queued_commands(dn3));
    cluster.run_until_quiescent(30).unwrap();
    assert_eq!(state(&cluster, &key), LifeCycleState::Deleted);
    for dn in 0..3 {
        let replicas = cluster.datanode(dn).unwrap().replicas();
        assert!(replicas.container(key.container).is_err(), "datanode {dn}");
    }
}

/// Postmortem: the random cluster (Hardened, shuttle) lost a kept key's block: the
/// settle judged the cluster quiescent in the tick where the last report made a container
/// CLOSED, before the replication manager's next pass told the two replicas still OPEN
/// (their close commands dropped as stale) to close, so the final repair found no closed
/// peer. A settled cluster now has had one more tick that changed nothing.
#[test]
fn a_settled_cluster_has_let_the_replication_manager_close_every_replica() {
    let cluster = MiniOzoneCluster::builder().scms(2).build().unwrap();
    let key = cluster.open_key(1).unwrap();
    cluster.write_blocks(&key).unwrap();
    cluster.close_key(&key).unwrap();
    // Datanode 1 closes under SCM 1; datanodes 2 and 3 hear SCM 2's term with SCM 1's
    // close and drop it as stale; datanode 1's CLOSED report reaches SCM 2 last, and no
    // replication manager pass has run since.
    cluster.tick_datanode(0).unwrap();
    cluster.transfer_leadership(1).unwrap();
    for dn in [1, 2, 0] {
        cluster.tick_datanode(dn).unwrap();
    }
    assert_eq!(state(&cluster, &key), LifeCycleState::Closed);
    assert_eq!(replica_state(&cluster, 1, &key), ContainerState::Open);
    cluster.run_until_quiescent(20).unwrap();
    for dn in 0..3 {
        assert_eq!(
            replica_state(&cluster, dn, &key),
            ContainerState::Closed,
            "datanode {dn}"
        );
    }
}

/// On a follower a replica that would bring its DELETING container back is not recorded:
/// upstream's `transitionDeletingOrDeletedToTargetState` fails SCM_NOT_LEADER there and
/// ends the replica's processing (it is outside HDDS-14989's leader-only wrapper). A
/// replica the leader would force-delete is recorded, as the follower skips the delete.
#[test]
fn a_follower_does_not_record_a_replica_that_would_bring_its_container_back() {
    let cluster = MiniOzoneCluster::builder().scms(2).build().unwrap();
    let key = cluster.write_key(1).unwrap();
    cluster.run_until_quiescent(10).unwrap();
    cluster.delete_key(&key).unwrap();
    for _ in 0..30 {
        if state(&cluster, &key) == LifeCycleState::Deleting {
            break;
        }
        cluster.tick().unwrap();
    }
    assert_eq!(state(&cluster, &key), LifeCycleState::Deleting);
    let follower = cluster.scm(1).unwrap();
    follower.catch_up();
    assert_eq!(
        follower.container(key.container).unwrap().state,
        LifeCycleState::Deleting
    );
    let dn = DatanodeId(9);
    follower.register_datanode(&DatanodeDetails::new(dn), Vec::new());
    let mut back = ContainerReplicaReport::new(key.container, ContainerState::Unhealthy, dn);
    back.block_count = 1;
    follower.process_container_report(dn, &[back]).unwrap();
    assert!(!follower.replica_reports(key.container).contains_key(&dn));
    let closed = ContainerReplicaReport {
        state: ContainerState::Closed,
        ..back
    };
    follower.process_container_report(dn, &[closed]).unwrap();
    assert!(follower.replica_reports(key.container).contains_key(&dn));
}
