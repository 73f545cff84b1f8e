//! The checking layer without a checker: the event monitors, and the soak's plan and its
//! shards.

mod monitor;
mod plan;
