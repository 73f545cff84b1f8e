//! A downstream crate that holds its own implementations against `hadoop-ref`'s reference,
//! as a user embedding the crate would: two independent implementations of each of three
//! components, written from scratch against the boundary traits, one correct and one
//! carrying the seed's defect.
//!
//! - [`term_fencing`] (HDDS-17268), behind `StateContextApi`: [`LockedContext`] keeps a
//!   heartbeat term seen before init and updates the term under its lock;
//!   [`UnpatchedContext`] is the code before the patch, written again: it drops a
//!   heartbeat term that comes before init and raises the term with an unlocked
//!   check-then-set.
//! - [`standby`] (HDFS-2742), behind `NamesystemApi`: [`PerBlockStandby`] queues a
//!   datanode's early reports per block and judges them right after the edit that changes
//!   the block; [`BatchDrainStandby`] keeps one queue judged after each batch of edits, as
//!   the HA branch did before the seed's fix. The two share the namespace and the report
//!   judging; they differ in the queue.
//! - [`scm`] (HDDS-16891), behind `PendingContainerTrackerApi`: [`RebuildingScm`] keeps an
//!   SCM's buckets, leadership and table under one lock and rebuilds the buckets from the
//!   table when it becomes the serving leader; [`ForgetfulScm`] is the same SCM without the
//!   rebuild, as Ozone was before the seed.
//!
//! The tests (`tests/`) are what a user writes: a few lines per build that run the loom
//! models, the shuttle cases and the differential property test of the seed against each
//! implementation. The correct ones pass; the defective ones are caught by all three.
//!
//! [`mutants`] measures the suites themselves: one-change mutants of the three correct
//! implementations (each carries an `Option<Mutant>`, `None` but in a mutation run), and
//! the verdict each suite must give (`tests/mutants.rs`).
//!
//! Every lock and atomic comes from `hadoop_ref::sync`, never `std::sync`: loom and shuttle
//! see only the facade's primitives.
//!
//! [`LockedContext`]: term_fencing::LockedContext
//! [`PerBlockStandby`]: standby::PerBlockStandby
//! [`BatchDrainStandby`]: standby::BatchDrainStandby
//! [`UnpatchedContext`]: term_fencing::UnpatchedContext
//! [`RebuildingScm`]: scm::RebuildingScm
//! [`ForgetfulScm`]: scm::ForgetfulScm

pub mod mutants;
pub mod scm;
pub mod standby;
pub mod term_fencing;
