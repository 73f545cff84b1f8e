//! The SCM's container deletes that cross a failover or a repair, stepped so that every
//! fence is seen to act: HDDS-16449's double delete (the excess order of HDDS-4589, the
//! term fence of HDDS-17268) and HDDS-16811's restored block in a DELETING container
//! (HDDS-14416's force delete). The catalogue's cases run the same set-ups under shuttle;
//! these show that each "holds" there is a fence at work, not a race never run.

use hadoop_ref::hdds::ids::ContainerId;
use hadoop_ref::scenarios::cluster::invariants::{
    container_keeps_its_replication_factor, deleted_keys_are_gone_everywhere,
};
use hadoop_ref::scenarios::cluster::{
    DeletingContainerBehavior, FailoverDeleteBehavior, emptied_but_one,
    stale_excess_delete_in_flight,
};
use hadoop_ref::scm::LifeCycleState;
use hadoop_ref::sim::mini_cluster::{Key, MiniOzoneCluster};

/// The datanode cut off from the SCM in the DELETING set-up (it keeps the key's blocks).
const CUT_OFF: usize = 0;
/// The datanode whose replica lacks the key's last block.
const LAGGING: usize = 2;

/// The indexes of the datanodes holding a replica of `container`.
fn holders(cluster: &MiniOzoneCluster, container: ContainerId) -> Vec<usize> {
    (0..cluster.datanode_count())
        .filter(|&dn| {
            let replicas = cluster.datanode(dn).unwrap().replicas();
            replicas.container(container).is_ok()
        })
        .collect()
}

/// The stale delete delivered (the link healed) and the cluster settled. Returns the
/// container and the datanode the deposed leader's delete was for.
fn settle_after_failover(
    behavior: FailoverDeleteBehavior,
) -> (MiniOzoneCluster, ContainerId, usize) {
    let (cluster, container, stale_target) = stale_excess_delete_in_flight(behavior).unwrap();
    assert_eq!(holders(&cluster, container).len(), 4, "over-replicated");
    cluster.set_link(stale_target, 0, true).unwrap();
    cluster.run_until_quiescent(50).unwrap();
    (cluster, container, stale_target)
}

/// Before both fixes the deposed leader's pick and the new leader's differ, and both run:
/// the property the catalogue checks sees the container below its factor.
#[test]
fn each_scms_own_excess_order_and_a_discarded_term_delete_two_replicas() {
    let (cluster, container, stale_target) = settle_after_failover(FailoverDeleteBehavior::Legacy);
    let left = holders(&cluster, container);
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(!left.contains(&stale_target), "the stale delete ran");
    let violation = container_keeps_its_replication_factor(&cluster, container, 3).unwrap_err();
    assert!(violation.to_string().contains("HDDS-17268"), "{violation}");
}

/// With each SCM's own order the new leader picks another replica; the restarted datanode
/// heard the new term before init and drops the deposed leader's delete.
#[test]
fn the_term_heard_before_init_drops_the_deposed_leaders_pick() {
    let (cluster, container, stale_target) =
        settle_after_failover(FailoverDeleteBehavior::LegacyExcessOrder);
    let left = holders(&cluster, container);
    assert_eq!(left.len(), 3, "{left:?}");
    assert!(left.contains(&stale_target), "the stale delete was dropped");
    let dropped = cluster
        .datanode(stale_target)
        .unwrap()
        .context()
        .stats()
        .dropped_stale;
    assert!(dropped > 0);
}

/// With the sorted order the new leader picks the replica the deposed leader picked; the
/// datanode before HDDS-17268 runs the stale delete, and the new leader's only repeats it.
#[test]
fn the_same_excess_order_makes_the_second_delete_repeat_the_first() {
    let (cluster, container, stale_target) =
        settle_after_failover(FailoverDeleteBehavior::LegacyTermFence);
    let left = holders(&cluster, container);
    assert_eq!(left.len(), 3, "{left:?}");
    assert!(
        !left.contains(&stale_target),
        "both deletes fell on one replica"
    );
    container_keeps_its_replication_factor(&cluster, container, 3).unwrap();
}

/// The replica without the key's last block repairs from the cut-off peer before that
/// peer deletes, then the peer is healed and the cluster settles.
fn restore_then_settle(behavior: DeletingContainerBehavior) -> (MiniOzoneCluster, Key, u64) {
    let (cluster, key) = emptied_but_one(behavior).unwrap();
    cluster.reconcile_on(LAGGING, key.container).unwrap();
    let restored = cluster.live_blocks_of(LAGGING, &key).unwrap();
    cluster.set_link(CUT_OFF, 0, true).unwrap();
    cluster.run_until_quiescent(50).unwrap();
    for _ in 0..3 {
        cluster.tick().unwrap(); // the DELETING replicas' reports, deletes, DELETED
    }
    (cluster, key, restored)
}

/// Before HDDS-16811's patch the repair copies the deleted block back into a replica
/// marked empty; Ozone master's report handler force-deletes that replica once the
/// container is DELETING (HDDS-14416), and the container goes DELETED.
#[test]
fn a_restored_block_of_a_deleting_container_goes_with_its_replica() {
    let (cluster, key, restored) = restore_then_settle(DeletingContainerBehavior::LegacyReplica);
    assert_eq!(restored, 1, "the repair brought the block back");
    assert!(holders(&cluster, key.container).is_empty());
    let state = cluster
        .leader()
        .unwrap()
        .container(key.container)
        .unwrap()
        .state;
    assert_eq!(state, LifeCycleState::Deleted);
}

/// Before HDDS-14416 nothing removes it: the replica refuses its non-forced delete, the
/// container stays DELETING, and the deleted block lives.
#[test]
fn before_the_force_delete_a_restored_block_keeps_its_container_deleting() {
    let (cluster, key, restored) = restore_then_settle(DeletingContainerBehavior::Legacy);
    assert_eq!(restored, 1);
    assert_eq!(holders(&cluster, key.container), vec![LAGGING]);
    let state = cluster
        .leader()
        .unwrap()
        .container(key.container)
        .unwrap()
        .state;
    assert_eq!(state, LifeCycleState::Deleting);
    let violation = deleted_keys_are_gone_everywhere(&cluster, &[key]).unwrap_err();
    assert!(
        violation.to_string().contains("deleted everywhere"),
        "{violation}"
    );
}

/// With the patch the repair brings nothing back: the tree records the block the lagging
/// replica never had.
#[test]
fn with_the_patch_the_repair_restores_no_deleted_block() {
    let (cluster, key, restored) = restore_then_settle(DeletingContainerBehavior::SeedPatch);
    assert_eq!(restored, 0);
    assert!(holders(&cluster, key.container).is_empty());
}
