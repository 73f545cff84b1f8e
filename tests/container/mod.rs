//! Container replicas against block deletion and reconciliation (HDDS-16811, HDDS-16808):
//! the checksum tree, the replica, reconciliation and the scanner, the disk storage,
//! properties of the tree and of a replica against a model, and the scenarios run without
//! a checker.

mod crash_fs;
mod crash_points;
mod deletion_records;
mod disk;
mod disk_loader;
mod disk_recovery;
mod model;
mod reconcile;
mod replica;
mod scenarios;
mod tree;
