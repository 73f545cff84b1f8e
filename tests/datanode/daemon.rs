//! The `Datanode` on real threads: SCM commands reach the real replicas, the block
//! deleting service runs on its own thread, and a restart reloads the replicas from the
//! volume.

use hadoop_ref::datanode::container::ContainerController;
use hadoop_ref::datanode::daemon::Datanode;
use hadoop_ref::hdds::command::{CommandKind, DeletedBlocksTransaction};
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, ScmId};
use hadoop_ref::sim::scm_endpoint::InProcessScm;
use hadoop_ref::sync::Arc;

use crate::test_util::eventually;

const C1: ContainerId = ContainerId(1);
const DN: DatanodeId = DatanodeId(1);

/// A datanode over a disk volume in `dir` holding c1 (CLOSED, blocks 1 and 2), talking to
/// one SCM; every loop paced at 1 ms.
fn datanode_on_disk(dir: &std::path::Path, scm: &InProcessScm) -> Datanode {
    crate::test_util::datanode::datanode_on_disk(dir, vec![scm.endpoint()])
}

fn leader() -> InProcessScm {
    let scm = InProcessScm::new(ScmId(1));
    scm.become_leader(1);
    scm
}

#[test]
fn a_datanode_restarts_from_its_disk_volume() {
    let dir = tempfile::tempdir().unwrap();
    let scm = leader();
    let dn = datanode_on_disk(dir.path(), &scm);
    dn.start().unwrap();
    dn.restart().unwrap();
    assert_eq!(dn.replicas().container_report()[0].block_count, 2);
    dn.stop();
    drop(dn);
    // A new process over the same directory finds the same replica.
    let again = datanode_on_disk(dir.path(), &scm);
    let report = again.replicas().container_report();
    assert_eq!((report[0].container, report[0].block_count), (C1, 2));
}

#[test]
fn delete_blocks_from_the_leader_are_executed_by_the_deleting_service_thread() {
    let dir = tempfile::tempdir().unwrap();
    let scm = leader();
    let dn = datanode_on_disk(dir.path(), &scm);
    let tx = DeletedBlocksTransaction {
        tx_id: 1,
        container: C1,
        local_ids: vec![1],
    };
    scm.queue_command(
        DN,
        CommandKind::DeleteBlocks {
            transactions: vec![tx],
        },
        0,
    )
    .unwrap();
    dn.start().unwrap();
    let replica = dn.replicas().container(C1).unwrap();
    assert!(
        eventually(5_000, || matches!(replica.store().get_block(1), Ok(None))),
        "the deleting service deletes block 1"
    );
    dn.stop();
    assert!(replica.tree_marks_deleted(1).unwrap());
    assert_eq!(replica.store().summary().unwrap().block_count, 1);
    assert_eq!(dn.stats().executed(), 1);
}

#[test]
fn a_force_delete_from_the_leader_removes_the_replica_directory() {
    let dir = tempfile::tempdir().unwrap();
    let scm = leader();
    let dn = Arc::new(datanode_on_disk(dir.path(), &scm));
    let delete = CommandKind::DeleteContainer {
        container: C1,
        force: true,
    };
    scm.queue_command(DN, delete, 0).unwrap();
    dn.start().unwrap();
    assert!(eventually(5_000, || dn.stats().executed() == 1));
    dn.stop();
    assert!(dn.replicas().container(C1).is_err());
    assert!(!dir.path().join("1").exists());
}
