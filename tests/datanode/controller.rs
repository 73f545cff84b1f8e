//! The `ContainerController` on real `KeyValueContainer`s: what each SCM command does to
//! a replica, and the container report.

use hadoop_ref::datanode::container::handler::KeyValueHandler;
use hadoop_ref::datanode::container::{
    ContainerBehavior, ContainerConfig, ContainerController, ContainerError, PeerError,
};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId};
use hadoop_ref::sim::peers::PeerNetwork;
use hadoop_ref::sync::Arc;

use super::{handler_over, store_with};

const C1: ContainerId = ContainerId(1);

#[test]
fn a_deleted_replica_is_gone_from_the_set_and_the_volume_and_cannot_be_deleted_twice() {
    let (dn, volume) = handler_over(1, vec![(1, store_with(ContainerState::Closed, &[(1, 2)]))]);
    dn.delete_container(C1, true).unwrap();
    assert!(volume.store(C1).is_none());
    assert_eq!(
        dn.delete_container(C1, true),
        Err(ContainerError::UnknownContainer { container: C1 })
    );
    assert!(dn.container_report().is_empty());
}

#[test]
fn close_moves_open_and_quasi_closed_replicas_to_closed_and_leaves_the_others() {
    let states = [
        (1, ContainerState::Open, ContainerState::Closed),
        (2, ContainerState::Closing, ContainerState::Closed),
        (3, ContainerState::QuasiClosed, ContainerState::Closed),
        (4, ContainerState::Closed, ContainerState::Closed),
        (5, ContainerState::Unhealthy, ContainerState::Unhealthy),
    ];
    let replicas = states
        .iter()
        .map(|&(id, from, _)| (id, store_with(from, &[])))
        .collect();
    let (dn, _volume) = handler_over(1, replicas);
    for (id, from, to) in states {
        dn.close_container(ContainerId(id)).unwrap();
        let state = dn.container(ContainerId(id)).unwrap().state();
        assert_eq!(state, to, "closing a {from:?} replica");
    }
    assert_eq!(
        dn.close_container(ContainerId(9)),
        Err(ContainerError::UnknownContainer {
            container: ContainerId(9)
        })
    );
}

#[test]
fn a_closed_state_is_persisted_and_found_again_after_a_restart() {
    let (dn, _volume) = handler_over(1, vec![(1, store_with(ContainerState::Open, &[(1, 1)]))]);
    dn.close_container(C1).unwrap();
    dn.restart().unwrap();
    let replica = dn.container(C1).unwrap();
    assert_eq!(replica.state(), ContainerState::Closed);
    assert_eq!(replica.report().unwrap().block_count, 1);
}

#[test]
fn the_container_report_lists_every_replica_with_its_blocks_and_checksum() {
    let (dn, _volume) = handler_over(
        1,
        vec![
            (1, store_with(ContainerState::Closed, &[(1, 2), (2, 1)])),
            (2, store_with(ContainerState::Open, &[])),
        ],
    );
    let c1 = dn.container(C1).unwrap();
    c1.update_checksum_from_metadata().unwrap();
    let report = dn.container_report();
    assert_eq!(report.len(), 2);
    assert_eq!(report[0].container, C1);
    assert_eq!(report[0].block_count, 2);
    assert_eq!(
        report[0].used_bytes,
        c1.store()
            .blocks()
            .unwrap()
            .iter()
            .map(|b| b.length())
            .sum::<u64>()
    );
    assert_eq!(report[0].data_checksum, c1.reported_data_checksum());
    assert_ne!(report[0].data_checksum, 0);
    assert_eq!(
        (
            report[1].state,
            report[1].block_count,
            report[1].data_checksum
        ),
        (ContainerState::Open, 0, 0)
    );
}

/// dn1 (empty) and dn2 (c1 CLOSED with two blocks) as peers of one network.
fn peers() -> (PeerNetwork, Arc<KeyValueHandler>, Arc<KeyValueHandler>) {
    let network = PeerNetwork::new();
    let (dn2, _) = handler_over(
        2,
        vec![(1, store_with(ContainerState::Closed, &[(1, 2), (2, 2)]))],
    );
    dn2.container(C1)
        .unwrap()
        .update_checksum_from_metadata()
        .unwrap();
    let dn1 = Arc::new(
        KeyValueHandler::new(
            DatanodeId(1),
            ContainerConfig::new(ContainerBehavior::Fixed),
        )
        .with_peers(network.directory_for(DatanodeId(1))),
    );
    network.register(&dn1);
    network.register(&dn2);
    (network, dn1, dn2)
}

#[test]
fn replication_refuses_a_replica_that_exists_and_a_source_without_one() {
    let (_network, dn1, dn2) = peers();
    assert_eq!(
        dn2.replicate_container(C1, &[DatanodeId(1)]),
        Err(ContainerError::ContainerExists { container: C1 })
    );
    assert_eq!(
        dn1.replicate_container(ContainerId(7), &[DatanodeId(2)]),
        Err(ContainerError::NoReplicationSource {
            container: ContainerId(7),
            sources: vec![DatanodeId(2)],
        })
    );
    assert!(dn1.container(ContainerId(7)).is_err());
    dn1.replicate_container(C1, &[DatanodeId(2)]).unwrap();
    let (ours, theirs) = (dn1.container_report(), dn2.container_report());
    assert_eq!(ours[0].block_count, 2);
    assert_eq!(ours[0].data_checksum, theirs[0].data_checksum);
}

#[test]
fn a_cut_link_makes_the_peer_unreachable_until_it_is_healed() {
    let (network, dn1, _dn2) = peers();
    network.cut(DatanodeId(2), DatanodeId(1));
    assert!(matches!(
        dn1.replicate_container(C1, &[DatanodeId(2)]),
        Err(ContainerError::Peer(PeerError::Unreachable {
            peer: DatanodeId(2),
            ..
        }))
    ));
    network.heal(DatanodeId(1));
    dn1.replicate_container(C1, &[DatanodeId(2)]).unwrap();
}

#[test]
fn unknown_peers_are_skipped_when_another_one_answers() {
    let (_network, dn1, _dn2) = peers();
    dn1.replicate_container(C1, &[DatanodeId(8), DatanodeId(2), DatanodeId(9)])
        .unwrap();
    let resolved = dn1.resolve_peers(&[DatanodeId(8), DatanodeId(2)]).unwrap();
    assert_eq!(resolved.len(), 1);
    assert!(dn1.resolve_peers(&[]).unwrap().is_empty());
}
