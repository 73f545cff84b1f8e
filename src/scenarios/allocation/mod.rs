//! Scenarios and invariants of SCM pending container allocations (HDDS-16891), shared by
//! the loom and shuttle tests, the soak tool and the tests.
//!
//! **The race.** Only the leader records a pending slot when it grants a container; after
//! a leader change or an SCM restart the serving leader's buckets are empty, so the slots
//! of containers granted and not yet written are granted again and a create is refused.
//!
//! **The fix.** On becoming the serving leader an SCM drops its pending entries and records
//! a slot for each OPEN container on each datanode of its pipeline without a replica, behind
//! an allocation gate that keeps allocations out until that rebuild of its term is done.
//!
//! `ScmBehavior::SeedPatch` is that proposal on Ozone's code; `ScmBehavior::Hardened` adds
//! the switches of `ScmHardening`, one per race this crate found beyond the seed: the
//! report-order race ([`space_check_sees_created_container`]), the re-election race
//! ([`rebuild_sees_allocation_committed_across_reelection`]) and re-registration
//! ([`reregistration_keeps_unwritten_slots`],
//! [`reregistration_during_allocation_keeps_the_slot`]). `SeedPatch` is caught by each,
//! `Hardened` holds.
//!
//! Real [`StorageContainerManager`](crate::scm::StorageContainerManager)s run over the
//! simulated Ratis ring of [`ScmCluster`](crate::sim::scm_cluster::ScmCluster), with
//! datanodes that create a container on its first write and refuse it without space. Every
//! scenario takes an [`ScmFactory`](crate::scm::ScmFactory): an `ScmBehavior` starts the
//! crate's own SCM, and any other implementation of
//! [`PendingContainerTrackerApi`](crate::scm::PendingContainerTrackerApi) runs in its place
//! ([`check::conformance::allocation`](crate::check::conformance::allocation)).
//!
//! - [`invariants`]: [`no_datanode_over_granted`] (the seed's harm) and
//!   [`leader_reserves_unwritten_containers`] (the serving leader's buckets).
//! - [`failover`]: the seed's reproduction, MC8, one thread.
//! - [`races`]: the races around the fix, two spawned threads each, for loom.
//! - [`registration`]: a datanode that registers again with changed details (beyond the
//!   seed), sequential and racing an allocation.
//! - [`accounting`]: what the pending slots hold (a closed unreported container, a
//!   partial reservation, reported replicas, a grant never written), one thread.
//! - [`cluster`]: the random cluster, for shuttle and the soak tool.
//! - [`seed`]: the seed key and what the scenarios' clusters share.
//!
//! The threads a scenario spawns are named for what they do (`allocator`, `failover`,
//! `datanode reports`, `re-registration`, `writer`, `controller`): a failure's story
//! names each step's thread.

pub mod accounting;
pub mod cluster;
pub mod failover;
pub mod invariants;
pub mod races;
pub mod registration;
pub mod seed;

pub use accounting::{
    RESERVES_ONLY_UNWRITTEN, UNWRITTEN_GRANT_AGES_OUT, leader_reserves_only_unwritten_grants,
    pending_slots_are_the_unwritten_grants, unreported_closing_container_keeps_its_slot,
};
pub use cluster::{
    AllocationClusterShape, random_failovers_never_over_grant,
    random_failovers_never_over_grant_with,
};
pub use failover::{ScmFailover, failover_keeps_slots_of_unwritten_containers};
pub use invariants::{leader_reserves_unwritten_containers, no_datanode_over_granted};
pub use races::{
    allocation_waits_for_the_rebuild, rebuild_sees_allocation_committed_across_reelection,
    rebuild_sees_allocation_committed_across_reelection_with, space_check_sees_created_container,
    space_check_sees_created_container_with,
};
pub use registration::{
    reregistration_during_allocation_keeps_the_slot,
    reregistration_during_allocation_keeps_the_slot_with, reregistration_keeps_unwritten_slots,
    reregistration_keeps_unwritten_slots_with,
};
pub use seed::{CONTAINER_SIZE, SCENARIO_START_MS, SEED_KEY};
