//! Shuttle, the conformance suites through the boundary traits with the crate's own
//! components as the implementation: the hardened SCM passes the HDDS-16891 suite held to
//! itself, and the SCM without the rebuild is caught by it (HDDS-16891's legacy defect);
//! the seed's patch and the hardened replica pass the HDDS-16811 suite held to
//! themselves, and the legacy replica is caught by it.

use hadoop_ref::check::conformance::{SuiteConfig, allocation, replica};
use hadoop_ref::datanode::container::ContainerBehavior;
use hadoop_ref::scm::ScmBehavior;

/// Fewer schedules than the default: the catalogue's own cases run these scenarios at
/// length; here the suite's plumbing is under test.
const CONFIG: SuiteConfig = SuiteConfig {
    seed: 0x0C0F_0A11,
    iterations: 100,
    pct_depth: 3,
};

#[test]
fn hardened_scm_passes_the_hdds_16891_shuttle_suite() {
    let report = allocation::shuttle_suite(ScmBehavior::Hardened, ScmBehavior::Hardened, &CONFIG);
    report.assert_passes();
    assert!(report.implementation.ends_with("StorageContainerManager"));
    assert_eq!(report.cases.len(), 18, "{}", report.table());
}

#[test]
fn scm_without_the_rebuild_is_caught_by_the_hdds_16891_shuttle_suite() {
    let report =
        allocation::shuttle_suite(ScmBehavior::LegacyNoRebuild, ScmBehavior::Hardened, &CONFIG);
    let first = report.assert_caught();
    assert_eq!(first.scenario, "transfer_keeps_unwritten_slots", "{report}");
}

#[test]
fn patched_replicas_pass_the_hdds_16811_shuttle_suite() {
    for behavior in ContainerBehavior::PATCHED {
        let report = replica::shuttle_suite(behavior, behavior, &CONFIG);
        println!("{}", report.table());
        report.assert_passes();
        assert!(report.implementation.ends_with("ReplicaNode"));
        // Three reproductions once, five races under two schedulers each.
        assert_eq!(report.cases.len(), 13, "{}", report.table());
        assert!(
            report.cases.iter().all(|c| c.executions > 0),
            "{}",
            report.table()
        );
    }
}

#[test]
fn legacy_replica_is_caught_by_the_hdds_16811_shuttle_suite() {
    let report = replica::shuttle_suite(
        ContainerBehavior::Legacy,
        ContainerBehavior::SeedPatch,
        &CONFIG,
    );
    let first = report.assert_caught();
    println!("{}", report.table());
    assert_eq!(first.scenario, "deleted_block_not_restored", "{report}");
    for scenario in [
        "delete_during_repair",
        "deletes_and_repairs_keep_replicas_consistent",
    ] {
        assert!(
            report.caught().iter().any(|c| c.scenario == scenario),
            "{scenario} missed the legacy replica:\n{}",
            report.table()
        );
    }
}
