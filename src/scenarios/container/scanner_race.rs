//! The container scanner against the block deleting task (HDDS-7300).
//!
//! **The race.** The deleting task unlinks a block's file and then removes its metadata
//! in one batch, under the container write lock; the scanner, with no lock, finds the
//! file gone and looks the block up again: before HDDS-7300 with no lock either, so it
//! can still see the metadata, and the replica is marked UNHEALTHY for a block deleted on
//! purpose. **The fix** looks the block up again under the read lock, which waits for
//! the deleting task's batch, and skips a block whose metadata is gone by then.

use super::invariants::{deleted_blocks_not_live, replica_healthy};
use super::seed::{BLOCK_X, BLOCK_Y, setup};
use crate::datanode::container::{
    ContainerBehavior, ContainerConfig, KeyValueContainerApi, ReplicaFactory, ScanRecheck,
};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::DatanodeId;
use crate::scenarios::{Violation, join_all};
use crate::sim::replica_node::transaction;
use crate::sync::{Arc, thread};

/// The code under test: the replica's, with the scanner's second look as Ozone has it or
/// as it was before HDDS-7300.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScannerBehavior {
    /// The replicas' `SeedPatch`, the scanner as Ozone master.
    SeedPatch,
    /// The replicas' `Hardened`, the scanner as Ozone master.
    Hardened,
    /// The replicas' `Hardened`, the scanner before HDDS-7300
    /// ([`ScanRecheck::LegacyWithoutLock`]).
    LegacyRecheckWithoutLock,
}

impl ScannerBehavior {
    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            ScannerBehavior::SeedPatch => "SeedPatch",
            ScannerBehavior::Hardened => "Hardened",
            ScannerBehavior::LegacyRecheckWithoutLock => "LegacyRecheckWithoutLock",
        }
    }

    /// The replica's configuration.
    pub fn config(self) -> ContainerConfig {
        match self {
            ScannerBehavior::SeedPatch => ContainerConfig::new(ContainerBehavior::SeedPatch),
            ScannerBehavior::Hardened => ContainerConfig::new(ContainerBehavior::Hardened),
            ScannerBehavior::LegacyRecheckWithoutLock => ContainerConfig {
                scan_recheck: ScanRecheck::LegacyWithoutLock,
                ..ContainerConfig::new(ContainerBehavior::Hardened)
            },
        }
    }
}

/// A CLOSED replica holds blocks X and Y, with X's delete transaction pending; its
/// deleting service runs a round while its on-demand scanner scans it (two spawned
/// threads). Checks [`replica_healthy`] (no scan called a deleted block missing) and
/// [`deleted_blocks_not_live`] for X.
pub fn scan_during_block_deletion(behavior: ScannerBehavior) -> Result<(), Violation> {
    scan_during_block_deletion_on(&behavior.config())
}

/// [`scan_during_block_deletion`] over the replicas `factory` starts.
pub fn scan_during_block_deletion_on<F: ReplicaFactory>(factory: &F) -> Result<(), Violation> {
    let closed = ContainerState::Closed;
    let blocks = [(BLOCK_X, 2), (BLOCK_Y, 1)];
    let dn1 = Arc::new(
        factory
            .create(DatanodeId(1), closed, &blocks)
            .map_err(setup)?,
    );
    dn1.store_delete_transactions(&[transaction(1, &[BLOCK_X])])
        .map_err(setup)?;
    let deleting = {
        let dn1 = Arc::clone(&dn1);
        thread::spawn_named("deleting service", move || {
            dn1.run_block_deleting_pass().map_err(setup)?;
            Ok(Vec::<()>::new())
        })
    };
    let scanner = {
        let dn1 = Arc::clone(&dn1);
        thread::spawn_named("on-demand scanner", move || {
            dn1.scan_container().map_err(setup)?;
            Ok(Vec::new())
        })
    };
    join_all(vec![deleting, scanner])?;
    replica_healthy(dn1.as_ref())?;
    deleted_blocks_not_live(dn1.as_ref(), &[BLOCK_X])
}
