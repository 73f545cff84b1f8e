//! SCM pending container allocations (HDDS-16891): the SCM, and the two-window bucket
//! against a model.

mod pending_bucket_model;
mod scm;
