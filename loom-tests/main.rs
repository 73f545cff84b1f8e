//! The loom models, one module per race, run with `RUSTFLAGS="--cfg loom"` in release
//! (`ci/loom` checks that every one of them ran). Each explores the production code path
//! of its scenario; `support` counts executions and keeps the violation.
#![cfg(loom)]

mod conformance;
mod cross_seed_race;
mod delete_during_repair;
mod heartbeat_term_race;
mod mini_cluster;
mod rbw_report_race;
mod rebuild_gate_race;
mod reregistration_race;
mod rw_cell;
mod split_batch_race;
mod support;
mod term_before_init;
