//! Where a datanode keeps its replicas: the memory and disk volumes, their staged imports
//! and their durable removals.

use hadoop_ref::datanode::container::store::{BlockData, MemoryStore, MetadataBatch};
use hadoop_ref::datanode::container::volume::{
    ContainerVolume, DiskVolume, MemoryVolume, VolumeError,
};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::ContainerId;

const C1: ContainerId = ContainerId(1);

#[test]
fn a_memory_volume_refuses_a_second_replica_of_a_container() {
    let volume = MemoryVolume::new();
    volume
        .insert(C1, MemoryStore::new(ContainerState::Closed))
        .unwrap();
    let exists = Err(VolumeError::Exists { container: C1 });
    assert_eq!(
        volume.insert(C1, MemoryStore::new(ContainerState::Open)),
        exists
    );
    assert_eq!(volume.stage(C1, ContainerState::Open).map(|_| ()), exists);
    volume.remove(C1).unwrap();
    volume.remove(C1).unwrap();
    assert!(volume.containers().unwrap().is_empty());
}

#[test]
fn a_staged_replica_is_listed_only_once_published() {
    let (_dir, disk) = disk_volume();
    for volume in [MemoryVolume::new().shared(), disk.shared()] {
        volume.stage(C1, ContainerState::Closed).unwrap();
        assert!(volume.containers().unwrap().is_empty(), "{volume:?}");
        assert_eq!(
            volume.stage(C1, ContainerState::Closed).map(|_| ()),
            Err(VolumeError::Exists { container: C1 })
        );
        volume.publish(C1).unwrap();
        assert_eq!(volume.containers().unwrap(), vec![C1]);
        assert_eq!(
            volume.publish(C1).map(|_| ()),
            Err(VolumeError::Exists { container: C1 })
        );
        volume
            .stage(ContainerId(2), ContainerState::Closed)
            .unwrap();
        volume.discard(ContainerId(2)).unwrap();
        assert_eq!(
            volume.publish(ContainerId(2)).map(|_| ()),
            Err(VolumeError::NotStaged {
                container: ContainerId(2)
            })
        );
    }
}

fn disk_volume() -> (tempfile::TempDir, DiskVolume) {
    let dir = tempfile::tempdir().unwrap();
    let volume = DiskVolume::open(dir.path()).unwrap();
    // Keep the directory alive with the volume.
    (dir, volume)
}

#[test]
fn a_disk_volume_finds_its_replicas_again_and_removes_their_directories() {
    let (dir, volume) = disk_volume();
    let store = volume
        .stage(ContainerId(2), ContainerState::Closed)
        .unwrap();
    store
        .commit(MetadataBatch {
            put_blocks: vec![BlockData::new(7, [])],
            ..MetadataBatch::default()
        })
        .unwrap();
    volume.publish(ContainerId(2)).unwrap();
    volume.stage(C1, ContainerState::Open).unwrap();
    volume.publish(C1).unwrap();
    // Neither a stray file nor a file named like a replica is one of ours.
    std::fs::write(dir.path().join("notes.txt"), b"x").unwrap();
    std::fs::write(dir.path().join("17"), b"x").unwrap();

    // A datanode process owns a volume: the staged store goes with the old one.
    drop(store);
    let reopened = DiskVolume::open(dir.path()).unwrap();
    assert_eq!(reopened.containers().unwrap(), vec![C1, ContainerId(2)]);
    let summary = reopened.open(ContainerId(2)).unwrap().summary().unwrap();
    assert_eq!(
        (summary.state, summary.block_count),
        (ContainerState::Closed, 1)
    );
    assert_eq!(
        reopened.adopt(
            ContainerId(3),
            MemoryStore::new(ContainerState::Open).shared()
        ),
        Err(VolumeError::CannotAdopt {
            container: ContainerId(3)
        })
    );

    reopened.remove(ContainerId(2)).unwrap();
    assert!(!reopened.container_dir(ContainerId(2)).exists());
    reopened.remove(ContainerId(2)).unwrap();
    assert_eq!(reopened.containers().unwrap(), vec![C1]);
}

/// A crash can leave a removal half done (a tombstone) or an import half done (a staging
/// directory): neither is listed, and the next start of the volume clears both.
#[test]
fn what_a_crash_left_of_a_removal_or_an_import_is_cleared_at_the_next_start() {
    let (dir, volume) = disk_volume();
    for name in [".deleted-5", ".staging-6"] {
        std::fs::create_dir_all(dir.path().join(name).join("chunks")).unwrap();
    }
    assert!(volume.containers().unwrap().is_empty());
    DiskVolume::open(dir.path()).unwrap();
    assert!(!dir.path().join(".deleted-5").exists());
    assert!(!dir.path().join(".staging-6").exists());
}
