//! The edits a NameNode replays, from their text (`FSEditLogOp`'s `toString`): the
//! operation, its file, its last block with its genstamp, and the block it completes
//! (the last one of an `OP_CLOSE`, the one before a new block of an `OP_ADD_BLOCK`).

use std::collections::VecDeque;

use super::super::event::{At, Emitted};
use super::super::statement::{hdfs_block, number_after};
use super::statements::{COMPLETION, REPLAY};

/// The operation an edit's class stands for, for the edits whose text has no `opCode=`.
const OPS: [(&str, &str); 8] = [
    ("AddOp", "OP_ADD"),
    ("CloseOp", "OP_CLOSE"),
    ("AddBlockOp", "OP_ADD_BLOCK"),
    ("UpdateBlocksOp", "OP_UPDATE_BLOCKS"),
    ("AppendOp", "OP_APPEND"),
    ("DeleteOp", "OP_DELETE"),
    ("TruncateOp", "OP_TRUNCATE"),
    ("ConcatDeleteOp", "OP_CONCAT_DELETE"),
];

/// The events of the replayed edit `op` (its text).
pub(super) fn replayed(op: &str, at: At<'_>, out: &mut VecDeque<Emitted>) {
    let class = op.split(" [").next().unwrap_or("").trim();
    let Some(&(_, name)) = OPS.iter().find(|(c, _)| *c == class) else {
        return;
    };
    let (last, completes) = match name {
        "OP_ADD_BLOCK" => (
            value(op, "lastBlock=").and_then(|b| hdfs_block(&b)),
            value(op, "penultimateBlock=").and_then(|b| hdfs_block(&b)),
        ),
        "OP_ADD" | "OP_CLOSE" | "OP_UPDATE_BLOCKS" => {
            let last = last_block(op);
            (last, last.filter(|_| name == "OP_CLOSE"))
        }
        _ => (None, None),
    };
    let mut fields = vec![("op", name.to_owned())];
    fields.extend(value(op, "path=").map(|p| ("file", p)));
    if let Some((block, gs)) = last {
        fields.push(("block", format!("blk_{block}")));
        fields.push(("gs", gs.to_string()));
    }
    fields.extend(number_after(op, "txid=").map(|t| ("txid", t.to_string())));
    out.push_back(at.event(REPLAY, "edit applied", fields));
    if let Some((block, gs)) = completes {
        let fields = vec![
            ("block", format!("blk_{block}")),
            ("gs", gs.to_string()),
            ("how", "forced by replay".to_owned()),
        ];
        out.push_back(at.event(COMPLETION, "block completed", fields));
    }
}

/// The text after `key` up to the next `,` or `]`.
fn value(op: &str, key: &str) -> Option<String> {
    let (_, rest) = op.split_once(key)?;
    let end = rest.find([',', ']']).unwrap_or(rest.len());
    Some(rest[..end].trim().to_owned())
}

/// The last block of an edit's `blocks=[...]`.
fn last_block(op: &str) -> Option<(u64, u64)> {
    let (_, rest) = op.split_once("blocks=[")?;
    let list = &rest[..rest.find(']')?];
    hdfs_block(list.rsplit(',').next()?)
}
