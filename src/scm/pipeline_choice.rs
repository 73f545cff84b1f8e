//! The pipeline an allocation tries ([`PipelineChooser`]): one OPEN pipeline at random, as
//! `ContainerManagerImpl.allocateContainer` picks `pipelines.get(random.nextInt(size))`
//! (HDDS-16891's reproduction allocates through that admin path). Ozone does not try
//! another pipeline when the chosen one has no room: the allocation fails.
//!
//! Ozone's `java.util.Random` is unseeded; here the draws are SplitMix64 over
//! [`ScmConfig::pipeline_choice_seed`](super::ScmConfig::pipeline_choice_seed) mixed with
//! the SCM's id, so a scenario's run is a function of its seed and its schedule.

use crate::hdds::ids::ScmId;

/// Picks one of the OPEN pipelines at random, from a seed. Not synchronized itself: the
/// SCM keeps it under the `ContainerManager` lock, where Ozone uses its `Random`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PipelineChooser {
    state: u64,
}

impl PipelineChooser {
    /// The chooser of SCM `scm` for `seed`: SCMs of one ring draw differently.
    pub fn new(seed: u64, scm: ScmId) -> Self {
        Self {
            state: seed ^ scm.0.wrapping_mul(0xA076_1D64_78BD_642F),
        }
    }

    /// The index of the pipeline to try among `open` OPEN pipelines; `None` when there is
    /// none (Ozone then creates a pipeline, which is not modelled).
    pub fn choose(&mut self, open: usize) -> Option<usize> {
        let open_u64 = u64::try_from(open).ok().filter(|&n| n > 0)?;
        usize::try_from(self.next_u64() % open_u64).ok()
    }

    /// SplitMix64.
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}
