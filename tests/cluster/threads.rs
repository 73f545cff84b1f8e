//! `MiniOzoneCluster` on threads of its own: every datanode's heartbeat threads, command
//! processor and block deleting service, and the SCMs' service thread, over memory or
//! disk volumes.

use hadoop_ref::datanode::daemon::DatanodeConfig;
use hadoop_ref::sim::mini_cluster::{ClusterError, MiniOzoneCluster};

use super::assert_live;

/// Datanodes that heartbeat and delete every millisecond.
fn quick() -> DatanodeConfig {
    DatanodeConfig {
        heartbeat_interval_ms: 1,
        initial_heartbeat_interval_ms: 1,
        block_deleting_interval_ms: 1,
        ..DatanodeConfig::default()
    }
}

#[test]
fn a_started_cluster_deletes_a_key_across_a_leader_change_and_a_restart() {
    let cluster = MiniOzoneCluster::builder()
        .datanode_config(quick())
        .build()
        .unwrap();
    let kept = cluster.write_key(2).unwrap();
    let deleted = cluster.write_key(2).unwrap();
    cluster.start(1).unwrap();
    assert!(matches!(cluster.tick(), Err(ClusterError::Started)));
    cluster.delete_key(&deleted).unwrap();
    cluster.transfer_leadership(1).unwrap();
    cluster.restart_datanode(2).unwrap();
    cluster.wait_until_quiescent(2, 10_000).unwrap();
    cluster.stop();
    assert!(!cluster.is_started());
    assert_live(&cluster, &deleted, 0);
    assert_live(&cluster, &kept, 2);
}

#[test]
fn a_cluster_on_disk_finds_its_replicas_again_after_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = MiniOzoneCluster::builder()
        .on_disk(dir.path())
        .build()
        .unwrap();
    let kept = cluster.write_key(2).unwrap();
    let deleted = cluster.write_key(3).unwrap();
    cluster.delete_key(&deleted).unwrap();
    cluster.tick().unwrap();
    for dn in 0..3 {
        cluster.restart_datanode(dn).unwrap();
    }
    cluster.run_until_quiescent(50).unwrap();
    assert_live(&cluster, &deleted, 0);
    assert_live(&cluster, &kept, 2);
    assert!(
        dir.path().join("dn1").is_dir(),
        "each datanode's volume is its directory"
    );
}
