//! The shuttle suite: every catalogue case under the random and PCT schedulers, one
//! module per seed, and the replay of the committed failing schedules.

#[macro_use]
mod support;

mod allocation;
mod container;
mod replay;
mod standby;
mod term_fencing;
