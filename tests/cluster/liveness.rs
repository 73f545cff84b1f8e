//! The SCM side's liveness properties once a cluster has settled: a restarted SCM leaves
//! safe mode, pending allocations roll out of their windows; each checker holds on a
//! healed cluster and tells the story of what never happened on one that is not.

use hadoop_ref::scenarios::cluster::liveness::{
    PENDING_ALLOCATIONS_ROLL_OUT, SCMS_LEAVE_SAFE_MODE, pending_allocations_roll_out,
    scms_leave_safe_mode,
};
use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;

fn two_scms() -> MiniOzoneCluster {
    MiniOzoneCluster::builder()
        .scms(2)
        .datanodes(3)
        .build()
        .unwrap()
}

#[test]
fn restarted_scm_leaves_safe_mode_once_every_datanode_reaches_it() {
    let cluster = two_scms();
    cluster.set_link(0, 1, false).unwrap();
    cluster.restart_scm(1).unwrap();
    let stuck = scms_leave_safe_mode(&cluster, 5).unwrap_err();
    assert_eq!(
        (stuck.seed, stuck.property),
        ("HDDS-16891", SCMS_LEAVE_SAFE_MODE)
    );
    let story = stuck.detail.clone();
    assert!(story.contains("after 5 ticks"), "{story}");
    assert!(story.contains("never heard a node report from"), "{story}");
    let in_safe_mode = cluster.scms_in_safe_mode();
    assert_eq!(in_safe_mode.len(), 1, "{in_safe_mode:?}");
    let waiting: Vec<String> = in_safe_mode[0]
        .waiting_for
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(waiting.len(), 1, "only the cut datanode: {waiting:?}");
    assert!(story.contains(&waiting[0]), "{story}");
    cluster.heal_all();
    assert_eq!(scms_leave_safe_mode(&cluster, 5), Ok(()));
    assert!(cluster.scms_in_safe_mode().is_empty());
}

#[test]
fn a_granted_unwritten_container_rolls_out_after_two_intervals() {
    let cluster = two_scms();
    let granted = cluster.open_key(1).unwrap();
    let pending = cluster.pending_allocations();
    assert!(
        pending
            .iter()
            .any(|p| p.containers.contains(&granted.container)),
        "{pending:?}"
    );
    let roll = cluster.roll_interval_ms();
    let early = pending_allocations_roll_out(&cluster, roll / 2).unwrap_err();
    assert_eq!(
        (early.seed, early.property),
        ("HDDS-16891", PENDING_ALLOCATIONS_ROLL_OUT)
    );
    assert!(
        early
            .detail
            .contains(&format!(" {} on ", granted.container)),
        "{early}"
    );
    assert_eq!(pending_allocations_roll_out(&cluster, 2 * roll), Ok(()));
    assert!(cluster.pending_allocations().is_empty());
}
