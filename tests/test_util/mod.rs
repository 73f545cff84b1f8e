//! Helpers shared by the test modules.

pub mod term_fencing;
