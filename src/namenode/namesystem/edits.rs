//! The edits a standby replays (`FSEditLogOp`), and why one can fail to apply.
//!
//! **The race (HDFS-2742).** The standby learns block state only from these edits, late:
//! a datanode's report can describe a block state that no replayed edit has produced yet.
//! **The fix** re-judges a block's postponed reports right after the edit that changes the
//! block, so each op here is also a point where the block's queue is drained.

use crate::namenode::{Block, BlockId, GenerationStamp};

/// Identifies a file (its inode id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(pub u64);

/// An edit the active logged, as the standby replays it (`FSEditLogLoader.applyEditLogOp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditOp {
    /// `OP_SET_GENSTAMP`: the generation-stamp counter.
    SetGenstamp(GenerationStamp),
    /// `OP_ADD` of a new file: created under construction, no blocks.
    AddFile {
        /// The file.
        file: FileId,
        /// Its replication factor.
        replication: usize,
    },
    /// `OP_ADD_BLOCK`: the penultimate block's final length, then a new last block.
    AddBlock {
        /// The file.
        file: FileId,
        /// The previous last block as the active has it now (id, GS, final length).
        penultimate: Option<Block>,
        /// The new last block.
        last: Block,
    },
    /// `OP_UPDATE_BLOCKS` (or `OP_ADD` with a block list): the whole block list.
    UpdateBlocks {
        /// The file.
        file: FileId,
        /// The list.
        blocks: Vec<Block>,
    },
    /// `OP_CLOSE`: the final block list; the file is complete.
    Close {
        /// The file.
        file: FileId,
        /// The list.
        blocks: Vec<Block>,
    },
    /// `OP_APPEND`: the file is reopened, its last block back under construction.
    Append {
        /// The file.
        file: FileId,
    },
    /// `OP_SET_REPLICATION`.
    SetReplication {
        /// The file.
        file: FileId,
        /// The new factor.
        replication: usize,
    },
    /// `OP_DELETE`: the file and its blocks go.
    Delete {
        /// The file.
        file: FileId,
    },
}

/// An edit that does not fit the namespace it is replayed on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// The edit names a file that does not exist.
    #[error("edit for unknown file {0:?}")]
    UnknownFile(FileId),
    /// `OP_ADD` of a file that exists.
    #[error("file {0:?} exists already")]
    FileExists(FileId),
    /// A block at a position has another id than the stored one.
    #[error("file {file:?} position {position}: edit has block {edit:?}, namespace {stored:?}")]
    BlockIdMismatch {
        /// The file.
        file: FileId,
        /// The position in the block list.
        position: usize,
        /// The stored id.
        stored: BlockId,
        /// The edit's id.
        edit: BlockId,
    },
    /// A block's GS changed where only the last block's may, or went backwards.
    #[error("block {block:?}: generation stamp {stored} cannot become {edit}")]
    GenerationStamp {
        /// The block.
        block: BlockId,
        /// The stored GS.
        stored: GenerationStamp,
        /// The edit's GS.
        edit: GenerationStamp,
    },
    /// A block id already in use by another file.
    #[error("block {0:?} already exists")]
    BlockExists(BlockId),
    /// An append to a file that is open, or has no block.
    #[error("file {0:?} cannot be reopened")]
    CannotReopen(FileId),
    /// The active refuses to close a file while a block is not COMPLETE: its last block
    /// is only COMMITTED until `minReplication` FINALIZED replicas are stored
    /// (`FSNamesystem.completeFile` returns false; the client retries).
    #[error("file {file:?} cannot close: block {block:?} is not complete")]
    FileNotComplete {
        /// The file.
        file: FileId,
        /// Its first block that is not COMPLETE.
        block: BlockId,
    },
}
