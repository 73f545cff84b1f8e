//! The container checksum tree (`ContainerMerkleTreeWriter`, the `ContainerMerkleTree`
//! message, `ContainerChecksumTreeManager`): the tree, its diff against a peer's and the
//! tree file.
//!
//! **The race (HDDS-16811).** The tree is the only record of executed deletions: a
//! deleted entry is the one thing that stops reconciliation from copying a block back
//! from a peer, and a block deleted without metadata used to leave no entry at all.
//! **The fix** marks such a block deleted in the tree
//! ([`ContainerMerkleTree::mark_deleted_keeping_checksum`]), so the root moves and every
//! peer's diff sees the deletion.
//!
//! - [`tree`]: chunk, block and root checksums and the tree's entries.
//! - [`diff`](mod@diff): what reconciliation must pull from a peer, and which deletions it
//!   adopts.
//! - [`codec`]: the tree file's encoding and decoding.

pub mod codec;
pub mod diff;
pub mod tree;

pub use codec::{TreeDecodeError, decode, encode};
pub use diff::{ContainerDiffReport, ContainerIdMismatch, diff};
pub use tree::{
    BlockMerkle, ChunkMerkle, ContainerChecksumInfo, ContainerMerkleTree, block_checksum,
    chunk_checksum,
};
