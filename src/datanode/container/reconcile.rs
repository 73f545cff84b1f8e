//! Reconciliation of a replica with its peers (`KeyValueHandler.reconcileContainer`).
//!
//! **The race (HDDS-16811).** Reconciliation pulls a block's chunks from a peer and
//! commits its metadata with no container lock, then finishes the writes: a deletion of
//! the block before or during its repair leaves it restored, or its metadata without file.
//! **The fix (part 2)** finishes the chunk writes (closing the cached handle) before the
//! commit, then commits under the container read lock only if the tree does not mark the
//! block deleted; otherwise the pulled chunks are removed and the block fails.
//!
//! [`SeedPatch`](super::config::ContainerBehavior::SeedPatch) is the patched
//! `reconcileChunksPerBlock`: whatever chunks the block holds are committed, also when the
//! pull stopped early, and the chunks of a refused commit are removed under the commit's
//! read lock. Beyond the seed, each behind its
//! [`ContainerConfig`](super::config::ContainerConfig) switch and all on in
//! [`Hardened`](super::config::ContainerBehavior::Hardened): a pull that stopped early
//! fails the block whole (`fail_incomplete_blocks`); the commit also requires the block
//! file to hold the pulled data (`commit_requires_block_file`); the removal of what a
//! failed repair pulled runs under the write lock (`cleanup_under_write_lock`); and a
//! block that a peer's tree marks deleted while it is live here is deleted here too
//! (HDDS-11765, `apply_peer_deletions`), under the container write lock, recording the
//! deletion in the tree before deleting.
//!
//! Callers run at most one reconciliation per container (the handler refuses a second,
//! as Ozone's replication supervisor does). Should two run all the same, the hardened
//! removal of what a failed repair pulled never cuts below what is committed, so neither
//! undoes the other.
//!
//! Not modelled: the update of the container's BCSID from the repaired blocks that
//! `reconcileContainer` does last, and the incremental container report it sends then.

mod commit;
mod peer;
mod pull;
mod steps;

pub use peer::{BlockRepair, PeerDatanode, PeerDirectory, PeerRound, ReconcileReport};
pub use pull::reconcile_chunks_per_block;
pub use steps::{Reconciliation, reconcile_container};
