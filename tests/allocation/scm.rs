//! Allocation on the SCM leader (HDDS-16891) without a checker: reservations on every
//! datanode of a pipeline, refusals off the leader, in safe mode and before leader-ready,
//! unconfirmed submits that keep their reservation, aging out, and every error.

use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, PipelineId, ScmId};
use hadoop_ref::scm::ha::{ScmDb, SubmitError};
use hadoop_ref::scm::{
    LifeCycleState, Pipeline, ScmBehavior, ScmConfig, ScmError, StorageContainerManager,
};
use hadoop_ref::sim::ratis::SubmitFault;
use hadoop_ref::sync::Arc;

use crate::test_util::allocation::{Fixture, ROLL_MS, open_replica, pending, report};

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
fn pending_entries_age_out_after_two_roll_intervals_without_a_report() {
    let f = Fixture::new();
    let scm = f.scm(1, ScmBehavior::Fixed, 1);
    f.lead(&scm);
    scm.allocate_container().unwrap();
    f.clock.advance_ms(2 * ROLL_MS);
    assert!(pending(&scm, 1).is_empty(), "aged out, as designed");
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
