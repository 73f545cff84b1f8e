//! The simulation beside the components: in-process stand-ins for what lies around them
//! (SCMs, the Ratis ring, peer datanodes, a faulty disk, HDFS datanodes), so that
//! scenarios wire real components together in one process, with no network. Nothing here
//! judges: the invariants are in [`crate::scenarios`].
//!
//! Ozone, around the datanode:
//! - [`scm_endpoint`]: an SCM as a datanode's heartbeat thread sees it.
//! - [`fencing_datanode`]: a datanode's state context, heartbeat tasks and command
//!   processor wired to in-process SCMs, driven step by step.
//! - [`replicas`]: a datanode's replicas set up in memory for a scenario or a test.
//! - [`replica_node`]: a datanode's replica of one container, set up with blocks and driven
//!   through deletions, reconciliations and scans.
//! - [`peers`]: other datanodes as peers of reconciliation, and the network between them.
//! - [`faulty_store`]: a container storage that fails or runs a hook at named operations.
//! - [`crash_fs`]: a file system under a replica on disk that stops the process, or cuts
//!   the power, at a numbered crash point.
//!
//! Ozone, whole:
//! - [`mini_cluster`]: `MiniOzoneCluster`, SCMs and real datanodes in one process,
//!   stepped tick by tick.
//!
//! Ozone, around the SCM:
//! - [`ratis`]: the SCMs' replicated log, and a handle to it that fences like real Ratis.
//! - [`slot_datanode`]: a datanode as SCM allocation sees it: container slots, a create on
//!   first write, a refusal without space.
//! - [`scm_cluster`]: SCMs over one ring and the slot datanodes they allocate on.
//!
//! HDFS:
//! - [`hdfs_datanode`]: an HDFS datanode reporting to both NameNodes of an HA pair.
//! - [`ha_pair`]: two HDFS NameNodes over one shared edit log, with their datanodes.

pub mod crash_fs;
pub mod faulty_store;
pub mod fencing_datanode;
pub mod ha_pair;
pub mod hdfs_datanode;
pub mod mini_cluster;
pub mod peers;
pub mod ratis;
pub mod replica_node;
pub mod replicas;
pub mod scm_cluster;
pub mod scm_endpoint;
pub mod slot_datanode;
