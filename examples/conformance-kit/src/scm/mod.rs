//! Two SCMs behind `PendingContainerTrackerApi` (HDDS-16891).
//!
//! **The race.** A container granted and not yet written has no footprint in any storage
//! report: an SCM that becomes leader, or restarts, with empty pending buckets grants its
//! slots again, and a datanode refuses the create.
//!
//! **The fix** ([`RebuildingScm`]): on becoming the serving leader, apply the log, then
//! record every unwritten container of the table as pending on its datanodes before any
//! allocation of the term is served; [`ForgetfulScm`] is the code before the seed, without
//! the rebuild.
//!
//! Both are one [`SlotScm`]: every piece of state under one lock, so an allocation and a
//! rebuild never interleave, and a re-registered datanode keeps its bucket (its reports
//! cleared until the next node report, as a fresh `DatanodeInfo` has none).

mod bucket;
mod slot_scm;

pub use slot_scm::SlotScm;

/// The correct SCM: rebuilds its pending allocations on becoming the serving leader.
pub type RebuildingScm = SlotScm<true>;

/// The defective SCM: no rebuild, so a new leader or a restarted SCM starts with empty
/// buckets (Ozone before HDDS-16891).
pub type ForgetfulScm = SlotScm<false>;
