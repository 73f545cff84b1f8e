//! Crash points of a replica kept on disk (HDDS-16811's operations under a crash): every
//! mutating file operation (create, write, fsync, rename, unlink, truncate) and every
//! database batch of a delete pass, a repair (pulled chunks, the commit, a peer's
//! deletion applied), a tree write and a scan is a numbered crash point.
//!
//! **The race.** A datanode that stops between two durable steps must come back without
//! a deleted block live again, without losing a committed one, and without a replica
//! UNHEALTHY for what was only an interrupted step. **The check**: for each crash point,
//! the replica is reopened from its directory (recovery on open runs), then recovered in
//! both orders (the deleting service first, or a reconciliation with its scan first), and
//! every property of [`check_recovered`] must hold.
//!
//! Each point is tried twice ([`CrashMode`]): as a process crash, which keeps every file
//! operation that went through (the operating system still holds it), and as a power
//! loss, which keeps only what was made durable (a file's bytes as of its last fsync, a
//! directory's entries as of its last fsync; [`CrashFs`]).

use std::path::Path;

use super::invariants::{
    data_checksum_follows_the_tree, deleted_blocks_not_live, live_blocks_present,
    no_file_without_metadata, no_metadata_without_file, replica_healthy,
};
use super::seed::setup;
use crate::datanode::container::disk::DiskStore;
use crate::datanode::container::{ContainerConfig, ContainerError};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{DatanodeId, LocalId};
use crate::scenarios::Violation;
use crate::sim::crash_fs::CrashFs;
use crate::sim::replica_node::{CONTAINER, ReplicaNode, transaction};

/// Live on both replicas.
const LIVE: LocalId = 10;
/// On both; deleted on dn1 by its pending transaction 1.
const DELETED_HERE: LocalId = 11;
/// Missing on dn1, live on dn2: a repair pulls it.
const MISSING_HERE: LocalId = 12;
/// On dn1, deleted on dn2 (its tree says so): a repair applies the deletion.
const DELETED_ON_PEER: LocalId = 13;
const CHUNKS: usize = 2;

/// The operation a crash interrupts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashedOperation {
    /// One run of the block deleting service.
    DeletePass,
    /// A reconciliation with the peer, without its scan.
    Repair,
    /// A tree write from metadata (`updateAndGetContainerChecksumFromMetadata`).
    TreeWrite,
    /// An on-demand scan.
    Scan,
}

impl CrashedOperation {
    /// Every operation.
    pub const ALL: [CrashedOperation; 4] = [
        CrashedOperation::DeletePass,
        CrashedOperation::Repair,
        CrashedOperation::TreeWrite,
        CrashedOperation::Scan,
    ];
}

/// How the datanode stops at the crash point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashMode {
    /// The process stops: every file operation that went through stays.
    ProcessCrash,
    /// The power goes: only what was fsynced stays.
    PowerLoss,
}

/// What runs first after the restart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryOrder {
    /// The block deleting service, then a reconciliation and its scan.
    DeletingServiceFirst,
    /// A reconciliation and its scan, then the block deleting service.
    ReconcileFirst,
}

/// One crash point tried, and what the recovered replica showed.
#[derive(Debug)]
pub struct CrashOutcome {
    /// The operation interrupted.
    pub operation: CrashedOperation,
    /// Mutating file operations and database batches that completed before the crash.
    pub point: usize,
    /// How the datanode stopped.
    pub mode: CrashMode,
    /// What ran first after the restart.
    pub order: RecoveryOrder,
    /// The first property that failed, if any.
    pub result: Result<(), Violation>,
}

/// Tries every crash point of every operation in both modes and both orders, each in a
/// directory of its own under `dir`.
pub fn crash_points(config: ContainerConfig, dir: &Path) -> Result<Vec<CrashOutcome>, Violation> {
    let mut outcomes = Vec::new();
    for operation in CrashedOperation::ALL {
        let points = mutations_of(config, operation, &dir.join(format!("{operation:?}")))?;
        for point in 0..=points {
            for mode in [CrashMode::ProcessCrash, CrashMode::PowerLoss] {
                for order in [
                    RecoveryOrder::DeletingServiceFirst,
                    RecoveryOrder::ReconcileFirst,
                ] {
                    let crash = Crash {
                        operation,
                        point,
                        mode,
                    };
                    let run_dir = dir.join(format!("{operation:?}-{point}-{mode:?}-{order:?}"));
                    outcomes.push(CrashOutcome {
                        operation,
                        point,
                        mode,
                        order,
                        result: crash_and_recover(config, crash, order, &run_dir)?,
                    });
                }
            }
        }
    }
    Ok(outcomes)
}

/// Where and how the datanode stops.
#[derive(Debug, Clone, Copy)]
struct Crash {
    operation: CrashedOperation,
    point: usize,
    mode: CrashMode,
}

/// dn2, the peer: a replica in memory with every block, which executed the deletion of
/// [`DELETED_ON_PEER`].
fn peer(config: ContainerConfig) -> Result<ReplicaNode, Violation> {
    let blocks = [LIVE, DELETED_HERE, MISSING_HERE, DELETED_ON_PEER].map(|b| (b, CHUNKS));
    let dn2 = ReplicaNode::new(DatanodeId(2), config, ContainerState::QuasiClosed, &blocks)
        .map_err(setup)?;
    dn2.store_transactions(&[transaction(2, &[DELETED_ON_PEER])])
        .map_err(setup)?;
    dn2.delete_blocks().map_err(setup)?;
    Ok(dn2)
}

/// dn1 on disk in `dir`, on a crash-injecting file system settled after the set-up, with
/// transaction 1 pending.
fn replica_on_disk(
    config: ContainerConfig,
    dir: &Path,
) -> Result<(ReplicaNode, CrashFs), Violation> {
    let fs = CrashFs::new();
    let disk = DiskStore::open_on(
        fs.shared(),
        dir,
        CONTAINER,
        Some(ContainerState::QuasiClosed),
    )
    .map_err(store_setup)?;
    let database = disk.database_path();
    let blocks = [LIVE, DELETED_HERE, DELETED_ON_PEER].map(|b| (b, CHUNKS));
    let dn1 =
        ReplicaNode::with_store(DatanodeId(1), config, disk.shared(), &blocks).map_err(setup)?;
    dn1.store_transactions(&[transaction(1, &[DELETED_HERE])])
        .map_err(setup)?;
    fs.settle(dir, &[database]).map_err(io_setup)?;
    Ok((dn1, fs))
}

/// A set-up failure of the store.
fn store_setup(error: crate::datanode::container::store::StoreError) -> Violation {
    setup(ContainerError::store(CONTAINER)(error))
}

/// A set-up failure of the file system under the store.
fn io_setup(error: std::io::Error) -> Violation {
    store_setup(crate::datanode::container::store::StoreError::Io {
        what: "the crash-point file system".into(),
        reason: error.to_string(),
    })
}

/// Runs `operation` on dn1; an error is the crash's doing.
fn run(operation: CrashedOperation, dn1: &ReplicaNode, dn2: &ReplicaNode) {
    let _ = match operation {
        CrashedOperation::DeletePass => dn1.delete_blocks(),
        CrashedOperation::Repair => dn1
            .handler
            .reconcile_without_scan(CONTAINER, &[dn2.peer()])
            .map(|_| ()),
        CrashedOperation::TreeWrite => dn1
            .container()
            .and_then(|c| c.update_checksum_from_metadata())
            .map(|_| ()),
        CrashedOperation::Scan => dn1.handler.scan(CONTAINER).map(|_| ()),
    };
}

/// The mutating file operations and database batches of `operation` run to its end.
fn mutations_of(
    config: ContainerConfig,
    operation: CrashedOperation,
    dir: &Path,
) -> Result<usize, Violation> {
    let dn2 = peer(config)?;
    let (dn1, fs) = replica_on_disk(config, dir)?;
    fs.crash_after(usize::MAX);
    run(operation, &dn1, &dn2);
    Ok(fs.mutations())
}

/// Stops dn1 in `crash`'s operation at its point and mode, restarts it from `dir` and
/// recovers it in `order`.
fn crash_and_recover(
    config: ContainerConfig,
    crash: Crash,
    order: RecoveryOrder,
    dir: &Path,
) -> Result<Result<(), Violation>, Violation> {
    let dn2 = peer(config)?;
    let (dn1, fs) = replica_on_disk(config, dir)?;
    fs.crash_after(crash.point);
    run(crash.operation, &dn1, &dn2);
    // The stopped process's handles go with it (the database's lock too).
    drop(dn1);
    if crash.mode == CrashMode::PowerLoss {
        fs.power_loss().map_err(io_setup)?;
    }
    let store = DiskStore::open_existing(dir, CONTAINER).map_err(store_setup)?;
    let dn1 = ReplicaNode::reopened(DatanodeId(1), config, store.shared()).map_err(setup)?;
    let steps = match order {
        RecoveryOrder::DeletingServiceFirst => dn1
            .delete_blocks()
            .and_then(|()| dn1.reconcile(&[&dn2]).map(|_| ())),
        RecoveryOrder::ReconcileFirst => dn1.reconcile(&[&dn2]).and_then(|_| dn1.delete_blocks()),
    };
    if let Err(error) = steps {
        return Ok(Err(setup(error)));
    }
    Ok(check_recovered(&dn1, config))
}

/// The properties of a recovered replica: no committed live block lost, no executed
/// deletion undone (the peer's too, when `config` applies peer deletions, HDDS-11765),
/// no metadata without its file, no file without metadata, not UNHEALTHY, and the data
/// checksum in memory, in the database and in the tree agree.
pub fn check_recovered(dn1: &ReplicaNode, config: ContainerConfig) -> Result<(), Violation> {
    live_blocks_present(
        std::slice::from_ref(dn1),
        &[(LIVE, CHUNKS), (MISSING_HERE, CHUNKS)],
    )?;
    let peer_deletions = config.behavior.is_patched() && config.apply_peer_deletions;
    let deleted: &[LocalId] = if peer_deletions {
        &[DELETED_HERE, DELETED_ON_PEER]
    } else {
        &[DELETED_HERE]
    };
    deleted_blocks_not_live(dn1, deleted)?;
    no_metadata_without_file(dn1)?;
    no_file_without_metadata(dn1)?;
    replica_healthy(dn1)?;
    data_checksum_follows_the_tree(dn1)
}
