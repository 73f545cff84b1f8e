//! The `ContainerController` on real `KeyValueContainer`s: what each SCM command does to
//! a replica, and the container report.

use hadoop_ref::datanode::container::volume::MemoryVolume;
use hadoop_ref::datanode::container::{ContainerController, ContainerError, PeerError};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, PipelineId};
use hadoop_ref::sim::peers::PeerNetwork;

use crate::test_util::datanode::{handler_in_network, handler_over, store_with};

const C1: ContainerId = ContainerId(1);

#[test]
fn a_deleted_replica_is_gone_from_the_set_and_the_volume_and_cannot_be_deleted_twice() {
    let (dn, volume) = handler_over(1, vec![(1, store_with(ContainerState::Closed, &[(1, 2)]))]);
    let replica = dn.container(C1).unwrap();
    dn.delete_container(C1, true).unwrap();
    assert!(volume.store(C1).is_none());
    assert_eq!(
        dn.delete_container(C1, true),
        Err(ContainerError::UnknownContainer { container: C1 })
    );
    assert!(dn.container_report().is_empty());
    // A handle taken before the delete sees a DELETED replica that nothing moves again.
    assert_eq!(replica.state(), ContainerState::Deleted);
    assert!(matches!(
        replica.mark_unhealthy(),
        Err(ContainerError::InvalidTransition { .. })
    ));
}

#[test]
fn close_follows_the_close_container_command_handler() {
    // (replica, state, after a close, after a forced close)
    let states = [
        (
            1,
            ContainerState::Open,
            ContainerState::Closed,
            ContainerState::Closed,
        ),
        (
            2,
            ContainerState::Closing,
            ContainerState::Closed,
            ContainerState::Closed,
        ),
        (
            3,
            ContainerState::QuasiClosed,
            ContainerState::QuasiClosed,
            ContainerState::Closed,
        ),
        (
            4,
            ContainerState::Closed,
            ContainerState::Closed,
            ContainerState::Closed,
        ),
        (
            5,
            ContainerState::Unhealthy,
            ContainerState::Unhealthy,
            ContainerState::Unhealthy,
        ),
    ];
    let replicas = states
        .iter()
        .map(|&(id, from, _, _)| (id, store_with(from, &[])))
        .collect();
    let (dn, _volume) = handler_over(1, replicas);
    for (id, from, closed, forced) in states {
        let id = ContainerId(id);
        dn.close_container(id, PipelineId(1), false).unwrap();
        assert_eq!(
            dn.container(id).unwrap().state(),
            closed,
            "closing {from:?}"
        );
        dn.close_container(id, PipelineId(1), true).unwrap();
        assert_eq!(
            dn.container(id).unwrap().state(),
            forced,
            "force-closing {from:?}"
        );
    }
    assert_eq!(
        dn.close_container(ContainerId(9), PipelineId(1), false),
        Err(ContainerError::UnknownContainer {
            container: ContainerId(9)
        })
    );
}

#[test]
fn a_closed_state_is_persisted_and_found_again_after_a_restart() {
    let (dn, _volume) = handler_over(1, vec![(1, store_with(ContainerState::Open, &[(1, 1)]))]);
    dn.close_container(C1, PipelineId(1), false).unwrap();
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
    let used: u64 = c1
        .store()
        .blocks()
        .unwrap()
        .iter()
        .map(|b| b.length())
        .sum();
    assert_eq!(
        (
            report[0].container,
            report[0].block_count,
            report[0].used_bytes
        ),
        (C1, 2, used)
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

#[test]
fn a_reconcile_command_fails_when_no_peer_answers_and_repairs_once_one_does() {
    let network = PeerNetwork::new();
    let (peer_volume, own_volume) = (MemoryVolume::new(), MemoryVolume::new());
    peer_volume
        .insert(C1, store_with(ContainerState::Closed, &[(1, 2), (2, 2)]))
        .unwrap();
    own_volume
        .insert(C1, store_with(ContainerState::Closed, &[(1, 2)]))
        .unwrap();
    let dn1 = handler_in_network(1, &own_volume, &network);
    let _dn2 = handler_in_network(2, &peer_volume, &network);
    network.cut(DatanodeId(1), DatanodeId(2));
    assert!(matches!(
        dn1.reconcile_container(C1, &[DatanodeId(2)]),
        Err(ContainerError::Peer(PeerError::Unreachable {
            peer: DatanodeId(2),
            ..
        }))
    ));
    network.heal(DatanodeId(1));
    dn1.reconcile_container(C1, &[DatanodeId(2)]).unwrap();
    assert_eq!(dn1.container(C1).unwrap().report().unwrap().block_count, 2);
}

#[test]
fn commands_naming_peers_fail_without_a_peer_directory() {
    let (dn, _volume) = handler_over(1, vec![(1, store_with(ContainerState::Closed, &[]))]);
    assert_eq!(
        dn.reconcile_container(C1, &[DatanodeId(2)]),
        Err(ContainerError::NoPeerDirectory {
            peer: DatanodeId(2)
        })
    );
    assert_eq!(
        dn.replicate_container(ContainerId(2), &[DatanodeId(2)]),
        Err(ContainerError::NoPeerDirectory {
            peer: DatanodeId(2)
        })
    );
}
