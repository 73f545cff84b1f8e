//! HDDS-16891 against two implementations of the SCM's pending-allocation boundary: what a
//! user writes to check their own SCM. `RebuildingScm` must pass the loom models, the
//! shuttle cases and the differential test against the hardened reference; `ForgetfulScm`
//! (no rebuild on becoming leader, written from scratch) must be caught by each.

use conformance_kit::scm::{ForgetfulScm, RebuildingScm};
use hadoop_ref::check::conformance::allocation;
use hadoop_ref::scm::ScmBehavior::Hardened;

#[cfg(loom)] // RUSTFLAGS="--cfg loom" cargo test --release
#[test]
fn rebuilding_scm_passes_the_loom_models() {
    let report = allocation::loom_suite(RebuildingScm::start, Hardened);
    println!("{}", report.table());
    report.assert_passes();
}

#[cfg(loom)]
#[test]
fn forgetful_scm_is_caught_by_the_loom_models() {
    let report = allocation::loom_suite(ForgetfulScm::start, Hardened);
    let first = report.assert_caught();
    println!(
        "{}\nthe story of {} [{}]:\n{}",
        report.table(),
        first.scenario,
        first.checker,
        first.story().unwrap_or("")
    );
}

#[cfg(feature = "shuttle")] // cargo test --release --features shuttle
#[test]
fn rebuilding_scm_passes_the_shuttle_cases() {
    let config = hadoop_ref::check::conformance::SuiteConfig::default();
    let report = allocation::shuttle_suite(RebuildingScm::start, Hardened, &config);
    println!("{}", report.table());
    report.assert_passes();
}

#[cfg(feature = "shuttle")]
#[test]
fn forgetful_scm_is_caught_by_the_shuttle_cases() {
    let config = hadoop_ref::check::conformance::SuiteConfig::default();
    let report = allocation::shuttle_suite(ForgetfulScm::start, Hardened, &config);
    let first = report.assert_caught();
    println!(
        "{}\nthe story of {} [{}]:\n{}",
        report.table(),
        first.scenario,
        first.checker,
        first.story().unwrap_or("")
    );
}

#[cfg(not(any(loom, feature = "shuttle")))] // cargo test
#[test]
fn rebuilding_scm_behaves_as_the_hardened_scm() {
    let config = hadoop_ref::check::conformance::DifferentialConfig::default();
    let report = allocation::differential(RebuildingScm::start, Hardened, &config);
    report.assert_conforms();
    println!(
        "{} agreed with {} over {} generated sequences",
        report.implementation, report.reference, report.cases
    );
}

#[cfg(not(any(loom, feature = "shuttle")))]
#[test]
fn forgetful_scm_diverges_from_the_hardened_scm() {
    let config = hadoop_ref::check::conformance::DifferentialConfig::default();
    let report = allocation::differential(ForgetfulScm::start, Hardened, &config);
    let divergence = report.assert_diverges();
    println!(
        "caught after {} generated sequence(s), shrunk to {} operation(s):\n{divergence}",
        divergence.found_after_cases, divergence.length
    );
}
