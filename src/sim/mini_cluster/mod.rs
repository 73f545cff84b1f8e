//! `MiniOzoneCluster`: N SCMs over one simulated Ratis ring and M real datanodes in one
//! process, what Ozone's `MiniOzoneCluster` gives Java tests.
//!
//! Each SCM is a [`StorageContainerManager`](crate::scm::StorageContainerManager) with its
//! own database; each datanode is a [`Datanode`](crate::datanode::daemon::Datanode) whose
//! endpoints reach the SCMs through a switchboard that crashes, restarts, cuts and heals.
//! Started ([`start_paced`](MiniOzoneCluster::start_paced), or
//! [`start`](MiniOzoneCluster::start) on real time), it runs Ozone's threads: per
//! datanode a heartbeat thread per SCM, the command processor, the replication
//! supervisor, the delete-container executor, the on-demand scanner and the block
//! deleting service; per SCM the replication manager, its under- and over-replicated
//! processors and the block deleting service; each time-driven one runs once each time
//! the cluster's clock moves ([`advance`](MiniOzoneCluster::advance)). Stepped, a
//! [`tick`](MiniOzoneCluster::tick) runs the SCMs' services once, then every datanode's
//! work once on the calling thread
//! ([`Datanode::tick`](crate::datanode::daemon::Datanode::tick): a heartbeat to each SCM,
//! its commands each run to its end, its block deleting service), and moves the clock:
//! what the deterministic tests, the loom model and the explorer of its steps
//! (`check::explore`) drive. Volumes are in memory or, with
//! [`on_disk`](MiniOzoneClusterBuilder::on_disk), on disk.
//!
//! The SCMs drive each container's lifecycle from the replicas' reports as Ozone does: a
//! close makes it CLOSING, a CLOSED replica CLOSED, and a datanode that left the
//! container's pipeline ([`leave_pipeline`](MiniOzoneCluster::leave_pipeline))
//! quasi-closes its replica, so the container can be QUASI_CLOSED, the state HDDS-16811's
//! trigger starts from. The replication manager (its pass queues under- and
//! over-replicated containers, its processors act on them) runs at every tick unless the
//! builder gives it Ozone's interval and start delay
//! ([`replication_manager`](MiniOzoneClusterBuilder::replication_manager)).
//!
//! Leadership moves as Ratis moves it ([`transfer_leadership`](MiniOzoneCluster::transfer_leadership)),
//! or without the old leader hearing it
//! ([`transfer_leadership_unheard`](MiniOzoneCluster::transfer_leadership_unheard)): every
//! SCM runs its own services by what it believes, so a deposed leader that has not heard
//! keeps creating commands at its old term, HDDS-17268's stale leader. A lagging SCM
//! installs a snapshot of the compacted log
//! ([`catch_up_scm`](MiniOzoneCluster::catch_up_scm)), and each datanode keeps a record of
//! the commands it ran with the term at dispatch
//! ([`commands_run`](MiniOzoneCluster::commands_run)).
//!
//! The datanodes reach each other as reconciliation peers through a network whose links
//! can be cut; each one's node report is its volume's space with its replicas
//! ([`VolumeUsage`](crate::datanode::reports::VolumeUsage)); a restarted SCM stays in safe
//! mode until every datanode has registered with it again. The seeds meet here in one
//! datanode: a deposed leader's commands (HDDS-17268), deletions and repairs the SCM
//! drives into the replicas (HDDS-16811), and allocation judged by the datanodes' own node
//! reports (HDDS-16891).
//!
//! # Example
//!
//! ```
//! # hadoop_ref::sync::run_driver_example(|| {
//! use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;
//!
//! let cluster = MiniOzoneCluster::builder().scms(3).datanodes(3).build()?;
//! let key = cluster.write_key(2)?; // a container on three datanodes, two blocks
//! cluster.transfer_leadership(1)?; // SCM 2 leads now
//! cluster.delete_key(&key)?;
//! cluster.run_until_quiescent(50)?;
//! cluster.repair_round(key.container)?; // nothing comes back
//! let granted = cluster.open_key(1)?; // granted, not written: only the SCM remembers it
//! cluster.write_blocks(&granted)?;
//! for dn in 0..3 {
//!     assert_eq!(cluster.live_blocks(dn, key.container)?, 0);
//!     assert!(cluster.node_report(dn)?[0].committed > 0, "an OPEN replica reserves");
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # });
//! ```

mod builder;
mod cluster;
mod digest;
mod keys;
mod link;
mod liveness;
mod quiescence;
mod services;
mod threads;

pub use builder::{CONTAINER_SIZE, MiniOzoneClusterBuilder};
pub use cluster::{ClusterError, Key, MiniOzoneCluster};
pub use liveness::{InSafeMode, PendingOn};
pub use quiescence::InFlight;
