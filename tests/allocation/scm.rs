//! SCM pending container allocations (HDDS-16891) without a checker: slot arithmetic, the
//! bucket's roll, the tracker, allocation on the leader, the replicated add-container,
//! reports, the rebuild and its gate, restart and snapshot install, and every error.

use hadoop_ref::hdds::container::{ContainerReplicaReport, ContainerState};

use hadoop_ref::clock::ManualClock;
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, PipelineId, ScmId};
use hadoop_ref::hdds::report::StorageReport;
use hadoop_ref::scm::ha::{ScmDb, SubmitError};
use hadoop_ref::scm::pending::{TwoWindowBucket, has_slot};
use hadoop_ref::scm::{
    LifeCycleState, Pipeline, ScmBehavior, ScmConfig, ScmError, StorageContainerManager,
};
use hadoop_ref::sim::ratis::{SimulatedRatis, SubmitFault};
use hadoop_ref::sync::Arc;

const SIZE: u64 = 100;
const ROLL_MS: u64 = 1_000;

fn report(slots: u64) -> StorageReport {
    StorageReport::new(slots * SIZE + SIZE / 2, 0, 0)
}

// --- slot arithmetic (spec B.2) ----------------------------------------------------------

#[test]
fn usable_space_subtracts_committed_and_spare_and_never_goes_negative() {
    assert_eq!(StorageReport::new(1000, 300, 200).usable(), 500);
    assert_eq!(StorageReport::new(100, 300, 0).usable(), 0);
    assert_eq!(StorageReport::new(100, 50, 80).usable(), 0);
    assert_eq!(StorageReport::new(1000, 300, 200).slots(SIZE), 5);
    assert_eq!(
        StorageReport::new(1000, 0, 0).slots(0),
        0,
        "zero size is no slot"
    );
}

#[test]
fn has_slot_needs_more_slots_than_pending_and_skips_failed_volumes() {
    let failed = StorageReport {
        failed: true,
        ..report(10)
    };
    assert!(!has_slot(&[], SIZE, 0), "no report, no slot");
    assert!(has_slot(&[report(1)], SIZE, 0));
    assert!(!has_slot(&[report(1)], SIZE, 1));
    assert!(has_slot(&[report(1), report(1)], SIZE, 1), "volumes add up");
    assert!(
        !has_slot(&[failed, report(1)], SIZE, 1),
        "a failed volume counts for nothing"
    );
}

// --- the bucket (spec B.3, B.4) ----------------------------------------------------------

#[test]
fn entry_survives_one_roll_and_ages_out_at_the_second() {
    let mut bucket = TwoWindowBucket::new(0, ROLL_MS);
    assert!(bucket.add(ContainerId(1)));
    assert_eq!(bucket.roll_if_needed(999), 0);
    assert_eq!(
        bucket.roll_if_needed(1_000),
        0,
        "first roll moves it to previous"
    );
    assert!(bucket.contains(ContainerId(1)));
    assert_eq!(bucket.roll_if_needed(2_000), 1, "second roll drops it");
    assert!(!bucket.contains(ContainerId(1)));
}

#[test]
fn two_intervals_without_access_drop_both_windows() {
    let mut bucket = TwoWindowBucket::new(0, ROLL_MS);
    bucket.add(ContainerId(1));
    bucket.roll_if_needed(1_000);
    bucket.add(ContainerId(2));
    assert_eq!(bucket.roll_if_needed(3_000), 2);
    assert_eq!(bucket.pending_count(), 0);
}

#[test]
fn roll_time_resets_to_the_access_time() {
    // Rolls drift with access times: an entry can live close to three intervals.
    let mut bucket = TwoWindowBucket::new(0, ROLL_MS);
    bucket.add(ContainerId(1));
    bucket.roll_if_needed(1_990);
    assert!(bucket.contains(ContainerId(1)));
    bucket.roll_if_needed(2_900);
    assert!(bucket.contains(ContainerId(1)), "not yet a second roll");
    bucket.roll_if_needed(2_990);
    assert!(!bucket.contains(ContainerId(1)));
}

#[test]
fn same_container_in_both_windows_counts_twice() {
    let mut bucket = TwoWindowBucket::new(0, ROLL_MS);
    bucket.add(ContainerId(1));
    bucket.roll_if_needed(1_000);
    bucket.add(ContainerId(1));
    assert_eq!(bucket.pending_count(), 2);
    assert!(bucket.remove(ContainerId(1)));
    assert_eq!(
        bucket.pending_count(),
        0,
        "remove takes it from both windows"
    );
    assert!(!bucket.remove(ContainerId(1)));
}

#[test]
fn check_space_and_add_refuses_without_slot() {
    let mut bucket = TwoWindowBucket::new(0, ROLL_MS);
    assert!(bucket.check_space_and_add(&[report(2)], SIZE, ContainerId(1)));
    assert!(bucket.check_space_and_add(&[report(2)], SIZE, ContainerId(2)));
    assert!(!bucket.check_space_and_add(&[report(2)], SIZE, ContainerId(3)));
    assert!(!bucket.contains(ContainerId(3)));
}

// --- an SCM ------------------------------------------------------------------------------

struct Fixture {
    ring: SimulatedRatis,
    clock: ManualClock,
    config: ScmConfig,
    dbs: Vec<Arc<ScmDb>>,
}

impl Fixture {
    /// Pipelines: p1 = [dn1, dn2, dn3], p2 = [dn4].
    fn new() -> Self {
        let config = ScmConfig {
            container_size: SIZE,
            roll_interval_ms: ROLL_MS,
            ..ScmConfig::with_pipelines(vec![
                Pipeline {
                    id: PipelineId(1),
                    nodes: vec![DatanodeId(1), DatanodeId(2), DatanodeId(3)],
                },
                Pipeline {
                    id: PipelineId(2),
                    nodes: vec![DatanodeId(4)],
                },
            ])
        };
        Self {
            ring: SimulatedRatis::new(),
            clock: ManualClock::new(0),
            config,
            dbs: (0..3).map(|_| Arc::new(ScmDb::new())).collect(),
        }
    }

    /// SCM `n` (1-based) started from its database with datanodes 1..=4 of `slots` each.
    fn scm(&self, n: usize, behavior: ScmBehavior, slots: u64) -> StorageContainerManager {
        let scm = StorageContainerManager::new(
            ScmId(n as u64),
            behavior,
            self.config.clone(),
            self.ring.log(),
            Arc::clone(&self.dbs[n - 1]),
            self.clock.shared(),
        )
        .unwrap();
        scm.catch_up();
        for dn in 1..=4 {
            scm.register_datanode(DatanodeId(dn));
            scm.process_node_report(DatanodeId(dn), vec![report(slots)])
                .unwrap();
        }
        scm
    }

    fn lead(&self, scm: &StorageContainerManager) {
        scm.exit_safe_mode();
        scm.notify_leader_changed(self.ring.elect(scm.id()));
        scm.notify_leader_ready();
    }
}

fn pending(scm: &StorageContainerManager, dn: u64) -> Vec<ContainerId> {
    scm.pending(DatanodeId(dn)).unwrap().into_iter().collect()
}

#[test]
fn leader_reserves_on_every_pipeline_node_and_refuses_the_last_slot() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Fixed, 1);
    f.lead(&scm);
    let c1 = scm.allocate_container().unwrap();
    for dn in 1..=3 {
        assert_eq!(pending(&scm, dn), vec![c1]);
    }
    let c2 = scm.allocate_container().unwrap();
    assert_eq!(pending(&scm, 4), vec![c2], "p1 is full, p2 takes it");
    assert_eq!(scm.allocate_container(), Err(ScmError::NoPipelineWithSpace));
    assert_eq!(scm.container(c1).unwrap().state, LifeCycleState::Open);
}

#[test]
fn reservation_rolls_back_when_one_pipeline_node_is_full() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Fixed, 1);
    // dn3 is already full.
    scm.process_node_report(DatanodeId(3), vec![report(0)])
        .unwrap();
    f.lead(&scm);
    let c = scm.allocate_container().unwrap();
    assert_eq!(
        pending(&scm, 1),
        Vec::<ContainerId>::new(),
        "rolled back on dn1"
    );
    assert_eq!(
        pending(&scm, 2),
        Vec::<ContainerId>::new(),
        "rolled back on dn2"
    );
    assert_eq!(pending(&scm, 4), vec![c]);
}

#[test]
fn allocation_is_refused_off_leader_in_safe_mode_and_before_ready() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Fixed, 1);
    assert_eq!(
        scm.allocate_container(),
        Err(ScmError::NotLeader { scm: ScmId(1) })
    );
    scm.notify_leader_changed(f.ring.elect(ScmId(1)));
    assert_eq!(
        scm.allocate_container(),
        Err(ScmError::NotLeader { scm: ScmId(1) }),
        "the RPC check opens at leader-ready"
    );
    scm.notify_leader_ready();
    assert_eq!(scm.allocate_container(), Err(ScmError::InSafeMode));
    scm.exit_safe_mode();
    assert!(scm.allocate_container().is_ok());
}

#[test]
fn re_election_at_a_new_term_rebuilds_and_serves_again() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Fixed, 1);
    scm.exit_safe_mode();
    scm.notify_leader_changed(f.ring.elect(ScmId(1)));
    scm.notify_leader_ready();
    assert!(scm.allocate_container().is_ok());
    // Re-elected at a new term: ready again, but the rebuild of the new term has to run.
    scm.notify_leader_changed(f.ring.elect(ScmId(1)));
    scm.notify_leader_ready();
    assert!(scm.allocate_container().is_ok());
}

#[test]
fn follower_applies_add_container_without_recording_a_slot() {
    let f = Fixture::new();
    let leader = f.scm(1, ScmBehavior::Fixed, 1);
    let follower = f.scm(2, ScmBehavior::Fixed, 1);
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
fn new_leader_rebuilds_slots_of_unwritten_open_containers() {
    let f = Fixture::new();
    let old = f.scm(1, ScmBehavior::Fixed, 1);
    let new = f.scm(2, ScmBehavior::Fixed, 1);
    f.lead(&old);
    let c1 = old.allocate_container().unwrap();
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
    assert_eq!(
        new.allocate_container().map(|_| ()),
        Ok(()),
        "p2 still has room"
    );
    assert_eq!(new.allocate_container(), Err(ScmError::NoPipelineWithSpace));
}

#[test]
fn legacy_new_leader_has_empty_buckets() {
    let f = Fixture::new();
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
    assert_eq!(
        new.container(c2).unwrap().pipeline,
        PipelineId(1),
        "granted again on p1"
    );
}

#[test]
fn rebuild_drops_stale_entries_of_a_returning_leader() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Fixed, 2);
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
        "the reservation is kept (spec B.10)"
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
fn submit_timeout_keeps_the_reservation() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Fixed, 1);
    f.lead(&scm);
    f.ring.inject(SubmitFault::TimeoutAfterCommit);
    match scm.allocate_container() {
        Err(ScmError::SubmitNotConfirmed {
            container,
            reason: SubmitError::Timeout,
        }) => assert_eq!(pending(&scm, 1), vec![container]),
        other => panic!("expected a timeout, got {other:?}"),
    }
    let next = scm.allocate_container().unwrap();
    assert_eq!(
        scm.container(next).unwrap().pipeline,
        PipelineId(2),
        "p1's slots stay reserved"
    );
}

#[test]
fn deposed_leader_submit_is_refused_and_keeps_its_reservation() {
    let f = Fixture::new();
    let old = f.scm(1, ScmBehavior::Fixed, 1);
    f.lead(&old);
    // Another SCM is elected before the old one hears of it.
    f.ring.elect(ScmId(2));
    assert!(matches!(
        old.allocate_container(),
        Err(ScmError::SubmitNotConfirmed {
            reason: SubmitError::NotLeader,
            ..
        })
    ));
    assert_eq!(pending(&old, 1).len(), 1);
    assert_eq!(f.ring.last_index(), 0, "nothing was appended");
}

#[test]
fn restarted_scm_reloads_its_table_and_rebuilds_when_it_leads_again() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Fixed, 1);
    f.lead(&scm);
    let c1 = scm.allocate_container().unwrap();
    drop(scm);
    f.ring.lose_leader();
    let restarted = f.scm(1, ScmBehavior::Fixed, 1);
    assert_eq!(restarted.container(c1).unwrap().state, LifeCycleState::Open);
    assert!(pending(&restarted, 1).is_empty(), "buckets start empty");
    f.lead(&restarted);
    assert_eq!(pending(&restarted, 1), vec![c1]);
}

#[test]
fn lagging_follower_installs_snapshot() {
    let f = Fixture::new();
    let leader = f.scm(1, ScmBehavior::Fixed, 2);
    let follower = f.scm(2, ScmBehavior::Fixed, 2);
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
fn reports_from_unknown_datanodes_and_for_unknown_containers_are_errors() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Fixed, 1);
    f.lead(&scm);
    let c1 = scm.allocate_container().unwrap();
    assert_eq!(
        scm.process_node_report(DatanodeId(9), vec![report(1)]),
        Err(ScmError::UnknownDatanode {
            datanode: DatanodeId(9)
        })
    );
    assert_eq!(
        scm.process_container_report(DatanodeId(9), &[open_replica(c1)]),
        Err(ScmError::UnknownDatanode {
            datanode: DatanodeId(9)
        })
    );
    assert_eq!(
        scm.process_container_report(
            DatanodeId(1),
            &[open_replica(ContainerId(77)), open_replica(c1)]
        ),
        Err(ScmError::UnknownContainers {
            datanode: DatanodeId(1),
            containers: vec![ContainerId(77)]
        })
    );
    assert!(
        pending(&scm, 1).is_empty(),
        "the known container was still applied"
    );
    assert_eq!(
        scm.replicas(c1).into_iter().collect::<Vec<_>>(),
        vec![DatanodeId(1)]
    );
}

#[test]
fn invalid_config_is_refused() {
    let f = Fixture::new();
    let empty = Pipeline {
        id: PipelineId(9),
        nodes: vec![],
    };
    let mut duplicate = f.config.pipelines.clone();
    duplicate.push(f.config.pipelines[0].clone());
    for config in [
        ScmConfig::with_pipelines(vec![empty]),
        ScmConfig::with_pipelines(duplicate),
        ScmConfig {
            container_size: 0,
            ..f.config.clone()
        },
        ScmConfig {
            roll_interval_ms: 0,
            ..f.config.clone()
        },
    ] {
        let result = StorageContainerManager::new(
            ScmId(1),
            ScmBehavior::Fixed,
            config,
            f.ring.log(),
            Arc::new(ScmDb::new()),
            f.clock.shared(),
        );
        assert!(matches!(result, Err(ScmError::InvalidConfig { .. })));
    }
}

#[test]
fn pending_entries_age_out_after_two_roll_intervals_without_a_report() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Fixed, 1);
    f.lead(&scm);
    scm.allocate_container().unwrap();
    f.clock.advance_ms(2 * ROLL_MS);
    assert!(pending(&scm, 1).is_empty(), "aged out, as designed");
}

#[test]
fn newly_bootstrapped_scm_installs_snapshot_and_rebuilds_as_leader() {
    let f = Fixture::new();
    let leader = f.scm(1, ScmBehavior::Fixed, 1);
    f.lead(&leader);
    let c1 = leader.allocate_container().unwrap();
    f.ring.compact();
    // SCM 3 joins with an empty database; the log before it is compacted away.
    let bootstrapped = f.scm(3, ScmBehavior::Fixed, 1);
    assert!(
        bootstrapped.container(c1).is_some(),
        "installed from the snapshot"
    );
    leader.notify_not_leader();
    f.lead(&bootstrapped);
    assert_eq!(pending(&bootstrapped, 1), vec![c1]);
    assert_eq!(
        bootstrapped
            .allocate_container()
            .map(|c| bootstrapped.container(c).unwrap().pipeline),
        Ok(PipelineId(2)),
        "p1's slots stay reserved for c1"
    );
}

/// A datanode's report of an OPEN replica of `container` it just created.
fn open_replica(container: ContainerId) -> ContainerReplicaReport {
    ContainerReplicaReport::new(container, ContainerState::Open)
}
