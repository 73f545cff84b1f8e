//! The edits a standby replays (`FSEditLogOp`), and why one can fail to apply.
//!
//! **The race (HDFS-2742).** The standby learns block state only from these edits, late:
//! a datanode's report can describe a block state that no replayed edit has produced yet.
//! **The fix** re-judges a block's postponed reports right after the edit that changes the
//! block, so each op here is also a point where the block's queue is drained.

use std::fmt;

use crate::namenode::evaluation::BlockUcState;
use crate::namenode::{Block, BlockId, GenerationStamp, StorageId};

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
    /// `OP_UPDATE_BLOCKS` (or `OP_ADD` with a block list): the whole block list. An active
    /// logs it for a pipeline update (`FSNamesystem.updatePipeline`: the last block at a
    /// new generation stamp), an abandoned last block or a persisted length.
    UpdateBlocks {
        /// The file.
        file: FileId,
        /// The list.
        blocks: Vec<Block>,
        /// The storages of the last block's new pipeline (`updatePipeline`'s new nodes and
        /// storage ids): the active that applies a generation-stamp change makes them the
        /// block's expected replicas. HDFS's `OP_UPDATE_BLOCKS` does not carry them, so
        /// replay never reads them, and an update that keeps the generation stamp ignores
        /// them.
        pipeline: Vec<StorageId>,
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

impl EditOp {
    /// The op's name in the edit log (`OP_ADD_BLOCK`).
    pub fn name(&self) -> &'static str {
        match self {
            EditOp::SetGenstamp(_) => "OP_SET_GENSTAMP_V2",
            EditOp::AddFile { .. } => "OP_ADD",
            EditOp::AddBlock { .. } => "OP_ADD_BLOCK",
            EditOp::UpdateBlocks { .. } => "OP_UPDATE_BLOCKS",
            EditOp::Close { .. } => "OP_CLOSE",
            EditOp::Append { .. } => "OP_APPEND",
            EditOp::SetReplication { .. } => "OP_SET_REPLICATION",
            EditOp::Delete { .. } => "OP_DELETE",
        }
    }

    /// The file the op names, if any.
    pub fn file(&self) -> Option<FileId> {
        match self {
            EditOp::SetGenstamp(_) => None,
            EditOp::AddFile { file, .. }
            | EditOp::AddBlock { file, .. }
            | EditOp::UpdateBlocks { file, .. }
            | EditOp::Close { file, .. }
            | EditOp::Append { file }
            | EditOp::SetReplication { file, .. }
            | EditOp::Delete { file } => Some(*file),
        }
    }

    /// The last block the op names (the new block, or the last of a block list), if any.
    pub fn last_block(&self) -> Option<Block> {
        match self {
            EditOp::AddBlock { last, .. } => Some(*last),
            EditOp::UpdateBlocks { blocks, .. } | EditOp::Close { blocks, .. } => {
                blocks.last().copied()
            }
            _ => None,
        }
    }
}

impl fmt::Display for EditOp {
    /// The op's name and its key argument, compact, for a failure's story:
    /// `OP_SET_GENSTAMP_V2(6)`, `OP_ADD(file1)`, `OP_CLOSE(blk_100_6)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name();
        match self {
            EditOp::SetGenstamp(gs) => write!(f, "{name}({gs})"),
            EditOp::SetReplication { file, replication } => {
                write!(f, "{name}({file},{replication})")
            }
            _ => match self.last_block() {
                Some(block) => write!(f, "{name}({block})"),
                None => match self.file() {
                    Some(file) => write!(f, "{name}({file})"),
                    None => f.write_str(name),
                },
            },
        }
    }
}

impl fmt::Display for FileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::hdds::ids::write_id(f, "file", self.0)
    }
}

crate::events::event_id!(FileId, "file", |id| id.0);

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
    /// An edit's block list names one block twice (the active never logs such a list).
    #[error("file {file:?}: the edit lists block {block:?} twice")]
    DuplicateBlock {
        /// The file.
        file: FileId,
        /// The block listed twice.
        block: BlockId,
    },
    /// `OP_CLOSE` with another number of blocks than the file has (HDFS's replay takes
    /// one that drops an under-construction block; the active never logs one).
    #[error("file {file:?}: the close lists {edit} block(s), the file has {stored}")]
    CloseChangesBlockList {
        /// The file.
        file: FileId,
        /// Blocks the file has.
        stored: usize,
        /// Blocks the close lists.
        edit: usize,
    },
    /// A file lists a block the namespace has no entry for: the namespace is inconsistent,
    /// and the edit is refused rather than applied on top of it.
    #[error("file {file:?} lists block {block:?}, which the namespace does not hold")]
    MissingBlock {
        /// The file.
        file: FileId,
        /// The block without an entry.
        block: BlockId,
    },
    /// An append to a file that is open, or has no block.
    #[error("file {0:?} cannot be reopened")]
    CannotReopen(FileId),
    /// The active refuses a new generation stamp for a block that is not under
    /// construction in an open file (`FSNamesystem.checkUCBlock`): only a block being
    /// written gets a new pipeline.
    #[error("file {file:?}: block {block:?} is {state}, not under construction")]
    NotUnderConstruction {
        /// The file.
        file: FileId,
        /// Its last block.
        block: BlockId,
        /// The block's state.
        state: BlockUcState,
    },
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
