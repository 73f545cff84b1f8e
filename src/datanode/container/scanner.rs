//! The on-demand container scanner (`OnDemandContainerScanner`, `KeyValueContainerCheck`),
//! which reconciliation triggers when it ends (`KeyValueHandler.reconcileContainer`).
//!
//! **The race (HDDS-16811).** The scan is where the seed's second result shows: block
//! metadata committed by a reconciliation whose file the deleting service had unlinked
//! reads as MISSING_DATA_FILE, and the replica is marked UNHEALTHY.
//! **The fix** is upstream of the scan (the reconciliation commit); the scan itself keeps
//! Ozone's rules: a missing file is re-checked under the read lock, and a block whose
//! metadata is gone by then was deleted concurrently and is not an error.

use std::collections::BTreeSet;

use super::checksum_tree::TreeWriter;
use super::config::ScanRecheck;
use super::error::ContainerError;
use super::merkle::{ChunkMerkle, ContainerMerkleTree, chunk_checksum};
use super::replica::KeyValueContainer;
use super::store::{BlockData, ChunkInfo, window_checksums};
use crate::datanode::work_queue::WorkQueue;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, LocalId};
use crate::sync::{Arc, Mutex};

/// The kinds of scan failure (`ContainerScanError.FailureType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScanFailure {
    /// The container directory is missing.
    MissingContainerDir,
    /// The metadata directory is missing.
    MissingMetadataDir,
    /// The container file is missing.
    MissingContainerFile,
    /// The chunks directory is missing.
    MissingChunksDir,
    /// A block with metadata has no file.
    MissingDataFile,
    /// The container file does not parse.
    CorruptContainerFile,
    /// A chunk's data does not match its checksums.
    CorruptChunk,
    /// Reading at a chunk's offset yields nothing.
    MissingChunk,
    /// A chunk is shorter than its metadata says, and the bytes read match.
    InconsistentChunkLength,
    /// The database cannot be read.
    InaccessibleDb,
    /// The scan could not write its result.
    WriteFailure,
}

/// One failure of a scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError {
    /// What failed.
    pub kind: ScanFailure,
    /// The block, if the failure is a block's.
    pub block: Option<LocalId>,
    /// The chunk's offset, if the failure is a chunk's.
    pub offset: Option<u64>,
}

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanReport {
    /// The failures (empty for a healthy replica).
    pub errors: Vec<ScanError>,
    /// Whether a data scan ran (else only metadata was checked).
    pub data_scanned: bool,
    /// Whether the scan marked the replica UNHEALTHY.
    pub marked_unhealthy: bool,
}

impl ScanReport {
    /// Whether any failure is of `kind`.
    pub fn has(&self, kind: ScanFailure) -> bool {
        self.errors.iter().any(|e| e.kind == kind)
    }
}

/// Scans an on-demand scanner queues at most: one per replica is all it ever holds, and a
/// datanode holds far fewer replicas here.
pub const SCAN_QUEUE_LIMIT: usize = 4096;

/// The on-demand scanner of one datanode. A request for a container whose scan is queued
/// or running is dropped (`OnDemandContainerScanner.scanContainer` keeps the set of
/// containers in flight), so scans of one container never overlap. A request either runs
/// at once on the caller's thread ([`scan_container_without_gap`]) or is queued for the
/// scanner's own thread ([`request`], [`run_next`]), as upstream's executor runs it.
///
/// [`scan_container_without_gap`]: Self::scan_container_without_gap
/// [`request`]: Self::request
/// [`run_next`]: Self::run_next
#[derive(Debug)]
pub struct OnDemandContainerScanner {
    in_flight: Mutex<BTreeSet<ContainerId>>,
    queue: WorkQueue<Arc<KeyValueContainer>>,
}

impl Default for OnDemandContainerScanner {
    fn default() -> Self {
        Self {
            in_flight: Mutex::new(BTreeSet::new()),
            queue: WorkQueue::new(SCAN_QUEUE_LIMIT),
        }
    }
}

impl OnDemandContainerScanner {
    /// A scanner with nothing in flight.
    pub fn new() -> Self {
        Self::default()
    }

    /// `scanContainerWithoutGap`: scans now on the caller's thread; `None` if a scan of
    /// the container was already in flight (the request is dropped).
    pub fn scan_container_without_gap(
        &self,
        container: &KeyValueContainer,
    ) -> Option<Result<ScanReport, ContainerError>> {
        if !self.in_flight.lock().insert(container.id()) {
            return None;
        }
        let result = scan_container(container);
        self.in_flight.lock().remove(&container.id());
        Some(result)
    }

    /// `scanContainerWithoutGap` as the datanode runs it: queued for the scanner's thread.
    /// False when a scan of the container is already queued or running, or the queue is
    /// full (the request is dropped, as upstream drops it).
    pub fn request(&self, container: &Arc<KeyValueContainer>) -> bool {
        if !self.in_flight.lock().insert(container.id()) {
            return false;
        }
        if self.queue.push(Arc::clone(container)).is_err() {
            self.in_flight.lock().remove(&container.id());
            return false;
        }
        true
    }

    /// Runs the oldest queued scan on the caller's thread, if one is queued.
    pub fn run_next(&self) -> Option<(ContainerId, Result<ScanReport, ContainerError>)> {
        let container = self.queue.try_take()?;
        Some(self.scan_queued(&container))
    }

    /// The scanner's thread: waits for a queued scan and runs it; `None` once `stopped`
    /// (after [`wake`](Self::wake)).
    pub fn run_waiting(
        &self,
        stopped: impl Fn() -> bool,
    ) -> Option<(ContainerId, Result<ScanReport, ContainerError>)> {
        let container = self.queue.take(stopped)?;
        Some(self.scan_queued(&container))
    }

    /// Wakes the scanner's thread, so it checks whether to stop.
    pub fn wake(&self) {
        self.queue.wake();
    }

    /// Scans queued, not yet running.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Feeds `state` the containers whose scans are queued, in order.
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        self.queue.for_each(|container| container.id().hash(state));
    }

    /// Forgets what was queued (a restart of the process loses it).
    pub fn clear(&self) {
        while let Some(container) = self.queue.try_take() {
            self.in_flight.lock().remove(&container.id());
        }
    }

    fn scan_queued(
        &self,
        container: &KeyValueContainer,
    ) -> (ContainerId, Result<ScanReport, ContainerError>) {
        let result = scan_container(container);
        self.in_flight.lock().remove(&container.id());
        (container.id(), result)
    }
}

/// `shouldScanData`: CLOSED, QUASI_CLOSED and UNHEALTHY replicas get a data scan.
pub fn should_scan_data(state: ContainerState) -> bool {
    state.is_closed_for_data()
}

/// `ContainerScanHelper.scanData`: checks every block with metadata against its file,
/// writes the scanned tree (merged, so deleted entries survive and live entries of blocks
/// it did not scan are dropped) and marks the replica UNHEALTHY on any failure. Emits
/// `container scanned` with the failures and whether the replica was marked UNHEALTHY.
pub fn scan_container(container: &KeyValueContainer) -> Result<ScanReport, ContainerError> {
    let result = scan_data(container);
    if let Ok(report) = &result
        && report.data_scanned
    {
        crate::events::debug!(
            node = %container.datanode(),
            container = container.id().0,
            errors = %ScanErrorsText(&report.errors),
            unhealthy = report.marked_unhealthy,
            "container scanned"
        );
    }
    result
}

/// [`scan_container`]'s work.
fn scan_data(container: &KeyValueContainer) -> Result<ScanReport, ContainerError> {
    let mut report = ScanReport::default();
    if !should_scan_data(container.state()) {
        return Ok(report);
    }
    report.data_scanned = true;
    let blocks = match container.store().blocks() {
        Ok(blocks) => blocks,
        Err(_) => {
            report.errors.push(ScanError {
                kind: ScanFailure::InaccessibleDb,
                block: None,
                offset: None,
            });
            container.mark_unhealthy()?;
            report.marked_unhealthy = true;
            return Ok(report);
        }
    };
    let mut tree = ContainerMerkleTree::new();
    for block in &blocks {
        let errors = scan_block(container, block, &mut tree);
        if !errors.is_empty() && still_has_metadata(container, block.local_id, &errors) {
            report.errors.extend(errors);
        }
    }
    tree.compute_root();
    if let Err(error) = container.update_and_get_container_checksum(TreeWriter::Scan, &tree) {
        report.errors.push(ScanError {
            kind: ScanFailure::WriteFailure,
            block: None,
            offset: None,
        });
        container.mark_unhealthy()?;
        report.marked_unhealthy = true;
        return Err(error);
    }
    if !report.errors.is_empty() {
        container.mark_unhealthy()?;
        report.marked_unhealthy = true;
    }
    Ok(report)
}

/// A scan's failures as its event shows them: `[MissingDataFile@1, CorruptChunk@2+8]`
/// (kind, block, chunk offset).
struct ScanErrorsText<'a>(&'a [ScanError]);

impl std::fmt::Display for ScanErrorsText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[")?;
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{:?}", error.kind)?;
            if let Some(block) = error.block {
                write!(f, "@{block}")?;
            }
            if let Some(offset) = error.offset {
                write!(f, "+{offset}")?;
            }
        }
        f.write_str("]")
    }
}

/// After a missing file: is the block still there, looked up under the read lock (with
/// no lock before HDDS-7300, [`ScanRecheck::LegacyWithoutLock`])? If its metadata is
/// gone it was deleted during the scan and its errors are discarded.
fn still_has_metadata(container: &KeyValueContainer, block: LocalId, errors: &[ScanError]) -> bool {
    if !errors
        .iter()
        .any(|e| e.kind == ScanFailure::MissingDataFile)
    {
        return true;
    }
    let _read = match container.config().scan_recheck {
        ScanRecheck::UnderReadLock => Some(container.read_lock()),
        ScanRecheck::LegacyWithoutLock => None,
    };
    // A database error keeps the errors: the block cannot be shown to be gone.
    container
        .store()
        .get_block(block)
        .map_or(true, |m| m.is_some())
}

fn block_error(kind: ScanFailure, block: LocalId, offset: Option<u64>) -> ScanError {
    ScanError {
        kind,
        block: Some(block),
        offset,
    }
}

/// `scanBlock`: the block gets a tree entry only if its file exists and it has a chunk.
fn scan_block(
    container: &KeyValueContainer,
    block: &BlockData,
    tree: &mut ContainerMerkleTree,
) -> Vec<ScanError> {
    let id = block.local_id;
    let Some(first) = block.chunks.first() else {
        return Vec::new();
    };
    let missing_file = || {
        if first.length > 0 {
            vec![block_error(ScanFailure::MissingDataFile, id, None)]
        } else {
            Vec::new()
        }
    };
    match container.store().block_file_len(id) {
        Ok(Some(_)) => {}
        Ok(None) => return missing_file(),
        Err(_) => return vec![block_error(ScanFailure::CorruptChunk, id, None)],
    }
    let mut errors = Vec::new();
    let mut entries = Vec::new();
    for chunk in &block.chunks {
        match scan_chunk(container, id, chunk) {
            ChunkScan::FileGone => return missing_file(),
            ChunkScan::Unread(error) => errors.push(error),
            ChunkScan::Read { entry, error } => {
                errors.extend(error);
                entries.push(entry);
            }
        }
    }
    tree.add_block(id);
    tree.add_chunk_entries(id, entries);
    errors
}

/// What reading one chunk of a block found.
enum ChunkScan {
    /// The block file is gone (unlinked since the block's scan began).
    FileGone,
    /// The chunk could not be read: no tree entry.
    Unread(ScanError),
    /// The chunk was read: its tree entry, with its failure if it is not healthy.
    Read {
        entry: ChunkMerkle,
        error: Option<ScanError>,
    },
}

/// Reads `chunk` of `block` and checks its bytes against its stored checksums.
fn scan_chunk(container: &KeyValueContainer, block: LocalId, chunk: &ChunkInfo) -> ChunkScan {
    let at = Some(chunk.offset);
    let data = match container
        .store()
        .read_block(block, chunk.offset, chunk.length)
    {
        Ok(Some(data)) => data,
        Ok(None) => return ChunkScan::FileGone,
        Err(_) => return ChunkScan::Unread(block_error(ScanFailure::CorruptChunk, block, at)),
    };
    if data.is_empty() && chunk.length > 0 {
        return ChunkScan::Unread(block_error(ScanFailure::MissingChunk, block, at));
    }
    let observed = window_checksums(&data, chunk.bytes_per_checksum);
    let failure = chunk_failure(chunk, data.len() as u64, &observed);
    ChunkScan::Read {
        entry: ChunkMerkle {
            offset: chunk.offset,
            length: chunk.length,
            data_checksum: chunk_checksum(&observed),
            checksum_matches: failure.is_none(),
        },
        error: failure.map(|kind| block_error(kind, block, at)),
    }
}

/// How the `read` bytes of `chunk`, whose window checksums are `observed`, fail it: a
/// short chunk whose bytes match is of inconsistent length, any other mismatch corrupt.
fn chunk_failure(chunk: &ChunkInfo, read: u64, observed: &[u32]) -> Option<ScanFailure> {
    if read < chunk.length {
        let matched = observed.len() <= chunk.checksums.len()
            && observed.iter().zip(&chunk.checksums).all(|(a, b)| a == b);
        Some(if matched {
            ScanFailure::InconsistentChunkLength
        } else {
            ScanFailure::CorruptChunk
        })
    } else if observed != chunk.checksums.as_slice() {
        Some(ScanFailure::CorruptChunk)
    } else {
        None
    }
}
