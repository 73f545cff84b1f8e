//! What an SCM runs: the allocation-tracking logic ([`ScmBehavior`]) and its settings
//! ([`ScmConfig`]).

use std::collections::BTreeSet;

use super::container_info::Pipeline;
use super::error::ScmError;

/// Which allocation-tracking logic an SCM runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScmBehavior {
    /// On becoming the serving leader (leader ready and out of safe mode) the SCM drops
    /// every pending entry, records a slot for each OPEN container on each datanode of its
    /// pipeline that has no replica of it, and serves no allocation before that is done.
    Fixed,
    /// The seed's defect: nothing records the slots of containers granted by a previous
    /// leader or incarnation.
    LegacyNoRebuild,
    /// The rebuild runs, but without a gate: the RPC layer's leader check opens when Ratis
    /// marks the division leader-ready, before `SCMStateMachine.notifyLeaderReady` has
    /// `SCMServiceManager` notify the services, so a first allocation can race the rebuild.
    LegacyRebuildWithoutGate,
}

impl ScmBehavior {
    /// Every behavior, the fixed one first.
    pub const ALL: [ScmBehavior; 3] = [
        ScmBehavior::Fixed,
        ScmBehavior::LegacyNoRebuild,
        ScmBehavior::LegacyRebuildWithoutGate,
    ];

    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            ScmBehavior::Fixed => "Fixed",
            ScmBehavior::LegacyNoRebuild => "LegacyNoRebuild",
            ScmBehavior::LegacyRebuildWithoutGate => "LegacyRebuildWithoutGate",
        }
    }
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
        let ids: BTreeSet<_> = self.pipelines.iter().map(|p| p.id).collect();
        if ids.len() != self.pipelines.len() {
            return Err(ScmError::InvalidConfig {
                reason: "pipeline ids must be unique".into(),
            });
        }
        Ok(())
    }
}
