//! The simulation beside the components: in-process stand-ins for what lies around them
//! (an SCM endpoint, the Ratis ring, peer datanodes, a faulty disk), so that scenarios wire
//! real components together in one process, with no network.
//!
//! - [`scm_endpoint`]: an SCM as a datanode's heartbeat thread sees it.
//! - [`ratis`]: the SCMs' replicated log, and a handle to it that fences like real Ratis.
//! - [`slot_datanode`]: a datanode as SCM allocation sees it: container slots, a create on
//!   first write, a refusal without space.
//! - [`scm_cluster`]: SCMs over one ring and the slot datanodes they allocate on.
//! - [`peers`]: other datanodes as peers of reconciliation, and the network between them.
//! - [`replicas`]: a datanode's replicas set up in memory for a scenario or a test.
//! - [`faulty_store`]: a container storage that fails or runs a hook at named operations.
//! - [`hdfs_datanode`]: an HDFS datanode reporting to both NameNodes of an HA pair.
//! - [`ha_pair`]: two HDFS NameNodes over one shared edit log, with their datanodes.
//! - [`replica_node`]: a datanode's replica of one container, set up with blocks and driven
//!   through deletions, reconciliations and scans.

pub mod faulty_store;
pub mod ha_pair;
pub mod hdfs_datanode;
pub mod peers;
pub mod ratis;
pub mod replica_node;
pub mod replicas;
pub mod scm_cluster;
pub mod scm_endpoint;
pub mod slot_datanode;
