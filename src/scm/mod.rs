//! The Storage Container Manager's pending container allocations (HDDS-16891).
//!
//! - [`config`], [`error`], [`container_info`]: the SCM's behavior and settings, its
//!   errors, and its container and pipeline tables' rows.
//! - [`pending`]: the per-datanode `TwoWindowBucket` and the slot arithmetic.
//! - [`node`]: registered datanodes (`DatanodeInfo`) and the `PendingContainerTracker`.
//! - [`ha`]: the replicated log as an SCM sees it, and the SCM's persisted table.
//! - [`container_manager`]: the SCM itself: allocation on the leader, the replicated
//!   add-container, container reports, leadership and safe mode, and the fix: the rebuild
//!   of the buckets with an allocation gate.

pub mod config;
pub mod container_info;
pub mod container_manager;
pub mod error;
pub mod ha;
pub mod node;
pub mod pending;

pub use config::{ScmBehavior, ScmConfig};
pub use container_info::{ContainerInfo, LifeCycleState, Pipeline};
pub use container_manager::StorageContainerManager;
pub use error::ScmError;
