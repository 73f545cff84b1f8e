//! A conformance kit: hold your own implementation of a seed's component against this
//! crate's reference, with the crate's own scenarios, invariants and checkers.
//!
//! **The races** are the seeds': a datanode's term fencing that loses a heartbeat term
//! before init or in an unlocked update (HDDS-17268), an SCM that grants again the slots of
//! containers granted and not yet written after a leader change or restart (HDDS-16891), a
//! standby that judges a datanode's report against a block state it was not produced under
//! (HDFS-2742), a container replica whose block deleting pass and reconciliation restore a
//! deleted block or commit it without its file (HDDS-16811).
//!
//! **How an implementation is held to the fix.** It implements the component's boundary
//! trait ([`StateContextApi`], [`PendingContainerTrackerApi`], [`NamesystemApi`],
//! [`KeyValueContainerApi`]) and is
//! checked three ways: the loom
//! models and the shuttle cases of the catalogue run against it unchanged (the very
//! scenarios and invariants the crate's own variants are judged by), and a differential
//! property test feeds it and the reference behavior of your choice (`SeedPatch`,
//! `Hardened`, `Trunk`) the same generated operations, restarts and failovers included,
//! and compares every observable output.
//!
//! # Check your own implementation
//!
//! Per component, a few lines in your crate's tests (the trait impl aside): one test per
//! build, since loom and shuttle each need a build of their own.
//!
//! ```ignore
//! use hadoop_ref::check::conformance::{SuiteConfig, term_fencing};
//! use hadoop_ref::datanode::state_context::StateContextBehavior::SeedPatch;
//!
//! #[cfg(loom)] // RUSTFLAGS="--cfg loom" cargo test --release
//! #[test]
//! fn my_context_passes_the_hdds_17268_loom_models() {
//!     term_fencing::loom_suite(MyStateContext::start, SeedPatch).assert_passes();
//! }
//!
//! #[cfg(feature = "shuttle")] // cargo test --release --features shuttle
//! #[test]
//! fn my_context_passes_the_hdds_17268_shuttle_cases() {
//!     let config = SuiteConfig::default();
//!     term_fencing::shuttle_suite(MyStateContext::start, SeedPatch, &config).assert_passes();
//! }
//!
//! #[cfg(not(any(loom, feature = "shuttle")))] // cargo test
//! #[test]
//! fn my_context_behaves_as_the_seed_patch() {
//!     let config = DifferentialConfig::default();
//!     term_fencing::differential(MyStateContext::start, SeedPatch, &config).assert_conforms();
//! }
//! ```
//!
//! A suite runs the catalogue's scenarios whose expectation for the reference you claim
//! is `Holds` (a scenario the reference itself breaks by design, like the window the
//! seed's patch leaves open, is listed as not claimed). A caught defect prints the story
//! of the execution that broke the invariant, a divergence the step table of the
//! operations up to the first one where the two differ.
//!
//! The SCM's suites ([`allocation`]) take the function that starts one SCM (a
//! [`ScmFactory`]); every SCM of the scenarios' clusters is then the implementation.
//!
//! # The container replica (HDDS-16811)
//!
//! The boundary of HDDS-16811 is the whole replica ([`KeyValueContainerApi`], started by a
//! [`ReplicaFactory`]), not [`ContainerController`]: that trait is the replicas as SCM's
//! commands see them, while the race's other party, a pass of the block deleting service
//! (`BlockDeletingService`), runs on the datanode's own schedule with no command, and the
//! invariants judge what no command returns: a block's metadata, its file and its mark in
//! the checksum tree (`ContainerChecksumTreeManager`). The race lives inside one replica's
//! lock discipline, so the boundary carries the replica's entry points (the delete-blocks
//! command, a deleting pass, reconciliation with and without its scan, a scan, a restart),
//! the read side its peers pull from ([`PeerDatanode`]) and a per-block view. Its suites
//! ([`replica`]) run every replica of the scenarios as the implementation:
//!
//! ```ignore
//! use hadoop_ref::datanode::container::ContainerBehavior::SeedPatch;
//!
//! #[cfg(loom)]
//! #[test]
//! fn my_replica_passes_the_hdds_16811_loom_models() {
//!     replica::loom_suite(MyReplica::start, SeedPatch).assert_passes();
//! }
//! ```
//!
//! [`StateContextApi`]: crate::datanode::state_context::StateContextApi
//! [`NamesystemApi`]: crate::namenode::namesystem::NamesystemApi
//! [`PendingContainerTrackerApi`]: crate::scm::PendingContainerTrackerApi
//! [`ScmFactory`]: crate::scm::ScmFactory
//! [`ContainerController`]: crate::datanode::container::controller::ContainerController
//! [`KeyValueContainerApi`]: crate::datanode::container::KeyValueContainerApi
//! [`ReplicaFactory`]: crate::datanode::container::ReplicaFactory
//! [`PeerDatanode`]: crate::datanode::container::reconcile::PeerDatanode

pub mod allocation;
#[cfg(not(any(loom, feature = "shuttle")))]
mod differential;
pub mod replica;
mod report;
#[cfg(feature = "shuttle")]
mod shuttle_run;
pub mod standby;
pub mod term_fencing;

#[cfg(not(any(loom, feature = "shuttle")))]
pub use differential::{DifferentialConfig, DifferentialReport, Divergence};
pub use report::{CaseOutcome, CaseReport, Checker, SuiteConfig, SuiteReport};

/// Whether the catalogue's `cases` say that `variant` must hold `scenario`: what a suite
/// holds an implementation to when `variant` is its reference.
fn catalogue_holds(cases: &[crate::check::catalogue::Case], scenario: &str, variant: &str) -> bool {
    cases.iter().any(|case| {
        case.scenario == scenario
            && case.variant == variant
            && case.expectation == crate::check::catalogue::Expectation::Holds
    })
}
