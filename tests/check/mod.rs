//! The checking layer without a checker: the defect table, the event monitors, and the
//! soak's plan and its shards.

mod conformance;
mod defects;
mod exploration;
mod explore;
mod memo;
mod monitor;
mod monitor_end;
mod monitor_state;
mod plan;
mod real_logs;
mod verdicts_only;
mod windows;
