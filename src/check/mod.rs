//! The checking layer: the [`catalogue`] of every scenario with what each variant must do
//! (fixed variants hold, legacy variants are caught), the [`monitor`]s that judge the
//! seeds' properties from protocol events alone (inline, or over an event log), the
//! [`plan`] of a soak's runs, and
//! the `shuttle` harness that
//! runs a case under shuttle's schedulers, saves a failing schedule and replays it. The
//! shuttle tests and the soak tool use both.

pub mod catalogue;
pub mod conformance;
pub mod exploration;
pub mod explore;
#[cfg(loom)]
pub mod loom;
pub mod monitor;
pub mod plan;
#[cfg(feature = "shuttle")]
pub mod shuttle;
