//! The crate's unit, integration and property tests without a checker, as one test
//! binary: one module per seed, the regression tests, the checks of the project's docs
//! (`docs`), and shared helpers in `test_util`.
//! The checkers' own suites are `loom-tests/` and `shuttle-tests/`.
#![cfg(not(any(loom, feature = "shuttle")))]

mod allocation;
mod check;
mod cluster;
mod container;
mod datanode;
mod docs;
mod regression;
mod standby;
mod story;
mod term_fencing;
mod test_util;
