//! Which code a container replica runs ([`ContainerBehavior`]): the seed's patch alone, the
//! seed's patch with this crate's additions, or the code before the patch; and the switch of
//! each addition ([`ContainerConfig`]), with the race it closes.
//!
//! **The race (HDDS-16811).** The block deleting service deletes a block while
//! reconciliation copies it from a peer: the block is restored, or its metadata committed
//! without its file. **The fix** is the seed's patch on top of HDDS-16808's
//! ([`ContainerBehavior::SeedPatch`]); [`ContainerBehavior::Hardened`] adds what this crate
//! found beyond it, one switch per addition.

/// Which code the replica runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContainerBehavior {
    /// The seed's patch (both parts) on top of HDDS-16808's, and nothing else: the deleting
    /// round records blocks without metadata as deleted and refreshes the data checksum in
    /// Ozone's order (`updateAndGetContainerChecksum`: compare and set after the tree write);
    /// a failed unlink is handled as `BlockDeletingTask.deleteTransactions` does (metadata
    /// removed, no tree entry); `reconcileChunksPerBlock` commits whatever chunks it holds
    /// (a partial block too), after `finishWriteChunks`, under the read lock, only if the
    /// tree file, re-read for every block, does not mark the block deleted, and removes the
    /// pulled chunks under that read lock when it does; no peer deletion is applied.
    /// Every [`ContainerConfig`] switch is off.
    SeedPatch,
    /// [`SeedPatch`](Self::SeedPatch) with every addition of this crate on, each a
    /// [`ContainerConfig`] switch that names the race it closes.
    Hardened,
    /// The code before both patches: the deleting service records only blocks that had
    /// metadata and leaves the data checksum alone; reconciliation commits with no lock and
    /// finishes its writes after the commit. Every switch is off.
    Legacy,
}

impl ContainerBehavior {
    /// Every behavior: the seed's patch, the hardened code, the legacy code.
    pub const ALL: [ContainerBehavior; 3] = [
        ContainerBehavior::SeedPatch,
        ContainerBehavior::Hardened,
        ContainerBehavior::Legacy,
    ];

    /// The two behaviors with the seed's patch.
    pub const PATCHED: [ContainerBehavior; 2] =
        [ContainerBehavior::SeedPatch, ContainerBehavior::Hardened];

    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            ContainerBehavior::SeedPatch => "SeedPatch",
            ContainerBehavior::Hardened => "Hardened",
            ContainerBehavior::Legacy => "Legacy",
        }
    }

    /// Whether the seed's patch is in (every behavior but [`Legacy`](Self::Legacy)).
    pub fn is_patched(self) -> bool {
        self != ContainerBehavior::Legacy
    }
}

/// A datanode's container configuration: the behavior, and one switch per addition of this
/// crate beyond the seed's patch. [`ContainerConfig::new`] sets every switch on for
/// [`ContainerBehavior::Hardened`] and off otherwise; the switches act on the patched
/// code only (the legacy code runs Ozone's code before the patch whatever they say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContainerConfig {
    /// The seed's patch, hardened, or legacy code.
    pub behavior: ContainerBehavior,
    /// A repair whose pull stopped early (a peer error, a short read, a hole, a failed
    /// write) fails the block whole: nothing is committed, the pulled chunks are removed,
    /// and the block's chunks enter the reconciliation's tree only once its commit
    /// succeeded. Off is the patched `reconcileChunksPerBlock`: the chunks it holds (local
    /// and pulled) are committed, and each pulled chunk enters the tree as it is written.
    /// Closes a race only where two reconciliations of one container run at once, which
    /// the handler (as Ozone's replication supervisor) prevents: a partial commit landing
    /// after the other's whole commit, under a tree that lists the whole block, loses the
    /// block's later chunks to its metadata for good (loom and shuttle:
    /// `concurrent_reconciliations_unguarded`, `SeedPatch` caught). A deterministic test
    /// shows both ends (`a_peer_error_mid_block_fails_the_block_whole_only_when_hardened`).
    pub fail_incomplete_blocks: bool,
    /// The commit also requires the block file to hold every chunk it lists. Closes: a
    /// deleting round that unlinks a block file after the repair finished its writes and
    /// then fails its tree write leaves no deleted entry, so the tree check passes and
    /// the repair commits metadata without its file (shuttle:
    /// `failed_deletion_tree_write_never_orphans_a_repair`, `SeedPatch` caught; too many
    /// scheduling points in its fault injection for loom).
    pub commit_requires_block_file: bool,
    /// A block whose file could not be unlinked is recorded as deleted in the tree (with
    /// its metadata's checksum). Off is `BlockDeletingTask`: its metadata goes, and it gets
    /// no entry. Closes no race between threads: after such a failure a scan drops the
    /// block's live entry and the next reconciliation copies it back from a peer that has
    /// not deleted it yet (the deterministic test
    /// `an_unrecorded_failed_unlink_lets_reconciliation_restore_the_block`).
    pub record_failed_unlinks: bool,
    /// The removal of what a failed repair pulled runs under the container write lock,
    /// never below what is committed. Off is where the seed's patch removes the chunks of a
    /// refused commit: under the read lock the commit check holds. Closes: with repairs
    /// failed whole ([`fail_incomplete_blocks`](Self::fail_incomplete_blocks)) or refused
    /// by the file check, a cleanup under the read lock reads no metadata while another
    /// reconciliation, also under the read lock, commits the block, then unlinks its file
    /// (loom and shuttle: `concurrent_reconciliations_unguarded`, variant
    /// `HardenedCleanupUnderReadLock` caught). The seed's patch alone only removes the
    /// chunks of a block the tree marks deleted, which nothing can commit again, so it has
    /// no such race. No deterministic test: the window is inside the cleanup.
    pub cleanup_under_write_lock: bool,
    /// The refresh of the data checksum from a new tree root (HDDS-16808) runs inside the
    /// tree write's critical section. Off is Ozone's order (`updateAndGetContainerChecksum`
    /// reads the old value, writes the tree, then compares and sets), where two tree
    /// writes of one replica at once — a deleting round and a reconciliation — leave the
    /// in-memory and persisted value on the older root (loom and shuttle:
    /// `data_checksum_follows_concurrent_tree_writes`, `SeedPatch` caught).
    pub refresh_checksum_in_tree_write: bool,
    /// The commit check re-reads the tree file only when a tree write happened since the
    /// last read (a write counter in the tree manager, the follow-up the seed proposes).
    /// Off is the seed's patch: the tree file is read and parsed for every repaired block.
    /// No race: a cost measure (`benches/reconcile.rs`); loom shows the check holds both
    /// ways (`delete_during_repair`, `SeedPatch` and `Hardened`), and a test shows the
    /// re-read skipped (`the_generation_check_skips_rereading_an_unchanged_tree`).
    pub tree_generation_check: bool,
    /// HDDS-11765 (open upstream): a block a peer's tree marks deleted while it is live
    /// here is deleted here too. Closes no race of the patched code: it removes a block
    /// restored before the patch (or by the legacy code), which the seed leaves in place
    /// (the deterministic test
    /// `a_restored_block_is_removed_when_peer_deletions_are_applied`).
    pub apply_peer_deletions: bool,
    /// Every deletion the tree file records is also recorded in the container database, in
    /// the batch (or with the commit) that removes the block's metadata: a deleting
    /// round's, a peer deletion applied, a peer's deleted entry adopted. A tree write that
    /// finds a recorded deletion missing from the tree (a tree file lost, or unreadable and
    /// rewritten from an empty tree, as Ozone does) puts it back, and the commit of a
    /// repaired block also refuses a block the database records deleted. Off is Ozone's
    /// layout, where the tree file is the only record of a deletion. Closes no race
    /// between threads: a damaged or lost tree file let a scan and a reconciliation
    /// restore a deleted block (`a_lost_tree_file_restores_a_deleted_block_unless_recorded`).
    pub deletion_records_in_database: bool,
    /// A replica is recovered when it is loaded, before it serves anything
    /// ([`ContainerStore::recover_on_open`](super::store::ContainerStore::recover_on_open),
    /// `disk/recovery.rs`): an orphan block file of a closed replica is reclaimed, and a
    /// deletion a crash interrupted (the tree file or a pending transaction says so) is
    /// completed. Beyond upstream, where RocksDB replays its log and nothing else is
    /// resolved. Closes the crash-point gap of the hardened peer deletion (HDDS-11765):
    /// interrupted after its tree write, it left the block live for good, since no diff
    /// shows it again. Only disk stores have anything to recover.
    pub recover_on_open: bool,
    /// Block ids one deleting task processes at most
    /// (`hdds.datanode.block.deleting.limit.per.interval`).
    pub block_deleting_limit_per_interval: usize,
    /// How the scanner looks again at a block whose file it found missing (HDDS-7300).
    pub scan_recheck: ScanRecheck,
}

/// How the container scanner (`KeyValueContainerCheck.scanData`) looks again at a block
/// whose file it found missing, before it calls the replica UNHEALTHY.
///
/// **The race (HDDS-7300).** The deleting task unlinks a block's file, then removes its
/// metadata in a batch, all under the container write lock; the scanner reads the
/// metadata with no lock. Looked up again without the lock, the block's metadata can
/// still be there while its file is already gone: MISSING_DATA_FILE, the replica UNHEALTHY.
/// **The fix** (`getBlockDataFromDBWithLock`) looks it up under the read lock, which waits
/// for the deleting task's batch: a block whose metadata is gone was deleted concurrently
/// and is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ScanRecheck {
    /// Ozone since HDDS-7300: under the container read lock.
    #[default]
    UnderReadLock,
    /// Ozone before HDDS-7300: the metadata read again with no lock.
    LegacyWithoutLock,
}

impl ContainerConfig {
    /// The configuration of `behavior`: every switch on for
    /// [`ContainerBehavior::Hardened`], off for the others (as in Ozone).
    pub fn new(behavior: ContainerBehavior) -> Self {
        let on = behavior == ContainerBehavior::Hardened;
        Self {
            behavior,
            fail_incomplete_blocks: on,
            commit_requires_block_file: on,
            record_failed_unlinks: on,
            cleanup_under_write_lock: on,
            refresh_checksum_in_tree_write: on,
            tree_generation_check: on,
            apply_peer_deletions: on,
            deletion_records_in_database: on,
            recover_on_open: on,
            block_deleting_limit_per_interval: 20_000,
            scan_recheck: ScanRecheck::UnderReadLock,
        }
    }
}

impl ContainerConfig {
    /// Whether deletions are recorded in the database too: the patched code with
    /// [`deletion_records_in_database`](Self::deletion_records_in_database).
    pub fn records_deletions_in_database(&self) -> bool {
        self.behavior.is_patched() && self.deletion_records_in_database
    }

    /// Whether the data checksum is refreshed inside the tree write: the patched code with
    /// [`refresh_checksum_in_tree_write`](Self::refresh_checksum_in_tree_write); the legacy
    /// code refreshes in Ozone's order.
    pub fn refreshes_in_tree_write(&self) -> bool {
        self.behavior.is_patched() && self.refresh_checksum_in_tree_write
    }
}

impl Default for ContainerConfig {
    /// The hardened configuration.
    fn default() -> Self {
        Self::new(ContainerBehavior::Hardened)
    }
}
