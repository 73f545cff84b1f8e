//! The shuttle suite: every catalogue case under the random and PCT schedulers, one
//! module per seed, the replay of the committed failing schedules, their event logs
//! judged by the event monitors, and their timeline in a browser.

#[macro_use]
mod support;

mod allocation;
mod cluster;
mod conformance;
mod container;
mod event_log;
mod explain;
mod exploration;
mod facade;
mod replay;
mod standby;
mod stories;
mod term_fencing;
