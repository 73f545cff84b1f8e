//! What every allocation scenario shares: the seed key its violations name, the size and
//! start time of its clusters, their pipelines, and the mapping of a setup error into a
//! [`Violation`].

use crate::clock::ManualClock;
use crate::hdds::ids::{DatanodeId, PipelineId};
use crate::scenarios::Violation;
use crate::scm::{Pipeline, ScmConfig, ScmError, ScmFactory, ScmHardening};
use crate::sim::scm_cluster::ScmCluster;

/// The seed every violation of these scenarios names.
pub const SEED_KEY: &str = "HDDS-16891";

/// Where the scenarios' clocks start.
pub const SCENARIO_START_MS: u64 = 1_700_000_000_000;

/// Slot size in the scenarios (300 GiB, as in the seed's reproduction).
pub const CONTAINER_SIZE: u64 = 300 << 30;

/// A violation of `property` of HDDS-16891.
pub(super) fn violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: SEED_KEY,
        property,
        detail,
    }
}

/// An SCM error while a scenario sets up its cluster: the scenario itself is broken.
pub(super) fn setup(error: ScmError) -> Violation {
    violation("scenario setup", error.to_string())
}

/// Pipeline `id` over the datanodes `nodes`.
pub(super) fn pipeline(id: u64, nodes: &[u64]) -> Pipeline {
    Pipeline {
        id: PipelineId(id),
        nodes: nodes.iter().map(|&n| DatanodeId(n)).collect(),
    }
}

/// Ozone's settings with the scenarios' slot size, the given pipelines, `hardening` for
/// `ScmBehavior::Hardened`, and pipeline choice seed `seed`.
pub(super) fn scenario_config(
    pipelines: Vec<Pipeline>,
    hardening: ScmHardening,
    seed: u64,
) -> ScmConfig {
    ScmConfig {
        container_size: CONTAINER_SIZE,
        pipeline_choice_seed: seed,
        hardening,
        ..ScmConfig::with_pipelines(pipelines)
    }
}

/// A cluster of `scm_count` SCMs started by `factory` on a clock at
/// [`SCENARIO_START_MS`], datanodes of the given slots (ids 1..), the given pipelines,
/// every hardening switch on, pipeline choice seed 0; no leader yet.
pub(super) fn scm_cluster<F: ScmFactory>(
    factory: F,
    scm_count: u64,
    datanode_slots: &[u64],
    pipelines: Vec<Pipeline>,
) -> Result<ScmCluster<F>, Violation> {
    let config = scenario_config(pipelines, ScmHardening::ALL, 0);
    scm_cluster_with(factory, config, scm_count, datanode_slots)
}

/// [`scm_cluster`] with the given settings.
pub(super) fn scm_cluster_with<F: ScmFactory>(
    factory: F,
    config: ScmConfig,
    scm_count: u64,
    datanode_slots: &[u64],
) -> Result<ScmCluster<F>, Violation> {
    let clock = ManualClock::new(SCENARIO_START_MS);
    ScmCluster::new(factory, clock, config, scm_count, datanode_slots).map_err(setup)
}
