//! The replication manager's count of a Ratis container's replicas and its health check
//! (`RatisContainerReplicaCount`, `RatisReplicationCheckHandler.checkHealth`), which gates
//! the deleted-block log (HDDS-16811's trigger) and drives over-replication.

use std::collections::BTreeMap;

use hadoop_ref::hdds::command::{CommandId, CommandKind, ScmCommand};
use hadoop_ref::hdds::container::{ContainerReplicaReport, ContainerState};
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId};
use hadoop_ref::scm::LifeCycleState;
use hadoop_ref::scm::pending_ops::{PendingOp, PendingOpKind};
use hadoop_ref::scm::replica_count::{ContainerHealth, HealthResult, check_health};

const C1: ContainerId = ContainerId(1);

/// Replicas on datanodes 1.. in `states`, with the sequence ids `sequence_ids`.
fn replicas(
    states: &[ContainerState],
    sequence_ids: &[u64],
) -> BTreeMap<DatanodeId, ContainerReplicaReport> {
    states
        .iter()
        .zip(sequence_ids)
        .enumerate()
        .map(|(i, (&state, &sequence_id))| {
            let dn = DatanodeId(i as u64 + 1);
            let mut report = ContainerReplicaReport::new(C1, state, dn);
            report.sequence_id = sequence_id;
            (dn, report)
        })
        .collect()
}

fn health(
    state: LifeCycleState,
    sequence_id: u64,
    replicas: &BTreeMap<DatanodeId, ContainerReplicaReport>,
    pending: &[PendingOp],
) -> ContainerHealth {
    result(state, sequence_id, replicas, pending).health
}

fn result(
    state: LifeCycleState,
    sequence_id: u64,
    replicas: &BTreeMap<DatanodeId, ContainerReplicaReport>,
    pending: &[PendingOp],
) -> HealthResult {
    check_health(state, sequence_id, 3, replicas, pending)
}

/// `replicas`, with each replica's origin replaced by the datanode of `origins`.
fn with_origins(
    mut replicas: BTreeMap<DatanodeId, ContainerReplicaReport>,
    origins: &[u64],
) -> BTreeMap<DatanodeId, ContainerReplicaReport> {
    for (report, &origin) in replicas.values_mut().zip(origins) {
        report.origin = DatanodeId(origin);
    }
    replicas
}

fn delete_of(dn: u64) -> PendingOp {
    let kind = CommandKind::DeleteContainer {
        container: C1,
        force: true,
    };
    PendingOp {
        kind: PendingOpKind::Delete,
        target: DatanodeId(dn),
        command: ScmCommand::new(CommandId(1), 1, kind),
        deadline_ms: 1,
    }
}

use ContainerState::{Closed, Closing, Open, QuasiClosed, Unhealthy};

#[test]
fn three_closed_replicas_of_a_closed_container_are_healthy() {
    let r = replicas(&[Closed, Closed, Closed], &[5, 5, 5]);
    assert_eq!(
        health(LifeCycleState::Closed, 5, &r, &[]),
        ContainerHealth::Healthy
    );
}

/// HDDS-16811's trigger: the sequence ids of QUASI_CLOSED replicas do not matter while
/// the container is QUASI_CLOSED.
#[test]
fn all_quasi_closed_replicas_are_healthy_whatever_their_sequence_ids() {
    let r = replicas(&[QuasiClosed, QuasiClosed, QuasiClosed], &[5, 5, 4]);
    assert_eq!(
        health(LifeCycleState::QuasiClosed, 5, &r, &[]),
        ContainerHealth::Healthy
    );
}

/// Once the container is CLOSED, a QUASI_CLOSED replica with another sequence id counts
/// as unhealthy: two healthy replicas of three are under-replicated.
#[test]
fn a_lagging_quasi_closed_replica_of_a_closed_container_counts_as_unhealthy() {
    let r = replicas(&[Closed, Closed, QuasiClosed], &[5, 5, 4]);
    assert_eq!(
        health(LifeCycleState::Closed, 5, &r, &[]),
        ContainerHealth::UnderReplicated
    );
    let same = replicas(&[Closed, Closed, QuasiClosed], &[5, 5, 5]);
    assert_eq!(
        health(LifeCycleState::Closed, 5, &same, &[]),
        ContainerHealth::Healthy
    );
}

#[test]
fn an_open_replica_of_a_closed_container_still_counts_as_healthy() {
    let r = replicas(&[Closed, Open, Closing], &[5, 5, 5]);
    assert_eq!(
        health(LifeCycleState::Closed, 5, &r, &[]),
        ContainerHealth::Healthy
    );
}

#[test]
fn an_unhealthy_fourth_replica_makes_a_closed_container_over_replicated() {
    let r = replicas(&[Closed, Closed, Closed, Unhealthy], &[5, 5, 5, 5]);
    assert_eq!(
        health(LifeCycleState::Closed, 5, &r, &[]),
        ContainerHealth::OverReplicated
    );
    let two = replicas(&[Closed, Closed, Unhealthy], &[5, 5, 5]);
    assert_eq!(
        health(LifeCycleState::Closed, 5, &two, &[]),
        ContainerHealth::UnderReplicated
    );
}

/// `checkHealth` asks `isOverReplicated(false)`: a pending delete does not make an
/// over-replicated container healthy (its transactions wait until the replica is gone),
/// it only tells the replication manager not to queue it again.
#[test]
fn a_pending_delete_takes_a_replica_off_the_count() {
    let four = replicas(&[Closed, Closed, Closed, Closed], &[5, 5, 5, 5]);
    let over = result(LifeCycleState::Closed, 5, &four, &[]);
    assert_eq!(over.health, ContainerHealth::OverReplicated);
    assert!(!over.replicated_ok_after_pending && over.safely_over_replicated);
    let deleting = result(LifeCycleState::Closed, 5, &four, &[delete_of(1)]);
    assert_eq!(deleting.health, ContainerHealth::OverReplicated);
    assert!(deleting.replicated_ok_after_pending);
    let three = replicas(&[Closed, Closed, Closed], &[5, 5, 5]);
    assert_eq!(
        health(LifeCycleState::Closed, 5, &three, &[delete_of(1)]),
        ContainerHealth::UnderReplicated
    );
}

#[test]
fn no_replica_is_under_replicated() {
    assert_eq!(
        health(LifeCycleState::Closed, 5, &BTreeMap::new(), &[]),
        ContainerHealth::UnderReplicated
    );
}

/// HDDS-16811's trigger on a stuck container: a QUASI_CLOSED container over-replicated only
/// by UNHEALTHY replicas, each the last of its origin, is HEALTHY (its transactions go to
/// every replica); once an UNHEALTHY replica shares its origin with another replica it may
/// be deleted, and the container is over-replicated.
#[test]
fn a_quasi_closed_container_over_only_by_unique_unhealthy_replicas_is_healthy() {
    let r = replicas(
        &[QuasiClosed, QuasiClosed, QuasiClosed, Unhealthy],
        &[5, 5, 5, 4],
    );
    assert_eq!(
        health(LifeCycleState::QuasiClosed, 5, &r, &[]),
        ContainerHealth::Healthy
    );
    let shared = with_origins(r, &[1, 2, 3, 1]);
    assert_eq!(
        health(LifeCycleState::QuasiClosed, 5, &shared, &[]),
        ContainerHealth::OverReplicated
    );
}

/// `hasMismatchedReplicas` and `isSafelyOverReplicated`, which keep an over-replicated
/// container out of the queue until its replicas are closed.
#[test]
fn over_replication_with_a_mismatched_replica_is_not_safe_to_fix() {
    let r = replicas(&[Closed, Closed, Closed, Closing], &[5, 5, 5, 5]);
    let over = result(LifeCycleState::Closed, 5, &r, &[]);
    assert_eq!(over.health, ContainerHealth::OverReplicated);
    assert!(over.has_mismatched_replicas);
    assert!(over.safely_over_replicated, "three CLOSED replicas match");
    let r = replicas(&[Closed, Closed, Closing, Closing], &[5, 5, 5, 5]);
    let over = result(LifeCycleState::Closed, 5, &r, &[]);
    assert!(!over.safely_over_replicated, "two CLOSED replicas of three");
}
