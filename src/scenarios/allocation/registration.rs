//! A datanode that registers again with changed details, for HDDS-16891 (beyond the seed).
//!
//! **The race.** Ozone gives a registered datanode that registers again with a changed
//! address, software version or port set a fresh `DatanodeInfo` (`SCMNodeManager.register`,
//! `NodeStateManager.updateNode`), and with it an empty bucket: the leader forgets the slots
//! of its granted, unwritten containers there and grants them again. The seed's rebuild
//! runs only when an SCM becomes the serving leader, so `SeedPatch` keeps the gap.
//!
//! **The fix.** `ScmHardening::keep_space_on_reregistration`: the new `DatanodeInfo`
//! takes over the old one's bucket object, so the entries survive, and an allocation that
//! resolved the old `DatanodeInfo` just before the replacement still records into it.
//!
//! - [`reregistration_keeps_unwritten_slots`]: sequential, every datanode of the pipeline
//!   registers again (a rolling upgrade, pods moved to new addresses, a port change).
//! - [`reregistration_during_allocation_keeps_the_slot`]: the re-registration races an
//!   allocation and the first write of a granted container; three spawned threads, for
//!   loom.

use super::invariants::{leader_reserves_unwritten_containers, no_datanode_over_granted};
use super::seed::{pipeline, scenario_config, scm_cluster_with, setup, violation};
use crate::hdds::ids::ContainerId;
use crate::scenarios::{Violation, join_all};
use crate::scm::{RegistrationChange, ScmError, ScmFactory, ScmHardening};
use crate::sim::scm_cluster::ScmCluster;
use crate::sync::{Arc, thread};

/// A container granted before its datanodes register again with changed details keeps its
/// slots on the serving leader, so no datanode is granted more than it has room for. Three
/// SCMs, datanodes of one slot each on one pipeline; the leader grants C1; every datanode
/// registers again with `change` and heartbeats its node report; the leader must hold C1's
/// slots and refuse C2. Both containers are then written: a granted C2 is refused by the
/// datanodes. Runs on one thread.
pub fn reregistration_keeps_unwritten_slots<F: ScmFactory>(
    factory: F,
    change: RegistrationChange,
) -> Result<(), Violation> {
    reregistration_keeps_unwritten_slots_with(factory, ScmHardening::ALL, change)
}

/// [`reregistration_keeps_unwritten_slots`] with the given switches of
/// `ScmBehavior::Hardened`.
pub fn reregistration_keeps_unwritten_slots_with<F: ScmFactory>(
    factory: F,
    hardening: ScmHardening,
    change: RegistrationChange,
) -> Result<(), Violation> {
    let config = scenario_config(vec![pipeline(1, &[1, 2, 3])], hardening, 0);
    let cluster = scm_cluster_with(factory, config, 3, &[1, 1, 1])?;
    cluster.elect(0);
    let c1 = cluster.allocate().map_err(setup)?;
    if cluster.allocate() != Err(ScmError::NoPipelineWithSpace) {
        return Err(violation("scenario setup", "a second container fit".into()));
    }
    for index in 0..cluster.datanodes().len() {
        cluster.reregister(index, change);
        cluster.heartbeat(index);
    }
    let leader = cluster
        .serving_leader()
        .ok_or_else(|| violation("scenario setup", "no serving leader".into()))?;
    let reserved = leader_reserves_unwritten_containers(&*leader, cluster.pipelines());
    let granted = cluster.allocate();
    write_all(&cluster, [Ok(c1), granted]);
    no_datanode_over_granted(cluster.datanodes())?;
    reserved
}

/// A datanode that registers again while an allocation checks its space and its granted
/// container C1 is written still counts C1, as pending or as committed, so the allocation
/// cannot take C1's slot. One SCM, serving, one datanode with one slot held by C1; three
/// spawned threads: a client allocates, the datanode registers again with a new address
/// (and heartbeats), the writer writes C1 (node report, then container report). Checks
/// [`no_datanode_over_granted`] and [`leader_reserves_unwritten_containers`].
pub fn reregistration_during_allocation_keeps_the_slot<F: ScmFactory>(
    factory: F,
) -> Result<(), Violation> {
    reregistration_during_allocation_keeps_the_slot_with(factory, ScmHardening::ALL)
}

/// [`reregistration_during_allocation_keeps_the_slot`] with the given switches of
/// `ScmBehavior::Hardened`.
pub fn reregistration_during_allocation_keeps_the_slot_with<F: ScmFactory>(
    factory: F,
    hardening: ScmHardening,
) -> Result<(), Violation> {
    let config = scenario_config(vec![pipeline(1, &[1])], hardening, 0);
    let cluster = Arc::new(scm_cluster_with(factory, config, 1, &[1])?);
    cluster.elect(0);
    let c1 = cluster.allocate().map_err(setup)?;
    let client = {
        let cluster = Arc::clone(&cluster);
        thread::spawn_named("allocator", move || {
            Ok(cluster.allocate().ok().into_iter().collect())
        })
    };
    let datanode = {
        let cluster = Arc::clone(&cluster);
        thread::spawn_named("re-registration", move || {
            cluster.reregister(0, RegistrationChange::Address);
            cluster.heartbeat(0);
            Ok(Vec::new())
        })
    };
    let writer = {
        let cluster = Arc::clone(&cluster);
        thread::spawn_named("datanode reports", move || {
            cluster.write_first_block(c1);
            Ok(Vec::new())
        })
    };
    let granted: Vec<ContainerId> = join_all(vec![client, datanode, writer])?;
    let leader = cluster
        .serving_leader()
        .ok_or_else(|| violation("scenario setup", "no serving leader".into()))?;
    let reserved = leader_reserves_unwritten_containers(&*leader, cluster.pipelines());
    write_all(&cluster, granted.into_iter().map(Ok));
    no_datanode_over_granted(cluster.datanodes())?;
    reserved
}

/// The first write of every granted container, in order.
fn write_all<F: ScmFactory>(
    cluster: &ScmCluster<F>,
    granted: impl IntoIterator<Item = Result<ContainerId, ScmError>>,
) {
    for container in granted.into_iter().flatten() {
        cluster.write_first_block(container);
    }
}
