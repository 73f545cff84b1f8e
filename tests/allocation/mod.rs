//! SCM pending container allocations (HDDS-16891): the bucket, the two-window bucket
//! against a model, allocation on the leader, and what a new serving leader rebuilds.

mod bucket;
mod failover;
mod pending_bucket_model;
mod scm;
