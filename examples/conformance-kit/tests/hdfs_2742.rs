//! HDFS-2742 against two implementations of the standby's namesystem boundary: what a user
//! writes to check their own standby. `PerBlockStandby` must pass the loom models, the
//! shuttle cases and the differential test against trunk; `BatchDrainStandby` (the HA
//! branch's queue before the fix, written from scratch) must be caught by each.

use conformance_kit::standby::{BatchDrainStandby, PerBlockStandby};
use hadoop_ref::check::conformance::standby;
use hadoop_ref::namenode::namesystem::NamesystemBehavior::Trunk;

#[cfg(loom)] // RUSTFLAGS="--cfg loom" cargo test --release
#[test]
fn per_block_standby_passes_the_loom_models() {
    let report = standby::loom_suite(PerBlockStandby::start, Trunk);
    println!("{}", report.table());
    report.assert_passes();
}

#[cfg(loom)]
#[test]
fn batch_drain_standby_is_caught_by_the_loom_models() {
    let report = standby::loom_suite(BatchDrainStandby::start, Trunk);
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
fn per_block_standby_passes_the_shuttle_cases() {
    let config = hadoop_ref::check::conformance::SuiteConfig::default();
    let report = standby::shuttle_suite(PerBlockStandby::start, Trunk, &config);
    println!("{}", report.table());
    report.assert_passes();
}

#[cfg(feature = "shuttle")]
#[test]
fn batch_drain_standby_is_caught_by_the_shuttle_cases() {
    let config = hadoop_ref::check::conformance::SuiteConfig::default();
    let report = standby::shuttle_suite(BatchDrainStandby::start, Trunk, &config);
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
fn per_block_standby_behaves_as_trunk() {
    let config = hadoop_ref::check::conformance::DifferentialConfig::default();
    let report = standby::differential(PerBlockStandby::start, Trunk, &config);
    report.assert_conforms();
    println!(
        "{} agreed with {} over {} generated sequences",
        report.implementation, report.reference, report.cases
    );
}

#[cfg(not(any(loom, feature = "shuttle")))]
#[test]
fn batch_drain_standby_diverges_from_trunk() {
    let config = hadoop_ref::check::conformance::DifferentialConfig::default();
    let report = standby::differential(BatchDrainStandby::start, Trunk, &config);
    let divergence = report.assert_diverges();
    println!(
        "caught after {} generated sequence(s), shrunk to {} operation(s):\n{divergence}",
        divergence.found_after_cases, divergence.length
    );
}
