//! The Storage Container Manager's pending container allocations (HDDS-16891).
//!
//! - [`pending`]: the per-datanode `TwoWindowBucket` and the slot arithmetic.
//! - [`node`]: registered datanodes (`DatanodeInfo`) and the `PendingContainerTracker`.
//! - [`ha`]: the replicated log as an SCM sees it, and a small in-process simulation of it.
//! - [`container_manager`]: the SCM itself: allocation on the leader, the replicated
//!   add-container, container reports, leadership and safe mode, and the fix: the rebuild
//!   of the buckets with an allocation gate.

pub mod container_manager;
pub mod ha;
pub mod node;
pub mod pending;

use crate::ids::{ContainerId, DatanodeId, PipelineId, ScmId};

pub use crate::datanode::Term;
pub use container_manager::StorageContainerManager;

/// Which allocation-tracking logic an SCM runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Behavior {
    /// On becoming the serving leader (leader ready and out of safe mode) the SCM drops
    /// every pending entry, records a slot for each OPEN container on each datanode of its
    /// pipeline that has no replica of it, and serves no allocation before that is done.
    Fixed,
    /// The seed's defect: nothing records the slots of containers granted by a previous
    /// leader or incarnation.
    LegacyNoRebuild,
    /// The rebuild runs, but without a gate: the RPC layer's leader check opens before the
    /// services are notified (spec B.4), so a first allocation can race the rebuild.
    LegacyRebuildWithoutGate,
}

impl Behavior {
    /// Every behavior, the fixed one first.
    pub const ALL: [Behavior; 3] = [
        Behavior::Fixed,
        Behavior::LegacyNoRebuild,
        Behavior::LegacyRebuildWithoutGate,
    ];

    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            Behavior::Fixed => "Fixed",
            Behavior::LegacyNoRebuild => "LegacyNoRebuild",
            Behavior::LegacyRebuildWithoutGate => "LegacyRebuildWithoutGate",
        }
    }
}

/// A write pipeline: the datanodes a container's replicas go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    /// Its id.
    pub id: PipelineId,
    /// Its datanodes, in order.
    pub nodes: Vec<DatanodeId>,
}

/// Lifecycle of a container in SCM (the states used here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LifeCycleState {
    /// Accepting writes.
    Open,
    /// Closed.
    Closed,
}

/// A container as the replicated container table holds it (`ContainerInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerInfo {
    /// Its id.
    pub id: ContainerId,
    /// Its state.
    pub state: LifeCycleState,
    /// The pipeline it was allocated on.
    pub pipeline: PipelineId,
}

/// Settings of an SCM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScmConfig {
    /// Slot size in bytes (`ozone.scm.container.size`, default 5 GB).
    pub container_size: u64,
    /// Bucket roll interval (`ozone.scm.pending.container.roll.interval`, default 5 min).
    pub roll_interval_ms: u64,
    /// The open pipelines allocation chooses from, in order of preference.
    pub pipelines: Vec<Pipeline>,
}

impl ScmConfig {
    /// Ozone's defaults with the given pipelines.
    pub fn with_pipelines(pipelines: Vec<Pipeline>) -> Self {
        Self {
            container_size: 5 * 1024 * 1024 * 1024,
            roll_interval_ms: 5 * 60 * 1000,
            pipelines,
        }
    }

    /// Checks the values: a zero container size or roll interval, a pipeline without
    /// datanodes, or two pipelines with one id is an error.
    pub fn validate(&self) -> Result<(), ScmError> {
        if self.container_size == 0 {
            return Err(ScmError::InvalidConfig {
                reason: "container_size must be at least 1 byte".into(),
            });
        }
        if self.roll_interval_ms == 0 {
            return Err(ScmError::InvalidConfig {
                reason: "roll_interval_ms must be at least 1".into(),
            });
        }
        if let Some(empty) = self.pipelines.iter().find(|p| p.nodes.is_empty()) {
            return Err(ScmError::InvalidConfig {
                reason: format!("pipeline {} has no datanode", empty.id),
            });
        }
        let ids: std::collections::BTreeSet<_> = self.pipelines.iter().map(|p| p.id).collect();
        if ids.len() != self.pipelines.len() {
            return Err(ScmError::InvalidConfig {
                reason: "pipeline ids must be unique".into(),
            });
        }
        Ok(())
    }
}

/// Why an SCM refused a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScmError {
    /// Only the leader (whose Ratis division is leader-ready) serves allocations.
    #[error("{scm} is not the leader")]
    NotLeader {
        /// The SCM asked.
        scm: ScmId,
    },
    /// Allocation is refused in safe mode (`SAFE_MODE_EXCEPTION`).
    #[error("SCM is in safe mode")]
    InSafeMode,
    /// The leader has not finished rebuilding its pending allocations for this term.
    #[error("SCM leader is not ready: pending allocations are being rebuilt")]
    NotReady,
    /// No open pipeline has a slot on all its datanodes (`FAILED_TO_ALLOCATE_CONTAINER`).
    #[error("no suitable open pipeline with enough space")]
    NoPipelineWithSpace,
    /// The replicated add-container did not report success; the reservation is kept
    /// because the entry may still commit (spec B.10).
    #[error("replicated add of {container} not confirmed: {reason}")]
    SubmitNotConfirmed {
        /// The container.
        container: ContainerId,
        /// What the log answered.
        reason: ha::SubmitError,
    },
    /// A report or request from a datanode that is not registered.
    #[error("datanode {datanode} is not registered")]
    UnknownDatanode {
        /// The datanode.
        datanode: DatanodeId,
    },
    /// A container report naming containers SCM does not know; the known ones were applied.
    #[error("report from {datanode} names unknown containers {containers:?}")]
    UnknownContainers {
        /// The reporting datanode.
        datanode: DatanodeId,
        /// The unknown containers.
        containers: Vec<ContainerId>,
    },
    /// A configuration value out of its range.
    #[error("invalid configuration: {reason}")]
    InvalidConfig {
        /// Which value and why.
        reason: String,
    },
}
