//! The blocks and edits the standby scenarios share: one file, one block id, and the
//! edits an active logs to create a file with its first block.

use crate::namenode::namesystem::{EditOp, FileId};
use crate::namenode::{Block, BlockId, GenerationStamp};

/// Length of every finished block in the scenarios.
pub const BLOCK_LENGTH: u64 = 4096;

/// The file of the scripted schedules.
pub(super) const FILE: FileId = FileId(1);

/// The block of the scripted schedules.
pub(super) const BLOCK: BlockId = BlockId(100);

/// Block `id` at generation stamp `gs` with `length` bytes.
pub(super) fn block(id: BlockId, gs: GenerationStamp, length: u64) -> Block {
    Block { id, gs, length }
}

/// The edits that create `file` with `replication` and allocate its `first` block: the
/// generation stamp, the file, the block (`OP_SET_GENSTAMP`, `OP_ADD`, `OP_ADD_BLOCK`).
pub(super) fn open_file(file: FileId, replication: usize, first: Block) -> Vec<EditOp> {
    vec![
        EditOp::SetGenstamp(first.gs),
        EditOp::AddFile { file, replication },
        EditOp::AddBlock {
            file,
            penultimate: None,
            last: first,
        },
    ]
}
