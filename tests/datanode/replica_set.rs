//! Whole replicas: an import is staged and published whole, a replica that does not load is
//! left out of a (re)start, and a restart that cannot list the volume changes nothing.

use hadoop_ref::datanode::container::volume::{ContainerVolume, DiskVolume, MemoryVolume};
use hadoop_ref::datanode::container::{ContainerController, ContainerError};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId};
use hadoop_ref::sim::peers::{PeerFailure, PeerNetwork, ScriptedPeer};
use hadoop_ref::sync::{Arc, Mutex};

use crate::test_util::datanode::{handler_in_network, store_with};

const C1: ContainerId = ContainerId(1);

/// dn1 with an empty volume and dn2 holding c1 in `state` with two blocks, as peers.
fn source_in(
    state: ContainerState,
) -> (
    PeerNetwork,
    MemoryVolume,
    Arc<hadoop_ref::datanode::container::handler::KeyValueHandler>,
) {
    let network = PeerNetwork::new();
    let source = MemoryVolume::new();
    source
        .insert(C1, store_with(state, &[(1, 2), (2, 2)]))
        .unwrap();
    handler_in_network(2, &source, &network);
    let volume = MemoryVolume::new();
    let dn1 = handler_in_network(1, &volume, &network);
    (network, volume, dn1)
}

#[test]
fn an_imported_replica_keeps_the_source_state_and_is_not_marked_empty() {
    let (_network, volume, dn1) = source_in(ContainerState::QuasiClosed);
    dn1.replicate_container(C1, &[DatanodeId(2)]).unwrap();
    let replica = dn1.container(C1).unwrap();
    assert_eq!(replica.state(), ContainerState::QuasiClosed);
    assert!(!replica.is_empty());
    assert_eq!(replica.report().unwrap().block_count, 2);
    assert!(volume.store(C1).is_some());
}

#[test]
fn a_replica_being_imported_is_invisible_until_it_is_complete() {
    let (network, volume, dn1) = source_in(ContainerState::Closed);
    let seen = Arc::new(Mutex::new(None));
    let source = network
        .directory_for(DatanodeId(1))
        .peer(DatanodeId(2))
        .unwrap();
    // While the import pulls its first chunk, a delete and a report look for the replica.
    let hooked = {
        let (dn1, seen) = (Arc::clone(&dn1), Arc::clone(&seen));
        ScriptedPeer::hooked(source, 0, PeerFailure::None, move || {
            *seen.lock() = Some((
                dn1.delete_container(C1, false),
                dn1.container_report().len(),
            ));
        })
    };
    dn1.import_from(C1, hooked).unwrap();
    assert_eq!(
        seen.lock().take(),
        Some((Err(ContainerError::UnknownContainer { container: C1 }), 0))
    );
    assert_eq!(dn1.container(C1).unwrap().report().unwrap().block_count, 2);
    assert_eq!(volume.containers().unwrap(), vec![C1]);
}

#[test]
fn a_failed_import_leaves_nothing_behind() {
    let (network, volume, dn1) = source_in(ContainerState::Closed);
    let source = network
        .directory_for(DatanodeId(1))
        .peer(DatanodeId(2))
        .unwrap();
    let failing = ScriptedPeer::failing(source, 1, PeerFailure::FromThenOn);
    assert!(matches!(
        dn1.import_from(C1, failing),
        Err(ContainerError::Peer(_))
    ));
    assert!(dn1.container(C1).is_err());
    assert!(volume.containers().unwrap().is_empty());
    // Nothing is staged either: a new import of the container starts afresh.
    dn1.replicate_container(C1, &[DatanodeId(2)]).unwrap();
}

#[test]
fn a_replica_that_does_not_load_is_left_out_of_the_start_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let volume = DiskVolume::open(dir.path()).unwrap();
    volume.stage(C1, ContainerState::Closed).unwrap();
    volume.publish(C1).unwrap();
    // A directory named like a replica, without a database: not a committed replica.
    std::fs::create_dir(dir.path().join("2")).unwrap();
    let dn = hadoop_ref::datanode::container::handler::KeyValueHandler::open(
        DatanodeId(1),
        Default::default(),
        volume.shared(),
    )
    .unwrap();
    assert_eq!(dn.container_ids(), vec![C1]);
    let failures = dn.load_failures();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].0, ContainerId(2));
}

#[test]
fn a_restart_that_cannot_list_the_volume_keeps_the_replicas() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("volume");
    let volume = DiskVolume::open(&root).unwrap();
    volume.stage(C1, ContainerState::Closed).unwrap();
    volume.publish(C1).unwrap();
    let dn = hadoop_ref::datanode::container::handler::KeyValueHandler::open(
        DatanodeId(1),
        Default::default(),
        volume.shared(),
    )
    .unwrap();
    std::fs::remove_dir_all(&root).unwrap();
    assert!(matches!(dn.restart(), Err(ContainerError::Volume(_))));
    assert_eq!(dn.container_ids(), vec![C1]);
}
