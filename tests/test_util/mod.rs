//! Helpers shared by the test modules.

pub mod allocation;
pub mod container;
pub mod standby;
pub mod term_fencing;
