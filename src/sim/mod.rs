//! The simulation beside the components: in-process stand-ins for what lies around them
//! (an SCM endpoint, the Ratis ring, peer datanodes, a faulty disk), so that scenarios wire
//! real components together in one process, with no network.
//!
//! - [`scm_endpoint`]: an SCM as a datanode's heartbeat thread sees it.
//! - [`fencing_datanode`]: a datanode's state context, heartbeat tasks and command
//!   processor wired to in-process SCMs, driven step by step.
//! - [`ratis`]: the SCMs' replicated log.
//! - [`peers`]: other datanodes as peers of reconciliation, and the network between them.
//! - [`replicas`]: a datanode's replicas set up in memory for a scenario or a test.
//! - [`faulty_store`]: a container storage that fails or runs a hook at named operations.

pub mod faulty_store;
pub mod fencing_datanode;
pub mod peers;
pub mod ratis;
pub mod replicas;
pub mod scm_endpoint;
