//! The container replica's repair/deletion boundary (HDDS-16811): [`KeyValueContainerApi`],
//! one datanode's replica of a container as the delete-blocks command, the block deleting
//! service, reconciliation and the scanner use it, so that another implementation can stand
//! where this crate's `KeyValueHandler` and `KeyValueContainer` do and be checked the same
//! way.
//!
//! **The race.** The block deleting service deletes a block under the container write lock
//! while reconciliation copies the same block from a peer with no lock: deleted before its
//! repair, the block is copied back; deleted during it, its metadata is committed without
//! its file.
//!
//! **The fix** is what the trait's documentation asks of every implementation: every block
//! of an executed delete transaction is marked deleted in the checksum tree, metadata or
//! not, and a repaired block is committed only if the tree does not mark it deleted, the
//! check and the commit ordered against the deleting pass.
//!
//! Why the boundary is the whole replica rather than `ContainerController`: the race's
//! other party, a pass of `BlockDeletingService`, runs on the datanode's own schedule with
//! no SCM command, and the invariants read what no command returns (a block's metadata, its
//! file, its mark in the tree). The race lives inside one replica's lock discipline, so the
//! boundary is the replica with its three entry points, the read side its peers pull from
//! and a per-block view.

use std::collections::BTreeSet;

use super::error::ContainerError;
use super::reconcile::PeerDatanode;
use super::scanner::ScanFailure;
use super::store::BlockData;
use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{DatanodeId, LocalId};
use crate::sync::Arc;

/// What a scan found: the kinds of failure (`ContainerScanError.FailureType`), empty when
/// the replica is healthy; `None` when a scan of the replica was already in flight.
pub type ScanFindings = Option<BTreeSet<ScanFailure>>;

/// A block's entry in the replica's checksum tree (`ContainerChecksumTreeManager`'s file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TreeEntry {
    /// The tree has no entry for the block.
    Absent,
    /// The tree lists the block as live.
    Live,
    /// The tree marks the block deleted.
    Deleted,
}

/// One datanode's replica of a container as HDDS-16811's parties use it: the
/// delete-blocks command (`DeleteBlocksCommandHandler`), a pass of the block deleting
/// service (`BlockDeletingService`'s `BlockDeletingTask`), reconciliation with peers
/// (`KeyValueHandler.reconcileContainer`) and the on-demand scanner; the read side its
/// peers' reconciliations pull from ([`PeerDatanode`]); and what the invariants look at
/// (a block's metadata, its file, its tree entry, the data checksum, the state).
///
/// Every entry point may be called from its own thread at any time: the deleting service,
/// a reconciliation and the command handler run at once on a datanode.
///
/// The boundary carries none of this crate's internals: no store, no lock, no tree manager.
/// What crosses it are the protocol's types: a [`DeletedBlocksTransaction`], a block's
/// metadata ([`BlockData`], `ContainerProtos.BlockData`), and the tree a peer serves, the
/// bytes of [`merkle::encode`](super::merkle::encode) of a
/// [`ContainerChecksumInfo`](super::merkle::ContainerChecksumInfo) (the stand-in of
/// `ContainerProtos.ContainerChecksumInfo`), whose checksums a peer compares, so an
/// implementation computes them with [`ChunkInfo::for_data`](super::store::ChunkInfo::for_data)
/// and the tree's own functions.
///
/// # What a conforming replica guarantees (HDDS-16811)
///
/// - **Store transactions.** [`store_delete_transactions`](Self::store_delete_transactions)
///   keeps each transaction pending (`DeleteBlocksCommandHandler`); a transaction already
///   stored is acknowledged again and kept once. Pending transactions survive a
///   [`restart`](Self::restart).
/// - **Record every deletion (part 1).** A deleting pass (`BlockDeletingTask`) executes the
///   pending transactions of a CLOSED or QUASI_CLOSED replica: each block's metadata and
///   file are removed, and every block of the transaction is marked deleted in the tree,
///   also one that has no metadata here (`deleteUnreferenced`): a deleted entry keeps the
///   checksum it had, a new one gets that of a block without chunks. The transaction is then
///   no longer pending, and a replica left without block metadata is marked empty for good
///   (as one started CLOSED or QUASI_CLOSED without any is).
/// - **Never restore, never orphan (part 2).** Reconciliation copies each block that is live
///   in the peer's tree and absent or different in its own, skipping blocks its tree marks
///   deleted; a repaired block's chunk writes are finished (the cached handle closed) before
///   its metadata is committed, and the commit happens only if the tree does not mark the
///   block deleted, that check and the commit ordered against every deleting pass (upstream:
///   under the container read lock, the pass holds the write lock). A block deleted before
///   or during its repair is left with neither metadata nor file; a deleted entry of the
///   peer's tree is adopted in its own. At most one reconciliation of the replica runs at a
///   time (a second is refused, as the replication supervisor drops it).
/// - **Scan.** [`reconcile_container`](Self::reconcile_container) ends with an on-demand
///   scan; a scan that finds a block whose metadata lists bytes its file does not hold
///   (MISSING_DATA_FILE, MISSING_CHUNK) marks the replica UNHEALTHY.
/// - **Serve peers.** [`peer`](Self::peer) answers a peer's reconciliation from the same
///   replica: the tree file (built from metadata if missing), only for a CLOSED,
///   QUASI_CLOSED or UNHEALTHY replica, block metadata and chunk bytes.
/// - **Restart.** [`restart`](Self::restart) is a datanode process restart: a fresh
///   replica of what this one persisted (metadata, block files, tree file, pending
///   transactions, state), nothing of its memory.
///
/// `ContainerBehavior::SeedPatch` meets every item; `ContainerBehavior::Hardened` also
/// closes the races beyond the seed that the suites check when `Hardened` is the
/// reference, and applies a peer's deletions of blocks live here (HDDS-11765), which the
/// differential compares.
///
/// # Synchronization
///
/// Use [`crate::sync`] (or `hadoop_ref::sync` from another crate) for every lock and
/// atomic: loom and shuttle see only those.
///
/// # Example
///
/// This crate's replica, started by its behavior as a [`ReplicaFactory`]: dn1 never had
/// block 1, executes its deletion, then reconciles with dn2, which still has it.
///
/// ```
/// # hadoop_ref::sync::run_example(|| {
/// use hadoop_ref::datanode::container::ContainerBehavior::SeedPatch;
/// use hadoop_ref::datanode::container::{KeyValueContainerApi, ReplicaFactory, TreeEntry};
/// use hadoop_ref::hdds::container::ContainerState::QuasiClosed;
/// use hadoop_ref::hdds::ids::DatanodeId;
/// use hadoop_ref::sim::replica_node::transaction;
///
/// let dn1 = SeedPatch.create(DatanodeId(1), QuasiClosed, &[])?;
/// let dn2 = SeedPatch.create(DatanodeId(2), QuasiClosed, &[(1, 2)])?;
/// dn1.store_delete_transactions(&[transaction(1, &[1])])?;
/// dn1.run_block_deleting_pass()?;
/// assert_eq!(dn1.tree_entry(1)?, TreeEntry::Deleted);
/// dn1.reconcile_container(&[dn2.peer()])?;
/// assert_eq!(dn1.block(1)?, None);
/// assert_eq!(dn1.block_file_len(1)?, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # });
/// ```
pub trait KeyValueContainerApi: Send + Sync + 'static {
    /// The datanode this replica is on.
    fn datanode(&self) -> DatanodeId;

    /// `DeleteBlocksCommandHandler`: stores the delete transactions of this container.
    fn store_delete_transactions(
        &self,
        transactions: &[DeletedBlocksTransaction],
    ) -> Result<(), ContainerError>;

    /// One pass of the block deleting service over this replica (`BlockDeletingTask`).
    fn run_block_deleting_pass(&self) -> Result<(), ContainerError>;

    /// `KeyValueHandler.reconcileContainer`: reconciles with each of `peers` in turn, then
    /// (whatever the outcome) scans on demand. `Err` when the reconciliation itself was
    /// refused or failed before any peer round; the scan's findings otherwise.
    fn reconcile_container(
        &self,
        peers: &[Arc<dyn PeerDatanode>],
    ) -> Result<ScanFindings, ContainerError>;

    /// The reconciliation without the scan that ends it (`reconcileContainerInternal`).
    fn reconcile_without_scan(&self, peers: &[Arc<dyn PeerDatanode>])
    -> Result<(), ContainerError>;

    /// An on-demand scan of the replica.
    fn scan_container(&self) -> Result<ScanFindings, ContainerError>;

    /// This replica as its peers' reconciliations read it.
    fn peer(&self) -> Arc<dyn PeerDatanode>;

    /// A datanode process restart: the replica loaded again from what it persisted.
    fn restart(&self) -> Result<Self, ContainerError>
    where
        Self: Sized;

    /// The metadata of `block`, `None` if it has none.
    fn block(&self, block: LocalId) -> Result<Option<BlockData>, ContainerError>;

    /// The metadata of every block, in id order.
    fn blocks(&self) -> Result<Vec<BlockData>, ContainerError>;

    /// The length of `block`'s file, `None` if it has none.
    fn block_file_len(&self, block: LocalId) -> Result<Option<u64>, ContainerError>;

    /// The bytes of `block`'s file at `offset`, at most `length` of them; `None` without a
    /// file.
    fn read_block_file(
        &self,
        block: LocalId,
        offset: u64,
        length: u64,
    ) -> Result<Option<Vec<u8>>, ContainerError>;

    /// The tree file's entry for `block`.
    fn tree_entry(&self, block: LocalId) -> Result<TreeEntry, ContainerError>;

    /// The tree file's root, the data checksum replicas compare (`None` before a tree with
    /// a root was written).
    fn data_checksum(&self) -> Result<Option<u64>, ContainerError>;

    /// The replica's state.
    fn state(&self) -> Result<ContainerState, ContainerError>;

    /// Delete transactions stored and not yet executed.
    fn pending_transactions(&self) -> u64;

    /// Whether the replica was marked empty.
    fn is_empty(&self) -> Result<bool, ContainerError>;
}

/// Starts a replica for a scenario or a conformance run: datanode `datanode`'s replica of
/// the scenario's container in `state`, holding `blocks` (id, chunk count) as a client
/// wrote them before the close, and its tree built from metadata (as a quasi-close does).
///
/// Block `b` with `n` chunks is `block_data(b, n)` of
/// [`sim::replica_node`](crate::sim::replica_node), chunk `i` holding `chunk_bytes(b, i)`.
/// `ContainerBehavior` and `ContainerConfig` are factories (this crate's replica), and so
/// is any function or closure with the signature of [`ReplicaFactory::create`].
pub trait ReplicaFactory {
    /// What it starts.
    type Replica: KeyValueContainerApi;

    /// A freshly started replica.
    fn create(
        &self,
        datanode: DatanodeId,
        state: ContainerState,
        blocks: &[(LocalId, usize)],
    ) -> Result<Self::Replica, ContainerError>;
}

impl<R, F> ReplicaFactory for F
where
    R: KeyValueContainerApi,
    F: Fn(DatanodeId, ContainerState, &[(LocalId, usize)]) -> Result<R, ContainerError>,
{
    type Replica = R;

    fn create(
        &self,
        datanode: DatanodeId,
        state: ContainerState,
        blocks: &[(LocalId, usize)],
    ) -> Result<R, ContainerError> {
        self(datanode, state, blocks)
    }
}

/// A shared replica is a replica: scenarios hand clones of one to their threads.
impl<R: KeyValueContainerApi> KeyValueContainerApi for Arc<R> {
    fn datanode(&self) -> DatanodeId {
        (**self).datanode()
    }
    fn store_delete_transactions(
        &self,
        transactions: &[DeletedBlocksTransaction],
    ) -> Result<(), ContainerError> {
        (**self).store_delete_transactions(transactions)
    }
    fn run_block_deleting_pass(&self) -> Result<(), ContainerError> {
        (**self).run_block_deleting_pass()
    }
    fn reconcile_container(
        &self,
        peers: &[Arc<dyn PeerDatanode>],
    ) -> Result<ScanFindings, ContainerError> {
        (**self).reconcile_container(peers)
    }
    fn reconcile_without_scan(
        &self,
        peers: &[Arc<dyn PeerDatanode>],
    ) -> Result<(), ContainerError> {
        (**self).reconcile_without_scan(peers)
    }
    fn scan_container(&self) -> Result<ScanFindings, ContainerError> {
        (**self).scan_container()
    }
    fn peer(&self) -> Arc<dyn PeerDatanode> {
        (**self).peer()
    }
    fn restart(&self) -> Result<Self, ContainerError> {
        (**self).restart().map(Arc::new)
    }
    fn block(&self, block: LocalId) -> Result<Option<BlockData>, ContainerError> {
        (**self).block(block)
    }
    fn blocks(&self) -> Result<Vec<BlockData>, ContainerError> {
        (**self).blocks()
    }
    fn block_file_len(&self, block: LocalId) -> Result<Option<u64>, ContainerError> {
        (**self).block_file_len(block)
    }
    fn read_block_file(
        &self,
        block: LocalId,
        offset: u64,
        length: u64,
    ) -> Result<Option<Vec<u8>>, ContainerError> {
        (**self).read_block_file(block, offset, length)
    }
    fn tree_entry(&self, block: LocalId) -> Result<TreeEntry, ContainerError> {
        (**self).tree_entry(block)
    }
    fn data_checksum(&self) -> Result<Option<u64>, ContainerError> {
        (**self).data_checksum()
    }
    fn state(&self) -> Result<ContainerState, ContainerError> {
        (**self).state()
    }
    fn pending_transactions(&self) -> u64 {
        (**self).pending_transactions()
    }
    fn is_empty(&self) -> Result<bool, ContainerError> {
        (**self).is_empty()
    }
}
