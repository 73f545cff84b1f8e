//! The invariants the allocation scenarios check: the seed's harm (a datanode granted more
//! containers than it has room for) and the state that prevents it (the serving leader
//! holds a slot for every granted container not yet written).

use super::seed::{setup, violation};
use crate::scenarios::Violation;
use crate::scm::{LifeCycleState, PendingContainerTrackerApi, Pipeline};
use crate::sim::slot_datanode::SlotDatanode;

/// The property [`leader_reserves_unwritten_containers`] checks.
pub const LEADER_RESERVES: &str = "serving leader reserves every granted unwritten container";

/// The property [`no_datanode_over_granted`] checks.
pub const NO_OVER_GRANT: &str = "no datanode granted more containers than it has slots";

/// The seed's harm: no datanode is ever granted more containers than it has slots, seen as
/// no create refused for lack of space.
pub fn no_datanode_over_granted(datanodes: &[SlotDatanode]) -> Result<(), Violation> {
    match datanodes.iter().find(|d| !d.refused().is_empty()) {
        Some(datanode) => Err(violation(
            NO_OVER_GRANT,
            format!(
                "{} refused {:?} for lack of space (slots {}, holds {:?})",
                datanode.id(),
                datanode.refused(),
                datanode.slots(),
                datanode.created()
            ),
        )),
        None => Ok(()),
    }
}

/// The serving leader reserves every granted unwritten container: each OPEN container is
/// pending in the `PendingContainerTracker` of each datanode of its pipeline (one of
/// `pipelines`) that has not reported a replica of it. Checked at quiescence, within one
/// roll interval of the grants (entries age out of a `TwoWindowBucket` after that by
/// design).
pub fn leader_reserves_unwritten_containers<S: PendingContainerTrackerApi + ?Sized>(
    leader: &S,
    pipelines: &[Pipeline],
) -> Result<(), Violation> {
    for info in leader.containers() {
        if info.state != LifeCycleState::Open {
            continue;
        }
        let Some(pipeline) = pipelines.iter().find(|p| p.id == info.pipeline) else {
            continue;
        };
        let replicas = leader.replicas(info.id);
        for &datanode in pipeline.nodes.iter().filter(|d| !replicas.contains(d)) {
            let pending = leader.pending(datanode).map_err(setup)?;
            if !pending.contains(&info.id) {
                return Err(violation(
                    LEADER_RESERVES,
                    format!(
                        "{} leads but holds no slot for unwritten {} on {datanode} (pending {pending:?})",
                        leader.id(),
                        info.id
                    ),
                ));
            }
        }
    }
    Ok(())
}
