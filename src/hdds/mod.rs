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
//! Not modelled yet: the heartbeat carries no node or container report. The datanode
//! builds its container report ([`ContainerReplicaReport`](container::ContainerReplicaReport)
//! entries, `ContainerController::container_report`) and the SCM processes reports, but
//! the scenarios hand them over directly; incremental container reports (ICRs) are not
//! sent at all.

pub mod command;
pub mod container;
pub mod heartbeat;
pub mod ids;
pub mod report;
pub mod term;
