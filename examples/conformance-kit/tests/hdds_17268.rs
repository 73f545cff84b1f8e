//! HDDS-17268 against two implementations of the term-fencing boundary: what a user
//! writes to check their own `StateContext`. `LockedContext` must pass the loom models, the
//! shuttle cases and the differential test against the seed's patch; `UnpatchedContext`
//! (the code before the patch, written from scratch) must be caught by each.

use conformance_kit::term_fencing::{LockedContext, UnpatchedContext};
use hadoop_ref::check::conformance::term_fencing;
use hadoop_ref::datanode::state_context::StateContextBehavior::SeedPatch;

#[cfg(loom)] // RUSTFLAGS="--cfg loom" cargo test --release
#[test]
fn locked_context_passes_the_loom_models() {
    let report = term_fencing::loom_suite(LockedContext::start, SeedPatch);
    println!("{}", report.table());
    report.assert_passes();
}

#[cfg(loom)]
#[test]
fn unpatched_context_is_caught_by_the_loom_models() {
    let report = term_fencing::loom_suite(UnpatchedContext::start, SeedPatch);
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
fn locked_context_passes_the_shuttle_cases() {
    let config = hadoop_ref::check::conformance::SuiteConfig::default();
    let report = term_fencing::shuttle_suite(LockedContext::start, SeedPatch, &config);
    println!("{}", report.table());
    report.assert_passes();
}

#[cfg(feature = "shuttle")]
#[test]
fn unpatched_context_is_caught_by_the_shuttle_cases() {
    let config = hadoop_ref::check::conformance::SuiteConfig::default();
    let report = term_fencing::shuttle_suite(UnpatchedContext::start, SeedPatch, &config);
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
fn locked_context_behaves_as_the_seed_patch() {
    let config = hadoop_ref::check::conformance::DifferentialConfig::default();
    let report = term_fencing::differential(LockedContext::start, SeedPatch, &config);
    report.assert_conforms();
    println!(
        "{} agreed with {} over {} generated sequences",
        report.implementation, report.reference, report.cases
    );
}

#[cfg(not(any(loom, feature = "shuttle")))]
#[test]
fn unpatched_context_diverges_from_the_seed_patch() {
    let config = hadoop_ref::check::conformance::DifferentialConfig::default();
    let report = term_fencing::differential(UnpatchedContext::start, SeedPatch, &config);
    let divergence = report.assert_diverges();
    println!(
        "caught after {} generated sequence(s), shrunk to {} operation(s):\n{divergence}",
        divergence.found_after_cases, divergence.length
    );
}
