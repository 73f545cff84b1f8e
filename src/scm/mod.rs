//! The Storage Container Manager: its pending container allocations (HDDS-16891), and the
//! service it gives its datanodes where the seeds meet: heartbeats and commands stamped
//! with the leader's term (HDDS-17268), the deleted-block log and its health gate, the
//! container lifecycle driven by replica reports, and the replication manager
//! (HDDS-16811's trigger, HDDS-16449's over-replication).
//!
//! - [`config`], [`error`], [`container_info`]: the SCM's behavior, the switches of this
//!   crate's additions and its settings, its errors, and its container and pipeline
//!   tables' rows.
//! - [`pending`]: the per-datanode `TwoWindowBucket` and the slot arithmetic.
//! - [`datanode_details`]: what a datanode registers with, and what a registration did.
//! - [`node`]: registered datanodes (`DatanodeInfo`) and the `PendingContainerTracker`.
//! - [`pipeline_choice`]: the random OPEN pipeline an allocation tries.
//! - [`ha`]: the replicated log as an SCM sees it, and the SCM's persisted tables.
//! - [`deleted_block_log`]: the leader's delete transactions in flight, per round and
//!   per ack; [`command_queue`]: the commands waiting for each datanode's heartbeat.
//! - [`replica_count`]: the replication manager's count of a container's replicas and its
//!   health check; [`pending_ops`]: the replica additions and deletions it waits for.
//! - [`container_manager`]: the SCM itself: allocation on the leader, the replicated
//!   add-container, registrations and reports (with the lifecycle decisions of the report
//!   handler), leadership and safe mode, the replication manager's handlers, and the fix:
//!   the rebuild of the buckets with an allocation gate. Its protocol steps are the events of
//!   a failure's [story](crate::story) (listed there).
//! - [`PendingContainerTrackerApi`]: the boundary another implementation of the pending
//!   allocations plugs into, with the guarantees HDDS-16891 asks of it; [`ScmFactory`]
//!   starts one for a scenario.

pub mod command_queue;
pub mod config;
pub mod container_info;
pub mod container_manager;
mod contract;
pub mod datanode_details;
pub mod deleted_block_log;
pub mod error;
pub mod ha;
pub mod node;
pub mod pending;
pub mod pending_ops;
pub mod pipeline_choice;
pub mod replica_count;

pub use config::{
    DeletingReplicaRule, ExcessReplicaOrder, PendingOpsOnNewTerm, ReplicationManagerConfig,
    ReplicationSpaceAccounting, ScmBehavior, ScmConfig, ScmHardening,
};
pub use container_info::{ContainerInfo, LifeCycleState, Pipeline};
pub use container_manager::StorageContainerManager;
pub use contract::{PendingContainerTrackerApi, ScmFactory};
pub use datanode_details::{DatanodeDetails, Registration, RegistrationChange};
pub use error::ScmError;
