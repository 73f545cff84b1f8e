//! What the serving leader's pending slots hold, beside the seed's failover: an unreported
//! container a former leader closed, a reservation that fails part way, replicas already
//! reported, and a grant never written.
//!
//! **The race.** The pending buckets are the only footprint of a granted container until
//! its datanodes report it. A rebuild that skips a CLOSING container whose replicas are
//! written but unreported grants their room again; a slot kept for a reported replica, or
//! for a grant that failed part way, is room counted twice and refused for nothing.
//!
//! **The fix.** The hardened rebuild reserves each container its datanodes have not
//! reported, whatever its state (`ScmHardening::rebuild_reserves_unreported_replicas`);
//! `PendingContainerTracker` undoes a partial reservation, a container report removes the
//! entry, and `TwoWindowBucket.rollIfNeeded` drops what two roll intervals left unwritten.

use super::invariants::{leader_reserves_unwritten_containers, no_datanode_over_granted};
use super::seed::{pipeline, scm_cluster, setup, violation};
use crate::scenarios::Violation;
use crate::scm::{PendingContainerTrackerApi, ScmConfig, ScmError, ScmFactory};
use crate::sim::scm_cluster::ScmCluster;

/// The property [`leader_reserves_only_unwritten_grants`] checks.
pub const RESERVES_ONLY_UNWRITTEN: &str =
    "serving leader reserves only granted containers its datanodes have not reported";

/// The property [`pending_slots_are_the_unwritten_grants`] checks last.
pub const UNWRITTEN_GRANT_AGES_OUT: &str =
    "a pending slot is dropped two roll intervals after the bucket's last roll";

/// **The serving leader reserves only granted, unreported containers**: every pending
/// entry on a datanode is a container of the table that datanode has not reported.
pub fn leader_reserves_only_unwritten_grants<S: PendingContainerTrackerApi + ?Sized>(
    leader: &S,
    datanodes: &[crate::hdds::ids::DatanodeId],
) -> Result<(), Violation> {
    let granted: Vec<_> = leader.containers().iter().map(|info| info.id).collect();
    for &datanode in datanodes {
        for container in leader.pending(datanode).map_err(setup)? {
            let reported = leader.replicas(container).contains(&datanode);
            if !granted.contains(&container) || reported {
                let why = if reported {
                    "already reported"
                } else {
                    "never granted"
                };
                return Err(violation(
                    RESERVES_ONLY_UNWRITTEN,
                    format!(
                        "{} holds a slot for {container} on {datanode} ({why})",
                        leader.id()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// **No datanode granted more containers than it has slots**, the seed's harm, after a
/// transfer that follows a close: datanodes of one slot each; the leader grants C1, its
/// datanodes create it but their reports have not reached any SCM, and the leader closes
/// it (CLOSING). Leadership moves; the new serving leader must hold C1's slot and refuse
/// C2 (a granted C2 is then written and refused by the datanodes). The seed's rebuild
/// reserves OPEN containers only. One thread.
pub fn unreported_closing_container_keeps_its_slot<F: ScmFactory>(
    factory: F,
) -> Result<(), Violation> {
    let cluster = scm_cluster(factory, 3, &[1, 1, 1], vec![pipeline(1, &[1, 2, 3])])?;
    cluster.elect(0);
    let c1 = cluster.allocate().map_err(setup)?;
    for datanode in cluster.datanodes() {
        datanode.create_on_first_write(c1);
    }
    cluster.close_container(c1);
    cluster.elect(1);
    if let Ok(c2) = cluster.allocate() {
        cluster.write_first_block(c2);
    }
    no_datanode_over_granted(cluster.datanodes())
}

/// **The serving leader reserves only granted, unreported containers**, the seed's
/// property, and **a pending slot is dropped two roll intervals after the last roll**, on
/// one thread: datanodes of 3 and 2 slots on one pipeline; the leader grants C1, which is
/// written and reported, then C2, and a third grant fails on the full datanode after the
/// first reserved it. Leadership moves, and the new leader's rebuild must reserve C2 and
/// not C1. C2 is never written: exactly two roll intervals later its slots are free, and
/// the leader grants them again.
pub fn pending_slots_are_the_unwritten_grants<F: ScmFactory>(factory: F) -> Result<(), Violation> {
    let cluster = scm_cluster(factory, 3, &[3, 2], vec![pipeline(1, &[1, 2])])?;
    let datanodes: Vec<_> = cluster.datanodes().iter().map(|d| d.id()).collect();
    cluster.elect(0);
    let c1 = cluster.allocate().map_err(setup)?;
    cluster.write_first_block(c1);
    cluster.allocate().map_err(setup)?;
    if cluster.allocate() != Err(ScmError::NoPipelineWithSpace) {
        return Err(violation("scenario setup", "a third container fit".into()));
    }
    leader_reserves_only_unwritten_grants(&*serving(&cluster)?, &datanodes)?;
    cluster.elect(1);
    let leader = serving(&cluster)?;
    leader_reserves_unwritten_containers(&*leader, cluster.pipelines())?;
    leader_reserves_only_unwritten_grants(&*leader, &datanodes)?;
    let roll_interval_ms = ScmConfig::with_pipelines(Vec::new()).roll_interval_ms;
    cluster.clock().advance_ms(2 * roll_interval_ms);
    // Exactly two intervals since the buckets' last roll: C2's slots are free again.
    cluster.allocate().map(|_| ()).map_err(|error| {
        violation(
            UNWRITTEN_GRANT_AGES_OUT,
            format!(
                "{} refuses a container once C2's slots aged out: {error}",
                leader.id()
            ),
        )
    })
}

fn serving<F: ScmFactory>(cluster: &ScmCluster<F>) -> Result<crate::sync::Arc<F::Scm>, Violation> {
    cluster
        .serving_leader()
        .ok_or_else(|| violation("scenario setup", "no serving leader".into()))
}
