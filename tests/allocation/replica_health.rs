//! The replication manager's count of a Ratis container's replicas and its health check
//! (`RatisContainerReplicaCount`, `RatisReplicationCheckHandler.checkHealth`), which gates
//! the deleted-block log (HDDS-16811's trigger) and drives over-replication.

use std::collections::BTreeMap;

use hadoop_ref::hdds::command::{CommandId, CommandKind, ScmCommand};
use hadoop_ref::hdds::container::{ContainerReplicaReport, ContainerState};
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId};
use hadoop_ref::scm::LifeCycleState;
use hadoop_ref::scm::pending_ops::{PendingOp, PendingOpKind};
use hadoop_ref::scm::replica_count::{ContainerHealth, RatisContainerReplicaCount};

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
    RatisContainerReplicaCount::new(state, sequence_id, 3, replicas, pending).health(state)
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

#[test]
fn a_pending_delete_takes_a_replica_off_the_count() {
    let four = replicas(&[Closed, Closed, Closed, Closed], &[5, 5, 5, 5]);
    assert_eq!(
        health(LifeCycleState::Closed, 5, &four, &[]),
        ContainerHealth::OverReplicated
    );
    assert_eq!(
        health(LifeCycleState::Closed, 5, &four, &[delete_of(1)]),
        ContainerHealth::Healthy
    );
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
