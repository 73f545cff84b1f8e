//! Container replicas against block deletion and reconciliation (HDDS-16811, HDDS-16808):
//! the replica, its disk storage, properties of the checksum tree, and the scenarios run
//! without a checker.

mod disk;
mod model;
mod replica;
mod scenarios;
