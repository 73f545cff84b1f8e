//! The checking layer without a checker: the soak's plan and its shards.

mod plan;
