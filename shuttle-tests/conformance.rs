//! Shuttle, the conformance suites through the boundary traits with the crate's own
//! components as the implementation: the hardened SCM passes the HDDS-16891 suite held to
//! itself, and the SCM without the rebuild is caught by it (HDDS-16891's legacy defect).

use hadoop_ref::check::conformance::{SuiteConfig, allocation};
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
    assert_eq!(report.cases.len(), 16, "{}", report.table());
}

#[test]
fn scm_without_the_rebuild_is_caught_by_the_hdds_16891_shuttle_suite() {
    let report =
        allocation::shuttle_suite(ScmBehavior::LegacyNoRebuild, ScmBehavior::Hardened, &CONFIG);
    let first = report.assert_caught();
    assert_eq!(first.scenario, "transfer_keeps_unwritten_slots", "{report}");
}
