//! The datanode's threads (HDDS-17268) without a checker: the production driver
//! (`Datanode`: one heartbeat thread per SCM and the command processor) drops
//! a deposed leader's force delete after a restart, runs the current leader's commands,
//! and stops cleanly.

use hadoop_ref::clock::ManualClock;
use hadoop_ref::datanode::daemon::Datanode;
use hadoop_ref::hdds::command::CommandKind;
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, PipelineId, ScmId};
use hadoop_ref::sim::scm_endpoint::InProcessScm;

use crate::test_util::eventually;
use crate::test_util::term_fencing::{START_MS, fast_heartbeat_config, volume_with_container_1};

#[test]
fn daemon_drops_stale_leader_force_delete_after_restart() {
    // The seed's MC4 on real threads: A (term 1) holds a force delete, B leads at term 2,
    // the datanode restarts. A is paused until B's term has reached the datanode.
    let scms: Vec<_> = (1..=3).map(|i| InProcessScm::new(ScmId(i))).collect();
    let clock = ManualClock::new(START_MS);
    let volume = volume_with_container_1(ContainerState::Closed);
    let dn = Datanode::new(
        DatanodeId(1),
        fast_heartbeat_config(),
        scms.iter().map(InProcessScm::endpoint).collect(),
        volume.shared(),
        None,
        clock.shared(),
    )
    .unwrap();
    scms[0].become_leader(1);
    scms[0].pause();
    scms[0]
        .queue_command(
            DatanodeId(1),
            CommandKind::DeleteContainer {
                container: ContainerId(1),
                force: true,
            },
            0,
        )
        .unwrap();
    scms[0].step_down();
    scms[1].become_leader(2);
    dn.restart().unwrap();
    assert!(
        eventually(5_000, || dn.context().heartbeat_term_high_water()
            == Some(2)),
        "B's heartbeat reaches the datanode"
    );
    scms[0].resume();
    assert!(
        eventually(5_000, || scms[0].queued_for(DatanodeId(1)) == 0
            && dn.context().queue_len() == 0
            && dn.context().term_of_leader().is_some()),
        "A hands the command out and the processor takes it"
    );
    dn.stop();
    assert!(
        dn.replicas().container(ContainerId(1)).is_ok() && volume.store(ContainerId(1)).is_some(),
        "the stale delete was dropped"
    );
    assert_eq!(dn.context().term_of_leader(), Some(2));
    assert_eq!(dn.stats().executed(), 0);
}

#[test]
fn daemon_runs_current_leader_commands_and_stops_cleanly() {
    let scm = InProcessScm::new(ScmId(1));
    scm.become_leader(4);
    let volume = volume_with_container_1(ContainerState::Open);
    let dn = Datanode::new(
        DatanodeId(1),
        fast_heartbeat_config(),
        vec![scm.endpoint()],
        volume.shared(),
        None,
        ManualClock::new(START_MS).shared(),
    )
    .unwrap();
    dn.start().unwrap();
    dn.start().unwrap();
    scm.queue_command(
        DatanodeId(1),
        CommandKind::CloseContainer {
            container: ContainerId(1),
            pipeline: PipelineId(1),
            force: false,
        },
        0,
    )
    .unwrap();
    assert!(eventually(5_000, || dn.stats().executed() == 1));
    dn.stop();
    dn.stop();
    assert_eq!(
        dn.replicas().container(ContainerId(1)).unwrap().state(),
        ContainerState::Closed
    );
}
