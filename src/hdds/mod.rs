//! The Ozone (HDDS) protocol types every Ozone component and scenario shares: ids, the
//! SCM leader term, replica states, SCM commands, heartbeats and reports.
//!
//! This module imports no component: the datanode, the SCM and the simulation all speak
//! through these types, the way Ozone's components speak through the protobuf messages of
//! `hdds-interface-client` and `hdds-interface-server`.
//!
//! - [`ids`]: `DatanodeId`, `ScmId`, `ContainerId`, `PipelineId`, `LocalId`.
//! - [`term`]: `Term`, [`NON_HA_TERM`](term::NON_HA_TERM) and term validation.
//! - [`container`]: `ContainerState` and the container report entry.
//! - [`command`]: `ScmCommand`, its kinds and `DeletedBlocksTransaction`.
//! - [`heartbeat`]: the heartbeat request and response, and the `ScmEndpoint` boundary.
//! - [`report`]: the storage report of a volume.
//!
//! A heartbeat carries the datanode's node report, its full container report
//! ([`ContainerReplicaReport`](container::ContainerReplicaReport) entries) and the statuses
//! of its delete-blocks commands; incremental container reports (ICRs) are not sent: the
//! next heartbeat's full report carries the change.

pub mod command;
pub mod container;
pub mod heartbeat;
pub mod ids;
pub mod report;
pub mod term;
