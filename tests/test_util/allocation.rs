//! Shared setup of the SCM pending-allocation tests (HDDS-16891): small slots, a short roll
//! interval, node reports by slot count, a [`Fixture`] of SCMs over one simulated ring, and
//! allocation helpers for a pipeline chosen at random.

use hadoop_ref::clock::ManualClock;
use hadoop_ref::hdds::container::{ContainerReplicaReport, ContainerState};
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, PipelineId, ScmId};
use hadoop_ref::hdds::report::StorageReport;
use hadoop_ref::scm::ha::ScmDb;
use hadoop_ref::scm::{
    DatanodeDetails, Pipeline, ScmBehavior, ScmConfig, ScmError, StorageContainerManager,
};
use hadoop_ref::sim::ratis::SimulatedRatis;
use hadoop_ref::sync::Arc;

/// Slot size in the tests, in bytes.
pub const SIZE: u64 = 100;
/// Bucket roll interval in the tests.
pub const ROLL_MS: u64 = 1_000;

/// One healthy volume with room for `slots` containers of [`SIZE`] (and half one more).
pub fn report(slots: u64) -> StorageReport {
    StorageReport::new(slots * SIZE + SIZE / 2, 0, 0)
}

/// A datanode's report of an OPEN replica of `container` it just created (its origin is
/// datanode 1: the SCM's allocation reads no origin).
pub fn open_replica(container: ContainerId) -> ContainerReplicaReport {
    ContainerReplicaReport::new(container, ContainerState::Open, DatanodeId(1))
}

/// The pending containers of datanode `dn` on `scm`, ascending.
pub fn pending(scm: &StorageContainerManager, dn: u64) -> Vec<ContainerId> {
    scm.pending(DatanodeId(dn)).unwrap().into_iter().collect()
}

/// `attempts` allocations on `scm` (each tries one pipeline chosen at random): the
/// containers granted, in order.
pub fn grant_all(scm: &StorageContainerManager, attempts: usize) -> Vec<ContainerId> {
    (0..attempts)
        .filter_map(|_| scm.allocate_container().ok())
        .collect()
}

/// Allocates on `scm` until one is granted, at most `attempts` times: the first grant, or
/// the last refusal.
pub fn allocate_within(
    scm: &StorageContainerManager,
    attempts: usize,
) -> Result<ContainerId, ScmError> {
    let mut last = Err(ScmError::NoPipelineWithSpace);
    for _ in 0..attempts {
        last = scm.allocate_container();
        if last.is_ok() {
            break;
        }
    }
    last
}

/// The pipeline `scm`'s table puts `container` on.
pub fn pipeline_of(scm: &StorageContainerManager, container: ContainerId) -> PipelineId {
    scm.container(container).unwrap().pipeline
}

/// A ring, a clock, the settings and three SCM databases; SCMs are started on demand.
pub struct Fixture {
    /// The simulated Ratis ring.
    pub ring: SimulatedRatis,
    /// The clock every SCM reads.
    pub clock: ManualClock,
    /// Slots of [`SIZE`], rolls every [`ROLL_MS`], pipelines p1 = [dn1, dn2, dn3], p2 = [dn4].
    pub config: ScmConfig,
    /// The databases of SCMs 1, 2 and 3.
    pub dbs: Vec<Arc<ScmDb>>,
}

impl Default for Fixture {
    fn default() -> Self {
        Self::new()
    }
}

impl Fixture {
    /// Pipelines: p1 = [dn1, dn2, dn3], p2 = [dn4]; pipeline choice seed 7.
    pub fn new() -> Self {
        let config = ScmConfig {
            container_size: SIZE,
            roll_interval_ms: ROLL_MS,
            pipeline_choice_seed: 7,
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

    /// The fixture with p1 = [dn1, dn2, dn3] alone: every allocation tries p1.
    pub fn p1_only() -> Self {
        let mut fixture = Self::new();
        fixture.config.pipelines.truncate(1);
        fixture
    }

    /// SCM `n` (1-based) started from its database with datanodes 1..=4 of `slots` each.
    pub fn scm(&self, n: usize, behavior: ScmBehavior, slots: u64) -> StorageContainerManager {
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
            scm.register_datanode(&DatanodeDetails::new(DatanodeId(dn)), vec![report(slots)]);
        }
        scm
    }

    /// `scm` leaves safe mode, is elected at a new term and becomes leader-ready: it
    /// serves allocations.
    pub fn lead(&self, scm: &StorageContainerManager) {
        scm.exit_safe_mode();
        scm.notify_leader_changed(self.ring.elect(scm.id()));
        scm.notify_leader_ready();
    }
}
