//! The seed's reproduction, MC8 of HDDS-16891, as a sequential scenario: a container
//! granted and not yet written must keep its slots across a leader transfer or an SCM
//! restart.

use super::invariants::{leader_reserves_unwritten_containers, no_datanode_over_granted};
use super::seed::{pipeline, scm_cluster, setup, violation};
use crate::scenarios::Violation;
use crate::scm::{ScmError, ScmFactory};
use crate::sim::scm_cluster::ScmCluster;

/// How leadership is lost in [`failover_keeps_slots_of_unwritten_containers`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScmFailover {
    /// Leadership is transferred to another SCM (the seed's run).
    Transfer,
    /// The leader (the only SCM) restarts and is elected again (not run by the seed).
    RestartSingleScm,
    /// Every SCM restarts; the first is elected again.
    RestartAllScms,
}

/// A container granted before a failover keeps its slots on the new serving leader, so no
/// datanode is granted more than it has room for. The seed's MC8: datanodes of one slot
/// each; the leader grants C1; leadership moves (or the SCM restarts); the new serving
/// leader must hold C1's slots and refuse C2. Both containers are then written: a granted
/// C2 is refused by the datanodes. Runs on one thread.
pub fn failover_keeps_slots_of_unwritten_containers<F: ScmFactory>(
    factory: F,
    failover: ScmFailover,
) -> Result<(), Violation> {
    let scm_count = if failover == ScmFailover::RestartSingleScm {
        1
    } else {
        3
    };
    let cluster = scm_cluster(
        factory,
        scm_count,
        &[1, 1, 1],
        vec![pipeline(1, &[1, 2, 3])],
    )?;
    cluster.elect(0);
    let c1 = cluster.allocate().map_err(setup)?;
    if cluster.allocate() != Err(ScmError::NoPipelineWithSpace) {
        return Err(violation("scenario setup", "a second container fit".into()));
    }
    fail_over(&cluster, failover)?;
    let leader = cluster
        .serving_leader()
        .ok_or_else(|| violation("scenario setup", "no serving leader".into()))?;
    // The seed's two assertions: C1's slots are held, and C2 is refused. The harm (a
    // refused create) is reported first when both fail.
    let reserved = leader_reserves_unwritten_containers(&*leader, cluster.pipelines());
    let granted = cluster.allocate();
    cluster.write_first_block(c1);
    if let Ok(c2) = granted {
        cluster.write_first_block(c2);
    }
    no_datanode_over_granted(cluster.datanodes())?;
    reserved
}

fn fail_over<F: ScmFactory>(
    cluster: &ScmCluster<F>,
    failover: ScmFailover,
) -> Result<(), Violation> {
    match failover {
        ScmFailover::Transfer => cluster.elect(1),
        ScmFailover::RestartSingleScm => {
            cluster.restart_scm(0).map_err(setup)?;
            cluster.elect(0);
        }
        ScmFailover::RestartAllScms => {
            for index in 0..cluster.scm_count() {
                cluster.restart_scm(index).map_err(setup)?;
            }
            cluster.elect(0);
        }
    }
    Ok(())
}
