//! What a new serving leader knows (HDDS-16891) without a checker: the replicated
//! add-container on followers, snapshot install, and the rebuild of the pending buckets
//! after a leader change, a re-election, a restart or a bootstrap, and what it leaves to a
//! datanode that registers after it.

use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, PipelineId, ScmId};
use hadoop_ref::hdds::report::StorageReport;
use hadoop_ref::scm::ha::SubmitError;
use hadoop_ref::scm::{
    DatanodeDetails, LifeCycleState, ScmBehavior, ScmError, StorageContainerManager,
};
use hadoop_ref::sim::ratis::SubmitFault;
use hadoop_ref::sync::Arc;

use crate::test_util::allocation::{
    Fixture, SIZE, allocate_within, grant_all, open_replica, pending, pipeline_of, report,
};

#[test]
fn follower_applies_add_container_without_recording_a_slot() {
    let f = Fixture::new();
    let leader = f.scm(1, ScmBehavior::Hardened, 1);
    let follower = f.scm(2, ScmBehavior::Hardened, 1);
    f.lead(&leader);
    let c1 = leader.allocate_container().unwrap();
    follower.catch_up();
    assert_eq!(follower.container(c1).unwrap().state, LifeCycleState::Open);
    assert!(pending(&follower, 1).is_empty());
    assert_eq!(
        f.dbs[1].load().containers.len(),
        1,
        "persisted on the follower too"
    );
}

#[test]
fn lagging_follower_installs_snapshot() {
    let f = Fixture::new();
    let leader = f.scm(1, ScmBehavior::Hardened, 2);
    let follower = f.scm(2, ScmBehavior::Hardened, 2);
    f.lead(&leader);
    let c1 = leader.allocate_container().unwrap();
    f.ring.compact();
    let c2 = leader.allocate_container().unwrap();
    assert_eq!(follower.catch_up(), f.ring.last_index());
    assert!(follower.container(c1).is_some(), "from the snapshot");
    assert!(follower.container(c2).is_some(), "from the log after it");
    assert_eq!(f.dbs[1].load().index, f.ring.last_index());
}

#[test]
fn re_election_at_a_new_term_rebuilds_and_serves_again() {
    for behavior in [ScmBehavior::Hardened, ScmBehavior::SeedPatch] {
        let f = Fixture::new();
        let scm = f.scm(1, behavior, 1);
        f.lead(&scm);
        assert!(allocate_within(&scm, 16).is_ok());
        // Re-elected at a new term: ready again, but the rebuild of the new term has to run.
        scm.notify_leader_changed(f.ring.elect(ScmId(1)));
        scm.notify_leader_ready();
        assert!(
            allocate_within(&scm, 16).is_ok(),
            "{behavior:?}: the other pipeline"
        );
    }
}

#[test]
fn new_leader_rebuilds_slots_of_unwritten_open_containers() {
    let f = Fixture::new();
    let old = f.scm(1, ScmBehavior::Hardened, 1);
    let new = f.scm(2, ScmBehavior::Hardened, 1);
    // dn4 is full on the old leader: c1 goes to p1.
    old.process_node_report(DatanodeId(4), vec![report(0)])
        .unwrap();
    f.lead(&old);
    let c1 = allocate_within(&old, 16).unwrap();
    // dn1 wrote c1 and reported it to every SCM.
    new.catch_up();
    for scm in [&old, &new] {
        scm.process_node_report(
            DatanodeId(1),
            vec![StorageReport::new(SIZE + SIZE / 2, SIZE, 0)],
        )
        .unwrap();
        scm.process_container_report(DatanodeId(1), &[open_replica(c1)])
            .unwrap();
    }
    assert!(pending(&old, 1).is_empty(), "the report confirms the entry");
    old.notify_not_leader();
    f.lead(&new);
    assert!(pending(&new, 1).is_empty(), "dn1 has a replica: no slot");
    assert_eq!(pending(&new, 2), vec![c1]);
    assert_eq!(pending(&new, 3), vec![c1]);
    let c2 = allocate_within(&new, 16).expect("p2 still has room");
    assert_eq!(pipeline_of(&new, c2), PipelineId(2));
    assert_eq!(grant_all(&new, 16), Vec::<ContainerId>::new());
    assert_eq!(new.allocate_container(), Err(ScmError::NoPipelineWithSpace));
}

#[test]
fn legacy_new_leader_has_empty_buckets() {
    let f = Fixture::p1_only();
    let old = f.scm(1, ScmBehavior::LegacyNoRebuild, 1);
    let new = f.scm(2, ScmBehavior::LegacyNoRebuild, 1);
    f.lead(&old);
    let c1 = old.allocate_container().unwrap();
    old.notify_not_leader();
    f.lead(&new);
    assert!(new.container(c1).is_some());
    assert!(
        pending(&new, 1).is_empty(),
        "the defect: c1's slot is forgotten"
    );
    let c2 = new.allocate_container().unwrap();
    assert_eq!(pipeline_of(&new, c2), PipelineId(1), "granted again on p1");
}

#[test]
fn rebuild_drops_stale_entries_of_a_returning_leader() {
    let f = Fixture::p1_only();
    let scm = f.scm(1, ScmBehavior::Hardened, 2);
    f.lead(&scm);
    let c1 = scm.allocate_container().unwrap();
    // The submit of c2 answers not-leader, and the entry is in the log.
    f.ring.inject(SubmitFault::NotLeaderAfterCommit);
    let refused = scm.allocate_container();
    let Err(ScmError::SubmitNotConfirmed {
        container: c2,
        reason,
    }) = refused
    else {
        panic!("expected an unconfirmed submit, got {refused:?}");
    };
    assert_eq!(reason, SubmitError::NotLeader);
    assert_eq!(
        pending(&scm, 1),
        vec![c1, c2],
        "the reservation is kept: the entry may commit"
    );
    // A stale entry for a container that never committed is dropped by the rebuild.
    scm.nodes()
        .tracker()
        .record_allocation(&scm.nodes().get(DatanodeId(1)).unwrap(), ContainerId(99));
    scm.notify_leader_changed(f.ring.elect(ScmId(1)));
    scm.notify_leader_ready();
    assert_eq!(pending(&scm, 1), vec![c1, c2], "c2 committed, 99 never did");
}

#[test]
fn restarted_scm_reloads_its_table_and_rebuilds_when_it_leads_again() {
    let f = Fixture::p1_only();
    let scm = f.scm(1, ScmBehavior::Hardened, 1);
    f.lead(&scm);
    let c1 = scm.allocate_container().unwrap();
    drop(scm);
    f.ring.lose_leader();
    let restarted = f.scm(1, ScmBehavior::Hardened, 1);
    assert_eq!(restarted.container(c1).unwrap().state, LifeCycleState::Open);
    assert!(pending(&restarted, 1).is_empty(), "buckets start empty");
    f.lead(&restarted);
    assert_eq!(pending(&restarted, 1), vec![c1]);
}

#[test]
fn newly_bootstrapped_scm_installs_snapshot_and_rebuilds_as_leader() {
    let f = Fixture::new();
    let leader = f.scm(1, ScmBehavior::Hardened, 1);
    // dn4 is full on the first leader: c1 goes to p1.
    leader
        .process_node_report(DatanodeId(4), vec![report(0)])
        .unwrap();
    f.lead(&leader);
    let c1 = allocate_within(&leader, 16).unwrap();
    f.ring.compact();
    // SCM 3 joins with an empty database; the log before it is compacted away.
    let bootstrapped = f.scm(3, ScmBehavior::Hardened, 1);
    assert!(
        bootstrapped.container(c1).is_some(),
        "installed from the snapshot"
    );
    leader.notify_not_leader();
    f.lead(&bootstrapped);
    assert_eq!(pending(&bootstrapped, 1), vec![c1]);
    let granted = grant_all(&bootstrapped, 32);
    assert_eq!(granted.len(), 1, "p2's slot only");
    assert_eq!(
        pipeline_of(&bootstrapped, granted[0]),
        PipelineId(2),
        "p1's slots stay reserved for c1"
    );
}

#[test]
fn datanode_new_to_the_leader_after_its_rebuild_starts_with_an_empty_bucket() {
    // The seed accepts this: the rebuild seeds the datanodes registered when it runs.
    for behavior in [ScmBehavior::Hardened, ScmBehavior::SeedPatch] {
        let f = Fixture::p1_only();
        let old = f.scm(1, behavior, 1);
        f.lead(&old);
        let c1 = old.allocate_container().unwrap();
        old.notify_not_leader();
        // SCM 2 starts and leads before dn3 has registered with it.
        let new = StorageContainerManager::new(
            ScmId(2),
            behavior,
            f.config.clone(),
            f.ring.log(),
            Arc::clone(&f.dbs[1]),
            f.clock.shared(),
        )
        .unwrap();
        for dn in [1, 2] {
            new.register_datanode(&DatanodeDetails::new(DatanodeId(dn)), vec![report(1)]);
        }
        f.lead(&new);
        new.register_datanode(&DatanodeDetails::new(DatanodeId(3)), vec![report(1)]);
        assert_eq!(pending(&new, 1), vec![c1], "{behavior:?}");
        assert!(
            pending(&new, 3).is_empty(),
            "{behavior:?}: dn3 registered late"
        );
    }
}
