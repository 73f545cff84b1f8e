//! A `Datanode` on real threads heartbeating real SCMs (`StorageContainerManager` as its
//! endpoint): delete transactions go from the SCM's log to the replicas and come back as
//! acks that empty the log (HDDS-16811's deletions driven by the SCM), and a deposed
//! leader's force delete is fenced on its way from the SCM's queue through the heartbeat,
//! the dispatcher and the controller to the replica (HDDS-17268).

use hadoop_ref::datanode::container::ContainerController;
use hadoop_ref::hdds::command::CommandKind;
use hadoop_ref::hdds::heartbeat::{
    EndpointError, HeartbeatRequest, HeartbeatResponse, ScmEndpoint,
};
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, PipelineId, ScmId};
use hadoop_ref::scm::ha::Snapshot;
use hadoop_ref::scm::{ContainerInfo, LifeCycleState, ScmBehavior, StorageContainerManager};
use hadoop_ref::sync::Arc;
use hadoop_ref::sync::atomic::{AtomicBool, Ordering};

use crate::test_util::allocation::Fixture;
use crate::test_util::datanode::datanode_on_disk;
use crate::test_util::eventually;

const C1: ContainerId = ContainerId(1);
const DN1: DatanodeId = DatanodeId(1);

/// An SCM behind a switch: while cut, it does not answer (a partition, a long pause).
#[derive(Debug)]
struct Cut {
    scm: Arc<StorageContainerManager>,
    cut: AtomicBool,
}

impl ScmEndpoint for Cut {
    fn scm_id(&self) -> ScmId {
        self.scm.id()
    }
    fn get_version(&self, datanode: DatanodeId) -> Result<(), EndpointError> {
        self.answer()?;
        self.scm.get_version(datanode)
    }
    fn register(&self, datanode: DatanodeId) -> Result<(), EndpointError> {
        self.answer()?;
        ScmEndpoint::register(&*self.scm, datanode)
    }
    fn send_heartbeat(
        &self,
        request: HeartbeatRequest,
    ) -> Result<HeartbeatResponse, EndpointError> {
        self.answer()?;
        self.scm.send_heartbeat(request)
    }
}

impl Cut {
    fn answer(&self) -> Result<(), EndpointError> {
        if self.cut.load(Ordering::SeqCst) {
            return Err(EndpointError::Unavailable);
        }
        Ok(())
    }
}

/// SCMs 1..=3 of the fixture, each with container 1 CLOSED in its table, on p2, whose one
/// datanode makes one replica enough.
fn scms_with_closed_container(f: &Fixture) -> Vec<Arc<StorageContainerManager>> {
    let info = ContainerInfo {
        id: C1,
        state: LifeCycleState::Closed,
        pipeline: PipelineId(2),
        sequence_id: 0,
    };
    (1..=3)
        .map(|n| {
            f.dbs[n - 1].install(Snapshot {
                containers: [(C1, info.clone())].into(),
                ..Snapshot::default()
            });
            Arc::new(f.scm(n, ScmBehavior::Hardened, 4))
        })
        .collect()
}

#[test]
fn acknowledged_delete_transactions_leave_the_scm_log_and_their_blocks_go() {
    let f = Fixture::new();
    let scms = scms_with_closed_container(&f);
    f.lead(&scms[0]);
    let dir = tempfile::tempdir().unwrap();
    let endpoints = scms
        .iter()
        .map(|s| Arc::clone(s) as Arc<dyn ScmEndpoint>)
        .collect();
    let dn = datanode_on_disk(dir.path(), endpoints);
    dn.start().unwrap();
    assert!(
        eventually(5_000, || scms[0].replicas(C1).contains(&DN1)),
        "the datanode's container report reaches the SCM"
    );
    scms[0]
        .add_delete_transactions(&[(C1, vec![1])].into())
        .unwrap();
    // The test plays the SCM's service thread: one round per poll.
    assert!(
        eventually(5_000, || {
            scms[0].run_block_deleting_service().unwrap();
            scms[0].deleted_block_log().is_empty()
        }),
        "the datanode's ack completes the transaction"
    );
    assert!(
        eventually(5_000, || dn.replicas().container_report()[0].block_count
            == 1),
        "the datanode's block deleting service deletes the block"
    );
    dn.stop();
    scms[1].catch_up();
    assert!(
        scms[1].deleted_block_log().is_empty(),
        "removed through the log"
    );
}

#[test]
fn a_deposed_scm_leaders_force_delete_is_fenced_end_to_end() {
    // The seed's MC4 through the real SCM: SCM 1 queues a force delete at term 1 and is
    // cut off; SCM 2 leads at term 2; the datanode starts, hears term 2, then SCM 1's
    // queue reaches it.
    let f = Fixture::new();
    let scms = scms_with_closed_container(&f);
    f.lead(&scms[0]);
    let kind = CommandKind::DeleteContainer {
        container: C1,
        force: true,
    };
    scms[0].send_command(DN1, kind).unwrap();
    scms[0].notify_not_leader();
    f.lead(&scms[1]);
    let cut: Vec<_> = scms
        .iter()
        .map(|scm| {
            Arc::new(Cut {
                scm: Arc::clone(scm),
                cut: AtomicBool::new(scm.id() == ScmId(1)),
            })
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let dn = datanode_on_disk(
        dir.path(),
        cut.iter()
            .map(|c| Arc::clone(c) as Arc<dyn ScmEndpoint>)
            .collect(),
    );
    dn.start().unwrap();
    let term = scms[1].context().term;
    assert!(
        eventually(5_000, || dn.context().heartbeat_term_high_water()
            == Some(term)),
        "SCM 2's heartbeat reaches the datanode"
    );
    cut[0].cut.store(false, Ordering::SeqCst);
    assert!(
        eventually(5_000, || scms[0].queued_for(DN1) == 0
            && dn.context().queue_len() == 0
            && dn.context().term_of_leader().is_some()),
        "SCM 1 hands the command out and the processor takes it"
    );
    dn.stop();
    assert!(
        dn.replicas().container(C1).is_ok(),
        "the stale force delete was dropped"
    );
    assert_eq!(dn.context().term_of_leader(), Some(term));
    assert_eq!(dn.stats().executed(), 0);
}
