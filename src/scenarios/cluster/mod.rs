//! Where the Ozone seeds meet: one
//! [`MiniOzoneCluster`](crate::sim::mini_cluster::MiniOzoneCluster) whose SCMs drive
//! deletions and repairs into real replicas (HDDS-16811) while leadership moves
//! (HDDS-17268's terms), granting containers by the datanodes' own node reports
//! (HDDS-16891's allocation).
//!
//! **The race.** Delete transactions are in flight when the leader changes: the old
//! leader's commands still leave its queue with its term, the new leader knows nothing of
//! what was sent. **What must hold**: every block of a deleted key is deleted on every
//! replica, every block of a kept key stays, and the log empties. Once it has settled,
//! the SCMs' [`liveness`] properties: every running SCM leaves safe mode, and pending
//! allocations roll out of their windows.

mod allocation;
mod deleting;
mod deletions;
mod deposed_processor;
pub mod explorable;
pub mod invariants;
pub mod liveness;
mod over_replicated;
mod quasi_closed;
mod random;
mod repair;
mod replication_target;
mod setup;
mod stale_delete;

pub use allocation::{
    keys_written_while_leadership_moves, keys_written_while_leadership_moves_explorable,
};
pub use deleting::{
    DeletingContainerBehavior, emptied_but_one, emptied_container_deleted_despite_a_restored_block,
    emptied_container_deleted_despite_a_restored_block_explorable,
};
pub use deletions::{
    keys_deleted_while_leadership_moves, keys_deleted_while_leadership_moves_explorable,
};
pub use deposed_processor::{
    over_replicated_container_while_the_deposed_leader_processes,
    over_replicated_container_while_the_deposed_leader_processes_explorable,
};
pub use invariants::{
    BELOW_REPLICATION_FACTOR, DELETED_EVERYWHERE, NO_GRANT_PAST_ROOM, REPLICATION_SEED, SEED_KEY,
};
pub use over_replicated::{
    FailoverDeleteBehavior, over_replicated_container_across_a_leader_change,
    over_replicated_container_across_a_leader_change_explorable, stale_excess_delete_in_flight,
};
pub use quasi_closed::{
    key_deleted_from_a_quasi_closed_container_during_reconcile,
    key_deleted_from_a_quasi_closed_container_during_reconcile_explorable,
};
pub use random::{
    OzoneBehavior, random_cluster_with_faults, random_cluster_with_faults_explorable,
};
pub use repair::{
    deletions_across_transfer_restart_and_repair,
    deletions_across_transfer_restart_and_repair_explorable,
};
pub use replication_target::{
    ReplicationTargetBehavior, replica_copied_across_a_reelection,
    replica_copied_while_keys_are_granted, replica_copied_while_leadership_moves,
    under_replicated_container,
};
pub use stale_delete::{
    deposed_leaders_force_delete_through_the_cluster,
    deposed_leaders_force_delete_through_the_cluster_explorable,
    deposed_leaders_force_delete_through_the_stepped_cluster, stale_force_delete_during_repair,
};
