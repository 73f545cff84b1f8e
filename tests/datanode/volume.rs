//! Where a datanode keeps its replicas: the memory and disk volumes.

use hadoop_ref::datanode::container::store::{BlockData, MemoryStore, MetadataBatch};
use hadoop_ref::datanode::container::volume::{ContainerVolume, DiskVolume, MemoryVolume};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::ContainerId;

const C1: ContainerId = ContainerId(1);

#[test]
fn a_memory_volume_refuses_a_second_replica_of_a_container() {
    let volume = MemoryVolume::new();
    volume
        .insert(C1, MemoryStore::new(ContainerState::Closed))
        .unwrap();
    assert!(
        volume
            .insert(C1, MemoryStore::new(ContainerState::Open))
            .is_err()
    );
    assert!(volume.create(C1, ContainerState::Open).is_err());
    volume.remove(C1).unwrap();
    volume.remove(C1).unwrap();
    assert!(volume.containers().unwrap().is_empty());
}

#[test]
fn a_disk_volume_finds_its_replicas_again_and_removes_their_directories() {
    let dir = tempfile::tempdir().unwrap();
    let volume = DiskVolume::open(dir.path()).unwrap();
    let store = volume
        .create(ContainerId(2), ContainerState::Closed)
        .unwrap();
    store
        .commit(MetadataBatch {
            put_blocks: vec![BlockData::new(7, [])],
            ..MetadataBatch::default()
        })
        .unwrap();
    volume.create(C1, ContainerState::Open).unwrap();
    assert!(volume.create(C1, ContainerState::Open).is_err());
    // Something that is not a replica's directory is not one of ours.
    std::fs::write(dir.path().join("notes.txt"), b"x").unwrap();

    let reopened = DiskVolume::open(dir.path()).unwrap();
    let found = reopened.containers().unwrap();
    let ids: Vec<_> = found.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, vec![C1, ContainerId(2)]);
    let summary = found[1].1.summary().unwrap();
    assert_eq!(
        (summary.state, summary.block_count),
        (ContainerState::Closed, 1)
    );

    reopened.remove(ContainerId(2)).unwrap();
    assert!(!reopened.container_dir(ContainerId(2)).exists());
    reopened.remove(ContainerId(2)).unwrap();
    assert_eq!(reopened.containers().unwrap().len(), 1);
}
