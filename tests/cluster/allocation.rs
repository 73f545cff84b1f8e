//! Allocation judged by the datanodes' own node reports (HDDS-16891): an OPEN replica
//! reserves its container's size on its volume, a closed one only what it holds, and the
//! leader's pending allocations cover what is granted but not yet written.

use hadoop_ref::scenarios::cluster::invariants::no_datanode_granted_past_its_room;
use hadoop_ref::scm::{ScmError, ScmHardening};
use hadoop_ref::sim::mini_cluster::{CONTAINER_SIZE, ClusterError, MiniOzoneCluster};

fn two_slots() -> MiniOzoneCluster {
    MiniOzoneCluster::builder()
        .scms(2)
        .slots_per_datanode(2)
        .build()
        .unwrap()
}

fn refused_for_room(result: Result<impl std::fmt::Debug, ClusterError>) -> bool {
    matches!(
        result,
        Err(ClusterError::Scm(ScmError::NoPipelineWithSpace))
    )
}

#[test]
fn an_open_replica_reserves_its_container_size_and_a_closed_one_gives_it_back() {
    let cluster = two_slots();
    let key = cluster.open_key(2).unwrap();
    let before = cluster.node_report(0).unwrap()[0];
    cluster.write_blocks(&key).unwrap();
    let open = cluster.node_report(0).unwrap()[0];
    let used = before.remaining - open.remaining;
    assert!(used > 0, "the blocks use space");
    assert_eq!(
        open.committed,
        CONTAINER_SIZE - used,
        "the unwritten rest is reserved"
    );
    cluster.close_key(&key).unwrap();
    cluster.run_until_quiescent(10).unwrap();
    assert_eq!(cluster.node_report(0).unwrap()[0].committed, 0);
}

#[test]
fn a_datanode_is_granted_no_more_containers_than_its_volume_holds() {
    let cluster = two_slots();
    let first = cluster.open_key(1).unwrap();
    let second = cluster.open_key(1).unwrap();
    assert!(
        refused_for_room(cluster.open_key(1)),
        "two slots, two pending"
    );
    cluster.write_blocks(&first).unwrap();
    cluster.write_blocks(&second).unwrap();
    cluster.tick().unwrap();
    assert!(
        refused_for_room(cluster.open_key(1)),
        "reported: the OPEN replicas' reservations fill the volume"
    );
    cluster.close_key(&first).unwrap();
    cluster.run_until_quiescent(10).unwrap();
    cluster.tick().unwrap(); // the node report after the close
    cluster
        .open_key(1)
        .expect("the closed replica gave its reservation back");
    no_datanode_granted_past_its_room(&cluster).unwrap();
}

/// HDDS-16891's B.9 through real datanodes: the old leader granted a container whose
/// replicas are not written yet; the new leader must not grant its slot again.
#[test]
fn a_granted_unwritten_container_keeps_its_slots_across_a_leader_change() {
    let cluster = two_slots();
    let granted = cluster.open_key(1).unwrap();
    cluster.transfer_leadership(1).unwrap();
    let second = cluster.open_key(1).unwrap();
    assert!(refused_for_room(cluster.open_key(1)));
    cluster.write_blocks(&granted).unwrap();
    cluster.write_blocks(&second).unwrap();
    no_datanode_granted_past_its_room(&cluster).unwrap();
}

/// A container written and closed by the old leader whose replicas no node report has
/// shown the new leader yet: `ScmHardening::rebuild_reserves_unreported_replicas` keeps
/// its slots; the seed's rebuild, which reserves for OPEN containers only, does not.
fn closed_before_reported(hardening: ScmHardening) -> Result<(), String> {
    let cluster = MiniOzoneCluster::builder()
        .scms(2)
        .slots_per_datanode(2)
        .scm_hardening(hardening)
        .build()
        .unwrap();
    let closed = cluster.open_key(1).unwrap();
    cluster.write_blocks(&closed).unwrap();
    cluster.close_key(&closed).unwrap(); // close commands wait in SCM 1's queue
    cluster.transfer_leadership(1).unwrap();
    let mut granted = Vec::new();
    while let Ok(key) = cluster.open_key(1) {
        granted.push(key);
        assert!(granted.len() <= 3, "bounded by the pipelines' room");
    }
    for key in &granted {
        cluster.write_blocks(key).unwrap();
    }
    no_datanode_granted_past_its_room(&cluster).map_err(|v| v.to_string())
}

#[test]
fn a_container_closed_before_its_replicas_reported_keeps_its_slots_when_hardened() {
    closed_before_reported(ScmHardening::ALL).unwrap();
}

#[test]
fn a_container_closed_before_its_replicas_reported_is_granted_again_without_the_switch() {
    let without = ScmHardening {
        rebuild_reserves_unreported_replicas: false,
        ..ScmHardening::ALL
    };
    let error = closed_before_reported(without).unwrap_err();
    assert!(error.contains("HDDS-16891"), "{error}");
}
