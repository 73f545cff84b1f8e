//! What the cluster scenarios share: their set-up failure, their round count, and the
//! thread that ticks one datanode.

use super::invariants::SEED_KEY;
use crate::scenarios::Violation;
use crate::sim::mini_cluster::{ClusterError, MiniOzoneCluster};

/// Rounds each datanode thread and each driver thread run before the cluster settles.
pub(super) const ROUNDS: usize = 4;

/// A cluster problem that is no property's violation (the set-up failed).
pub(super) fn setup(error: ClusterError) -> Violation {
    Violation {
        seed: SEED_KEY,
        property: "scenario setup",
        detail: error.to_string(),
    }
}

/// A datanode's thread: [`ROUNDS`] ticks of the datanode at `index`, except that at round
/// `restart_at` the process restarts from its volume instead (its own thread does it, as
/// a real restart stops every thread of the process first).
pub(super) fn tick_datanode(
    cluster: &MiniOzoneCluster,
    index: usize,
    restart_at: Option<usize>,
) -> Result<Vec<()>, Violation> {
    let datanode = cluster.datanode(index).map_err(setup)?;
    for round in 0..ROUNDS {
        if restart_at == Some(round) {
            cluster.restart_datanode(index).map_err(setup)?;
        } else {
            datanode.tick().map_err(|e| setup(e.into()))?;
        }
    }
    Ok(Vec::new())
}
