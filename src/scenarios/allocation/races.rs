//! The races around the fix of HDDS-16891, small enough for loom: each runs two spawned
//! threads against a cluster of one or two SCMs and one datanode.
//!
//! - [`allocation_waits_for_the_rebuild`]: the gate keeps an allocation out until the
//!   rebuild of the new leader's term is done.
//! - [`space_check_sees_created_container`]: a space check sees a container being written
//!   as committed space or as pending, never as neither (beyond the seed: needs
//!   `ScmHardening::read_reports_under_bucket_lock`).
//! - [`rebuild_sees_allocation_committed_across_reelection`]: the rebuild of a new term
//!   sees a container an old-term allocation committed with a timeout answer (beyond the
//!   seed: needs `ScmHardening::apply_log_before_rebuild`).

use super::invariants::{leader_reserves_unwritten_containers, no_datanode_over_granted};
use super::seed::{
    CONTAINER_SIZE, SCENARIO_START_MS, pipeline, scenario_config, scm_cluster, scm_cluster_with,
    setup,
};
use crate::clock::ManualClock;
use crate::hdds::ids::{ContainerId, DatanodeId, ScmId};
use crate::scenarios::{Violation, join_all};
use crate::scm::ha::ScmDb;
use crate::scm::{PendingContainerTrackerApi, Pipeline, ScmFactory, ScmHardening};
use crate::sim::ratis::{SimulatedRatis, SubmitFault, UnfencedLog};
use crate::sim::slot_datanode::SlotDatanode;
use crate::sync::{Arc, thread};

/// An allocation that reaches a new leader while it rebuilds waits for the rebuild, so it
/// cannot take a slot a previous leader granted. The gate race: SCM 2 becomes
/// leader-ready (and rebuilds) while a client's allocation reaches it, on one datanode with
/// one slot held by C1 granted by SCM 1. Two spawned threads. Ratis marks the division
/// leader-ready, which opens the RPC layer's leader check, before
/// `SCMStateMachine.notifyLeaderReady` has `SCMServiceManager` notify the services; without
/// a gate the allocation can see an empty `TwoWindowBucket`.
pub fn allocation_waits_for_the_rebuild<F: ScmFactory>(factory: F) -> Result<(), Violation> {
    let cluster = scm_cluster(factory, 2, &[1], vec![pipeline(1, &[1])])?;
    cluster.elect(0);
    let c1 = cluster.allocate().map_err(setup)?;
    cluster.catch_up_all();
    cluster.begin_election(1);
    let new_leader = cluster.scm(1);

    let ready = {
        let scm = Arc::clone(&new_leader);
        thread::spawn_named("failover", move || {
            scm.notify_leader_ready();
            Ok(Vec::new())
        })
    };
    let client = {
        let scm = Arc::clone(&new_leader);
        thread::spawn_named("allocator", move || {
            Ok(scm.allocate_container().ok().into_iter().collect())
        })
    };
    let granted: Vec<ContainerId> = join_all(vec![ready, client])?;
    cluster.write_first_block(c1);
    for container in granted {
        cluster.write_first_block(container);
    }
    no_datanode_over_granted(cluster.datanodes())
}

/// A space check sees a container being written either as committed space (its node
/// report) or as pending (its bucket entry), never as neither. A race the shuttle cluster
/// found beyond the seed (the report-order race): on the serving leader, a client's allocation runs while the
/// first write of C1 (holding the one slot of the datanode) reports, node report then
/// container report. A space check that reads the storage report before taking the bucket
/// lock can see neither the committed space nor the pending entry (Ozone's order, which
/// `ScmBehavior::SeedPatch` keeps). Two spawned threads.
pub fn space_check_sees_created_container<F: ScmFactory>(factory: F) -> Result<(), Violation> {
    space_check_sees_created_container_with(factory, ScmHardening::ALL)
}

/// [`space_check_sees_created_container`] with the given switches of `ScmBehavior::Hardened`.
pub fn space_check_sees_created_container_with<F: ScmFactory>(
    factory: F,
    hardening: ScmHardening,
) -> Result<(), Violation> {
    let config = scenario_config(vec![pipeline(1, &[1])], hardening, 0);
    let cluster = Arc::new(scm_cluster_with(factory, config, 1, &[1])?);
    cluster.elect(0);
    let c1 = cluster.allocate().map_err(setup)?;
    let writer = {
        let cluster = Arc::clone(&cluster);
        thread::spawn_named("datanode reports", move || {
            cluster.write_first_block(c1);
            Ok(Vec::new())
        })
    };
    let client = {
        let cluster = Arc::clone(&cluster);
        thread::spawn_named("allocator", move || {
            Ok(cluster.allocate().ok().into_iter().collect())
        })
    };
    for container in join_all(vec![writer, client])? {
        cluster.write_first_block(container);
    }
    no_datanode_over_granted(cluster.datanodes())
}

/// The rebuild of a new term sees a container that an allocation of the old term
/// committed, even when the submit answered a timeout. The re-election race, found by a
/// review: the leader
/// is re-elected at a new term while an allocation of the old term holds the gate, and
/// that allocation's submit commits although it answers a timeout. The new term's rebuild
/// must see the committed container (it applies the log under the gate), or the
/// container's reserved slot is dropped and never seeded. One SCM over an [`UnfencedLog`],
/// one datanode with two slots, C1 granted; two spawned threads. Checks
/// [`leader_reserves_unwritten_containers`].
pub fn rebuild_sees_allocation_committed_across_reelection<F: ScmFactory>(
    factory: F,
) -> Result<(), Violation> {
    rebuild_sees_allocation_committed_across_reelection_with(factory, ScmHardening::ALL)
}

/// [`rebuild_sees_allocation_committed_across_reelection`] with the given switches of
/// `ScmBehavior::Hardened`.
pub fn rebuild_sees_allocation_committed_across_reelection_with<F: ScmFactory>(
    factory: F,
    hardening: ScmHardening,
) -> Result<(), Violation> {
    let ring = SimulatedRatis::new();
    let (scm, pipelines) = serving_scm_over_unfenced_log(factory, hardening, &ring)?;
    scm.allocate_container().map_err(setup)?;
    ring.inject(SubmitFault::TimeoutAfterCommit);

    let client = {
        let scm = Arc::clone(&scm);
        thread::spawn_named("allocator", move || {
            // The timeout is the injected fault; the entry commits.
            let _ = scm.allocate_container();
            Ok(Vec::<()>::new())
        })
    };
    let reelection = {
        let scm = Arc::clone(&scm);
        let ring = ring.clone();
        thread::spawn_named("failover", move || {
            scm.notify_leader_changed(ring.elect(scm.id()));
            scm.notify_leader_ready();
            Ok(Vec::new())
        })
    };
    join_all(vec![client, reelection])?;
    scm.catch_up();
    leader_reserves_unwritten_containers(&*scm, &pipelines)
}

/// SCM 1 alone over an [`UnfencedLog`] of `ring`, one datanode with two slots registered
/// and reported, out of safe mode, elected and leader-ready; with its pipelines.
fn serving_scm_over_unfenced_log<F: ScmFactory>(
    factory: F,
    hardening: ScmHardening,
    ring: &SimulatedRatis,
) -> Result<(Arc<F::Scm>, Vec<Pipeline>), Violation> {
    let log = UnfencedLog::new(ring.clone()).into_log();
    let config = scenario_config(vec![pipeline(1, &[1])], hardening, 0);
    let pipelines = config.pipelines.clone();
    let datanode = SlotDatanode::new(DatanodeId(1), 2, CONTAINER_SIZE);
    let scm = Arc::new(
        factory
            .create(
                ScmId(1),
                config,
                log,
                Arc::new(ScmDb::new()),
                ManualClock::new(SCENARIO_START_MS).shared(),
            )
            .map_err(setup)?,
    );
    scm.register_datanode(&datanode.details(), vec![datanode.storage_report()]);
    scm.exit_safe_mode();
    scm.notify_leader_changed(ring.elect(scm.id()));
    scm.notify_leader_ready();
    Ok((scm, pipelines))
}
