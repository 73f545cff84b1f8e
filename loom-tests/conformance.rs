//! Loom, the HDDS-16811 conformance suite through the replica's boundary
//! (`KeyValueContainerApi`) with the crate's own replicas as the implementation: the
//! seed's patch and the hardened code pass the loom models held to themselves, and the
//! legacy replica (no deleted entry for a block without metadata, a commit with no lock
//! before the writes are finished) is caught by them held to the seed's patch.
//!
//! **Exhaustive**, as `delete_during_repair.rs`: the same four models (a reconciliation
//! racing a deleting pass, with the block absent or partly present, two reconciliations
//! of one container, and a scan racing a deleting pass), two spawned threads each,
//! loom's defaults.

use hadoop_ref::check::conformance::replica;
use hadoop_ref::datanode::container::ContainerBehavior::{Hardened, Legacy, SeedPatch};

#[test]
fn seed_patch_replica_passes_the_hdds_16811_loom_models() {
    let report = replica::loom_suite(SeedPatch, SeedPatch);
    println!("{}", report.table());
    report.assert_passes();
    assert_eq!(report.cases.len(), 4, "{}", report.table());
}

#[test]
fn hardened_replica_passes_the_hdds_16811_loom_models() {
    let report = replica::loom_suite(Hardened, Hardened);
    println!("{}", report.table());
    report.assert_passes();
    assert!(report.implementation.ends_with("ReplicaNode"));
}

#[test]
fn legacy_replica_is_caught_by_the_hdds_16811_loom_models() {
    let report = replica::loom_suite(Legacy, SeedPatch);
    let first = report.assert_caught();
    println!("{report}");
    assert_eq!(first.scenario, "delete_during_repair", "{report}");
    // The race needs the two threads: both delete-during-repair models catch it.
    assert_eq!(report.caught().len(), 2, "{}", report.table());
}
