//! Reconciliation through the SCM's reconcile command (HDDS-16811): a lagging replica is
//! repaired, and a deleted block is never copied back, unless the replica runs the code
//! before the seed's patch.

use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig};
use hadoop_ref::datanode::daemon::DatanodeConfig;
use hadoop_ref::sim::mini_cluster::{Key, MiniOzoneCluster};

/// Three datanodes with replicas of `behavior`, and a closed container holding a whole
/// key and a key whose replica on datanode 3 lacks its last block: the whole key keeps
/// every replica from reporting empty once the other is deleted. Returns the second key.
fn lagging(behavior: ContainerBehavior) -> (MiniOzoneCluster, Key) {
    let cluster = MiniOzoneCluster::builder()
        .datanode_config(DatanodeConfig {
            container: ContainerConfig::new(behavior),
            ..DatanodeConfig::default()
        })
        .build()
        .unwrap();
    let keys = cluster.open_keys(2, 2).unwrap();
    let lagging = cluster.datanode(2).unwrap().id();
    cluster.write_blocks(&keys[0]).unwrap();
    cluster.write_blocks_lagging(&keys[1], lagging).unwrap();
    cluster.close_key(&keys[1]).unwrap();
    cluster.run_until_quiescent(10).unwrap();
    (cluster, keys[1].clone())
}

#[test]
fn a_reconcile_command_repairs_a_lagging_replica() {
    let (cluster, key) = lagging(ContainerBehavior::Hardened);
    assert_eq!(cluster.live_blocks_of(2, &key).unwrap(), 1);
    assert_eq!(
        cluster.reconcile(key.container).unwrap(),
        3,
        "one per holder"
    );
    cluster.run_until_quiescent(10).unwrap();
    assert_eq!(cluster.live_blocks_of(2, &key).unwrap(), 2);
}

/// HDDS-16811's MC2 driven by the SCM: the lagging replica runs the delete transaction
/// first, then a reconcile command has it reconcile with a peer cut off from the SCMs
/// that still holds the block.
fn deleted_then_reconciled(behavior: ContainerBehavior) -> u64 {
    let (cluster, key) = lagging(behavior);
    for scm in 0..3 {
        cluster.set_link(0, scm, false).unwrap();
    }
    cluster.delete_key(&key).unwrap();
    for _ in 0..3 {
        cluster.tick().unwrap();
    }
    assert_eq!(cluster.live_blocks_of(2, &key).unwrap(), 0);
    cluster.reconcile(key.container).unwrap();
    for _ in 0..2 {
        cluster.tick().unwrap();
    }
    for scm in 0..3 {
        cluster.set_link(0, scm, true).unwrap();
    }
    cluster.run_until_quiescent(50).unwrap();
    cluster.live_blocks_of(2, &key).unwrap()
}

#[test]
fn a_deleted_block_is_not_copied_back_by_a_reconcile_command() {
    for behavior in ContainerBehavior::PATCHED {
        assert_eq!(deleted_then_reconciled(behavior), 0, "{behavior:?}");
    }
}

#[test]
fn a_deleted_block_is_copied_back_by_a_reconcile_command_before_the_patch() {
    assert_eq!(deleted_then_reconciled(ContainerBehavior::Legacy), 1);
}
