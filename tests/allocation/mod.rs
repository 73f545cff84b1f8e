//! SCM pending container allocations (HDDS-16891): the bucket, the two-window bucket
//! against a model, allocation on the leader, what a new serving leader rebuilds, and a
//! datanode that registers again with changed details.

mod bucket;
mod deleted_block_log;
mod failover;
mod pending_bucket_model;
mod registration;
mod replica_health;
mod scm;
