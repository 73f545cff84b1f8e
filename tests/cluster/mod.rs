//! `MiniOzoneCluster`: SCMs and real datanodes stepped together. Deletions the SCM drives
//! into the replicas (HDDS-16811) survive leadership moves, restarts and partitions, and a
//! deposed leader's commands are dropped by the datanodes (HDDS-17268).

mod allocation;
mod failover_deletes;
mod lifecycle;
mod liveness;
mod operations;
mod repair;
mod threads;

use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};

fn cluster() -> MiniOzoneCluster {
    MiniOzoneCluster::builder()
        .scms(3)
        .datanodes(3)
        .build()
        .unwrap()
}

/// Every replica of `key`'s container holds `blocks` live blocks.
fn assert_live(cluster: &MiniOzoneCluster, key: &Key, blocks: u64) {
    for dn in 0..3 {
        assert_eq!(
            cluster.live_blocks(dn, key.container).unwrap(),
            blocks,
            "datanode {dn}, container {}",
            key.container
        );
    }
}

#[test]
fn a_deleted_key_is_deleted_on_every_replica_and_a_kept_one_stays_whole() {
    let cluster = cluster();
    let kept = cluster.write_key(3).unwrap();
    let deleted = cluster.write_key(2).unwrap();
    cluster.delete_key(&deleted).unwrap();
    cluster.run_until_quiescent(50).unwrap();
    assert_live(&cluster, &deleted, 0);
    assert_live(&cluster, &kept, 3);
}

#[test]
fn a_deposed_leaders_close_commands_are_dropped_and_the_new_leader_closes_again() {
    let cluster = cluster();
    let key = cluster.write_key(1).unwrap();
    // SCM 1's close commands (its term) wait in its queue; SCM 2 leads before they go out.
    cluster.transfer_leadership(1).unwrap();
    cluster.delete_key(&key).unwrap();
    cluster.run_until_quiescent(50).unwrap();
    let skipped: u64 = (0..3)
        .map(|dn| {
            cluster
                .datanode(dn)
                .unwrap()
                .context()
                .stats()
                .dropped_stale
        })
        .sum();
    assert!(skipped > 0, "the old term's commands were dropped");
    assert_live(&cluster, &key, 0);
}

#[test]
fn deletions_in_flight_survive_a_datanode_and_an_scm_restart() {
    let cluster = cluster();
    let key = cluster.write_key(2).unwrap();
    cluster.delete_key(&key).unwrap();
    cluster.tick().unwrap();
    cluster.restart_datanode(0).unwrap();
    cluster.restart_scm(0).unwrap(); // the leader: the ring has none now
    assert!(matches!(cluster.leader(), Err(ClusterError::NoLeader)));
    cluster.transfer_leadership(2).unwrap();
    cluster.run_until_quiescent(50).unwrap();
    assert_live(&cluster, &key, 0);
}

#[test]
fn a_datanode_cut_off_from_every_scm_deletes_once_healed() {
    let cluster = cluster();
    let key = cluster.write_key(2).unwrap();
    for scm in 0..3 {
        cluster.set_link(0, scm, false).unwrap();
    }
    cluster.delete_key(&key).unwrap();
    assert!(matches!(
        cluster.run_until_quiescent(10),
        Err(ClusterError::NotQuiescent { .. })
    ));
    assert_eq!(
        cluster.live_blocks(0, key.container).unwrap(),
        2,
        "cut off: untouched"
    );
    for scm in 0..3 {
        cluster.set_link(0, scm, true).unwrap();
    }
    cluster.run_until_quiescent(50).unwrap();
    assert_live(&cluster, &key, 0);
}

/// The SCM keeps each replica as its datanode reported it (`ContainerReplica`): state,
/// block count, used bytes and data checksum, from the real replicas.
#[test]
fn the_scm_knows_each_replica_as_its_datanode_reported_it() {
    let cluster = cluster();
    let key = cluster.write_key(3).unwrap();
    cluster.run_until_quiescent(10).unwrap();
    cluster.tick().unwrap(); // the reports after the close
    let reported = cluster.leader().unwrap().replica_reports(key.container);
    assert_eq!(reported.len(), 3);
    for replica in reported.values() {
        assert_eq!(replica.state, ContainerState::Closed);
        assert_eq!(replica.block_count, 3);
        assert!(replica.used_bytes > 0);
        assert_ne!(replica.data_checksum, 0, "computed when the replica closed");
    }
    let checksums: std::collections::BTreeSet<_> =
        reported.values().map(|r| r.data_checksum).collect();
    assert_eq!(checksums.len(), 1, "whole replicas agree");
}

/// The cluster's replica check sees a block whose file is gone and a file without
/// metadata (it can fail).
#[test]
fn the_replica_check_sees_metadata_without_its_file_and_a_file_without_metadata() {
    use hadoop_ref::datanode::container::store::MetadataBatch;
    use hadoop_ref::scenarios::cluster::invariants::replicas_keep_metadata_and_files_together;

    let cluster = cluster();
    replicas_keep_metadata_and_files_together(&cluster).unwrap();
    let key = cluster.write_key(2).unwrap();
    replicas_keep_metadata_and_files_together(&cluster).unwrap();
    let replica = cluster
        .datanode(1)
        .unwrap()
        .replicas()
        .container(key.container)
        .unwrap();
    assert!(replica.store().delete_block_file(key.blocks[0]).unwrap());
    let missing = replicas_keep_metadata_and_files_together(&cluster).unwrap_err();
    assert!(
        missing.to_string().contains("metadata only with its file"),
        "{missing}"
    );
    let batch = MetadataBatch {
        delete_blocks: vec![key.blocks[0], key.blocks[1]],
        ..MetadataBatch::default()
    };
    replica.store().commit(batch).unwrap();
    let orphan = replicas_keep_metadata_and_files_together(&cluster).unwrap_err();
    assert!(
        orphan
            .to_string()
            .contains("no block file without metadata"),
        "{orphan}"
    );
}

/// Once every replica of a deleted key's container reports no block, the leader deletes
/// the container (`EmptyContainerHandler`): DELETING, a non-forced delete to each holder,
/// DELETED once no replica is reported. A kept key's container stays.
#[test]
fn an_emptied_container_is_deleted_from_every_datanode() {
    use hadoop_ref::scm::LifeCycleState;

    let cluster = cluster();
    let kept = cluster.write_key(2).unwrap();
    let deleted = cluster.write_key(2).unwrap();
    cluster.delete_key(&deleted).unwrap();
    cluster.run_until_quiescent(50).unwrap();
    for _ in 0..3 {
        cluster.tick().unwrap(); // empty reports in, deletes out, no replica reported
    }
    let leader = cluster.leader().unwrap();
    assert_eq!(
        leader.container(deleted.container).unwrap().state,
        LifeCycleState::Deleted
    );
    assert!(leader.replica_reports(deleted.container).is_empty());
    for dn in 0..3 {
        let replicas = cluster.datanode(dn).unwrap().replicas();
        assert!(
            replicas.container(deleted.container).is_err(),
            "datanode {dn}"
        );
    }
    assert_eq!(
        leader.container(kept.container).unwrap().state,
        LifeCycleState::Closed
    );
    assert_live(&cluster, &kept, 2);
}
mod replication_target;
