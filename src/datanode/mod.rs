//! The Ozone datanode's control plane: SCM-term fencing of commands (HDDS-17268), and its
//! container replicas with block deletion and reconciliation (HDDS-16811).
//!
//! - [`state_context`]: the command queue and the leader-SCM term that fences commands of
//!   a stale leader (`StateContext`).
//! - [`heartbeat`]: one `HeartbeatEndpointTask` per SCM endpoint.
//! - [`reports`]: what heartbeats carry: the container and node reports, and the
//!   statuses of the commands run, for every SCM.
//! - [`dispatcher`]: the `CommandDispatcher`, whose handlers re-check term and deadline
//!   when a command runs, and hand it to the [`ContainerController`].
//! - [`container`]: the container replicas (`KeyValueContainer`) with their block files,
//!   metadata and checksum tree, the block deleting service, reconciliation, the
//!   on-demand scanner, and the [`ContainerController`] over them (`KeyValueHandler`).
//! - [`daemon`]: the [`Datanode`](daemon::Datanode), which assembles all of it with its
//!   threads and restarts from its volume.
//!
//! The types the datanode shares with the SCM (ids, terms, commands, heartbeats, reports)
//! are in [`crate::hdds`].
//!
//! [`ContainerController`]: container::controller::ContainerController

pub mod container;
pub mod daemon;
pub mod dispatcher;
mod error;
pub mod executors;
pub mod heartbeat;
pub mod reports;
pub mod services;
mod settings;
pub mod state_context;
pub mod work_queue;

pub use error::DatanodeError;
