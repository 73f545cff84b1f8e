//! The HA standby's handling of datanode messages that arrive before their edits
//! (HDFS-2742): the namesystem, the HA NameNode, the pending-message queue, the replica
//! decision tables, and the safe-mode counts against a recount.

mod append;
mod dn_fencing;
mod edit_validation;
mod evaluation;
mod ha;
mod leak;
mod namesystem;
mod pending_messages;
mod safe_mode_model;
mod trunk_rules;
