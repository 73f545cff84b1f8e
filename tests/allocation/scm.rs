//! Allocation on the SCM leader (HDDS-16891) without a checker: one random OPEN pipeline
//! per allocation, reservations on every datanode of it, refusals off the leader, in safe
//! mode and before leader-ready, unconfirmed submits that keep their reservation, aging
//! out, and every error.

use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, PipelineId, ScmId};
use hadoop_ref::scm::ha::{ScmDb, SubmitError};
use hadoop_ref::scm::pipeline_choice::PipelineChooser;
use hadoop_ref::scm::{
    LifeCycleState, Pipeline, ScmBehavior, ScmConfig, ScmError, StorageContainerManager,
};
use hadoop_ref::sim::ratis::SubmitFault;
use hadoop_ref::sync::Arc;

use crate::test_util::allocation::{
    Fixture, ROLL_MS, grant_all, open_replica, pending, pipeline_of, report,
};

#[test]
fn leader_reserves_on_every_pipeline_node_until_no_slot_is_left() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Hardened, 1);
    f.lead(&scm);
    let granted = grant_all(&scm, 32);
    assert_eq!(
        granted.len(),
        2,
        "one slot per datanode: one container per pipeline"
    );
    let (on_p1, on_p2): (Vec<_>, Vec<_>) = granted
        .iter()
        .partition(|&&c| pipeline_of(&scm, c) == PipelineId(1));
    for dn in 1..=3 {
        assert_eq!(pending(&scm, dn), on_p1);
    }
    assert_eq!(pending(&scm, 4), on_p2);
    assert_eq!(scm.allocate_container(), Err(ScmError::NoPipelineWithSpace));
    assert_eq!(
        scm.container(granted[0]).unwrap().state,
        LifeCycleState::Open
    );
}

#[test]
fn allocation_tries_one_random_pipeline_and_never_falls_back() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Hardened, 8);
    // p1 has no room (dn1 is full); p2 has room for eight containers.
    scm.process_node_report(DatanodeId(1), vec![report(0)])
        .unwrap();
    f.lead(&scm);
    let results: Vec<_> = (0..8).map(|_| scm.allocate_container()).collect();
    let granted: Vec<ContainerId> = results.iter().filter_map(|r| r.clone().ok()).collect();
    assert!(
        granted
            .iter()
            .all(|&c| pipeline_of(&scm, c) == PipelineId(2)),
        "only p2 has room"
    );
    assert!(
        results.contains(&Err(ScmError::NoPipelineWithSpace)),
        "an allocation that chose p1 fails although p2 has room: {results:?}"
    );
    assert!(!granted.is_empty(), "an allocation that chose p2 succeeds");
    assert_eq!(pending(&scm, 4), granted);
}

#[test]
fn pipeline_choice_is_a_function_of_the_seed_and_the_scm() {
    let draws = |seed, scm| {
        let mut chooser = PipelineChooser::new(seed, ScmId(scm));
        (0..32)
            .map(|_| chooser.choose(3).unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        draws(7, 1),
        draws(7, 1),
        "same seed, same SCM: same choices"
    );
    assert_ne!(draws(7, 1), draws(7, 2), "another SCM draws differently");
    assert_ne!(draws(7, 1), draws(8, 1), "another seed draws differently");
    assert!(
        (0..3).all(|p| draws(7, 1).contains(&p)),
        "every pipeline is chosen"
    );
    let mut chooser = PipelineChooser::new(7, ScmId(1));
    assert_eq!(chooser.choose(0), None, "no OPEN pipeline");
    assert_eq!(chooser.choose(1), Some(0));
}

#[test]
fn reservation_rolls_back_when_one_pipeline_node_is_full() {
    let f = Fixture::p1_only();
    let scm = f.scm(1, ScmBehavior::Hardened, 1);
    // dn3 is already full.
    scm.process_node_report(DatanodeId(3), vec![report(0)])
        .unwrap();
    f.lead(&scm);
    assert_eq!(scm.allocate_container(), Err(ScmError::NoPipelineWithSpace));
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
}

#[test]
fn allocation_is_refused_off_leader_in_safe_mode_and_before_ready() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Hardened, 1);
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
fn submit_timeout_keeps_the_reservation() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Hardened, 1);
    f.lead(&scm);
    f.ring.inject(SubmitFault::TimeoutAfterCommit);
    let timed_out = match scm.allocate_container() {
        Err(ScmError::SubmitNotConfirmed {
            container,
            reason: SubmitError::Timeout,
        }) => container,
        other => panic!("expected a timeout, got {other:?}"),
    };
    scm.catch_up();
    let reserved_on = pipeline_of(&scm, timed_out);
    let nodes = &f
        .config
        .pipelines
        .iter()
        .find(|p| p.id == reserved_on)
        .unwrap()
        .nodes;
    for dn in nodes {
        assert_eq!(pending(&scm, dn.0), vec![timed_out]);
    }
    let granted = grant_all(&scm, 32);
    assert_eq!(granted.len(), 1, "the other pipeline's slot");
    assert_ne!(
        pipeline_of(&scm, granted[0]),
        reserved_on,
        "the timed-out container's slots stay reserved"
    );
}

#[test]
fn deposed_leader_submit_is_refused_and_keeps_its_reservation() {
    let f = Fixture::p1_only();
    let old = f.scm(1, ScmBehavior::Hardened, 1);
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
fn pending_entries_age_out_after_two_roll_intervals_without_a_report() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Hardened, 1);
    f.lead(&scm);
    scm.allocate_container().unwrap();
    f.clock.advance_ms(2 * ROLL_MS);
    assert!(pending(&scm, 1).is_empty(), "aged out, as designed");
}

#[test]
fn reports_from_unknown_datanodes_and_for_unknown_containers_are_errors() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Hardened, 1);
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
            ScmBehavior::Hardened,
            config,
            f.ring.log(),
            Arc::new(ScmDb::new()),
            f.clock.shared(),
        );
        assert!(matches!(result, Err(ScmError::InvalidConfig { .. })));
    }
}

/// The rebuild runs once per term (`rebuilt_for_term`): a later status change in the same
/// term (here safe mode reported exited again) must not rebuild, which would drop the
/// reservation of a submit whose outcome is unknown and whose entry this SCM has not
/// applied yet (the seed's patch rebuilds from its table without applying the log first).
#[test]
fn second_status_change_in_a_term_keeps_unconfirmed_reservations() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::SeedPatch, 1);
    f.lead(&scm);
    f.ring.inject(SubmitFault::TimeoutAfterCommit);
    let timed_out = match scm.allocate_container() {
        Err(ScmError::SubmitNotConfirmed { container, .. }) => container,
        other => panic!("expected a timeout, got {other:?}"),
    };
    let reserved = |scm: &StorageContainerManager| {
        (1..=4)
            .filter(|&dn| pending(scm, dn) == vec![timed_out])
            .count()
    };
    let before = reserved(&scm);
    assert!(before > 0, "the unconfirmed submit keeps its slots");
    scm.exit_safe_mode();
    assert_eq!(reserved(&scm), before, "no second rebuild in the term");
}

/// `notifyNotLeader`: an SCM that loses leadership stops serving at once. The RPC check
/// refuses allocation as not leader, rather than reserving slots and submitting to a log
/// that would refuse it.
#[test]
fn stepping_down_stops_allocation_at_once() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::SeedPatch, 8);
    f.lead(&scm);
    assert!(scm.allocate_container().is_ok());
    f.ring.elect(ScmId(2));
    scm.notify_not_leader();
    assert!(!scm.context().is_serving());
    assert_eq!(
        scm.allocate_container(),
        Err(ScmError::NotLeader { scm: ScmId(1) })
    );
    assert!(
        (1..=4).all(|dn| pending(&scm, dn).len() <= 1),
        "the refused allocation reserved nothing"
    );
}

/// Every rebuilding behavior rebuilds when its SCM leads again in a new term: the
/// reservation of a submit the log refused (its container is in no table) goes, and the
/// rebuild reports the slots it recorded, one per datanode of each unwritten container.
#[test]
fn leading_again_rebuilds_and_drops_a_refused_submits_reservation() {
    for behavior in [
        ScmBehavior::Hardened,
        ScmBehavior::SeedPatch,
        ScmBehavior::LegacyRebuildWithoutGate,
    ] {
        let f = Fixture::p1_only();
        let scm = f.scm(1, behavior, 2);
        f.lead(&scm);
        let written = scm.allocate_container().expect("a slot on p1");
        f.ring.elect(ScmId(2));
        assert!(scm.allocate_container().is_err(), "the log refuses it");
        assert_eq!(pending(&scm, 1).len(), 2, "{behavior:?}: both reserved");
        scm.notify_not_leader();
        scm.notify_leader_changed(f.ring.elect(ScmId(1)));
        scm.notify_leader_ready();
        assert_eq!(pending(&scm, 1), vec![written], "{behavior:?}");
        assert_eq!(scm.rebuild_pending_allocations(), 3, "{behavior:?}");
    }
}
