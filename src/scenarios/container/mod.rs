//! Scenarios and invariants of container reconciliation against block deletion
//! (HDDS-16811, with HDDS-16808), shared by the loom and shuttle tests, the soak tool and
//! the tests.
//!
//! **The race.** A replica's block deleting service and its reconciliation work on the
//! same block with no common lock: deleted before its repair, the block is copied back
//! from a peer; deleted during it, its metadata is committed without its file.
//! **The fix.** The deleting service records every deleted block in the checksum tree,
//! metadata or not (HDDS-16808 keeps the data checksum on its root); reconciliation
//! commits under the read lock only if the tree does not mark the block deleted.
//!
//! Each scenario runs the seed's patch (`SeedPatch`), the hardened code (`Hardened`) and,
//! where the seed's race is the subject, the legacy code (`Legacy`).
//!
//! Real `KeyValueHandler`s over in-memory stores ([`ReplicaNode`](crate::sim::replica_node::ReplicaNode)s of the simulation),
//! peers answered in process. The scenarios whose parties are the replica's own entry
//! points (a `_on` function each) take any [`ReplicaFactory`](crate::datanode::container::ReplicaFactory),
//! so the conformance kit runs them against another implementation of
//! [`KeyValueContainerApi`](crate::datanode::container::KeyValueContainerApi); the
//! catalogue runs them on this crate's replica (each `ContainerBehavior` is a factory).
//!
//! - [`invariants`]: what is checked on replicas.
//! - [`repair_races`]: a reconciliation against a deleting pass (the loom race), and two
//!   reconciliations of one container at once.
//! - [`beyond_seed`]: the races this crate found beyond the seed's patch, where the seed's
//!   patch is caught and the hardened code holds.
//! - [`reproductions`]: the seed's MC2 and MC3 with their own assertions and under the
//!   invariants.
//! - [`cluster`]: three replicas under random deletions, reconciliations and scans.
//! - [`scanner_race`]: the scanner against a deleting round (HDDS-7300).

pub mod beyond_seed;
pub mod cluster;
pub mod crash_points;
pub mod invariants;
pub mod repair_races;
pub mod reproductions;
pub mod scanner_race;
pub mod seed;

pub use beyond_seed::{
    data_checksum_follows_concurrent_tree_writes,
    data_checksum_follows_concurrent_tree_writes_with,
    failed_deletion_tree_write_never_orphans_a_repair,
};
pub use cluster::{
    ContainerClusterShape, deletes_and_repairs_keep_replicas_consistent,
    deletes_and_repairs_keep_replicas_consistent_on,
};
pub use invariants::{
    data_checksum_follows_the_tree, data_checksums_agree, deleted_blocks_not_live,
    deletions_witnessed, live_blocks_present, no_file_without_metadata, no_metadata_without_file,
    replica_healthy, replicas_agree_on_the_data_checksum,
};
pub use repair_races::{
    concurrent_reconciliations, concurrent_reconciliations_on, concurrent_reconciliations_with,
    delete_during_partial_repair, delete_during_repair, delete_during_repair_on,
    delete_during_repair_with,
};
pub use reproductions::{
    DeleteMidReconcileRun, DeleteThenReconcileRun,
    block_deleted_during_reconciliation_is_not_committed,
    block_deleted_during_reconciliation_is_not_committed_on, delete_mid_reconcile,
    delete_mid_reconcile_on, delete_mid_reconcile_with, delete_then_reconcile,
    delete_then_reconcile_on, delete_then_reconcile_with,
    deleted_block_is_not_restored_by_reconciliation,
    deleted_block_is_not_restored_by_reconciliation_on, deleted_block_restored_as_reported,
    metadata_without_file_as_reported,
};
pub use scanner_race::{
    ScannerBehavior, scan_during_block_deletion, scan_during_block_deletion_on,
};
pub use seed::{BLOCK_X, BLOCK_Y, SEED_KEY};
