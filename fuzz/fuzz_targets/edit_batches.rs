//! NameNode edit batches built from arbitrary bytes, logged by an active: a batch is
//! applied whole or refused whole (nothing applied, nothing logged), and a standby
//! replaying the log reaches the active's namespace. Never a panic.
//!
//! Each edit is three bytes: the kind, a file (of 3), and an argument that picks a
//! block (of 6), a generation stamp or a factor; a zero byte ends a batch. Small spaces
//! make edits collide, as in the fast suite's proptest.
#![no_main]

use hadoop_ref::namenode::edit_log::{EditLogError, NameNodeId, SharedEditLog};
use hadoop_ref::namenode::namesystem::{
    EditOp, FileId, NamenodeConfig, Namesystem, NamesystemBehavior,
};
use hadoop_ref::namenode::{Block, BlockId, DatanodeId, StorageId};
use libfuzzer_sys::fuzz_target;

fn block(arg: u8) -> Block {
    Block {
        id: BlockId(i64::from(arg % 6)),
        gs: i64::from(arg / 6 % 3) + 1,
        length: u64::from(arg / 18 % 3),
    }
}

fn blocks(arg: u8) -> Vec<Block> {
    (0..arg % 3)
        .map(|i| block(arg.wrapping_add(i * 7)))
        .collect()
}

/// A new pipeline of up to three datanodes, picked by the argument's high bits.
fn pipeline(arg: u8) -> Vec<StorageId> {
    (1..=3u64)
        .filter(|dn| (arg >> (4 + dn)) & 1 == 1)
        .map(|dn| StorageId {
            datanode: DatanodeId(dn),
            index: 0,
        })
        .collect()
}

fn edit([kind, file, arg]: [u8; 3]) -> EditOp {
    let file = FileId(u64::from(file % 3));
    match kind % 8 {
        0 => EditOp::SetGenstamp(i64::from(arg % 4)),
        1 => EditOp::AddFile {
            file,
            replication: usize::from(arg % 4),
        },
        2 => EditOp::AddBlock {
            file,
            penultimate: (arg & 1 == 1).then(|| block(arg / 2)),
            last: block(arg),
        },
        3 => EditOp::UpdateBlocks {
            file,
            blocks: blocks(arg),
            pipeline: pipeline(arg),
        },
        4 => EditOp::Close {
            file,
            blocks: blocks(arg),
        },
        5 => EditOp::Append { file },
        6 => EditOp::SetReplication {
            file,
            replication: usize::from(arg % 4),
        },
        _ => EditOp::Delete { file },
    }
}

fn batches(input: &[u8]) -> Vec<Vec<EditOp>> {
    input
        .split(|byte| *byte == 0)
        .map(|batch| {
            batch
                .chunks_exact(3)
                .map(|c| edit([c[0], c[1], c[2]]))
                .collect()
        })
        .filter(|batch: &Vec<EditOp>| !batch.is_empty())
        .take(64)
        .collect()
}

fuzz_target!(|input: &[u8]| {
    let log = SharedEditLog::new(4096);
    let writer = NameNodeId(0);
    log.fence(writer);
    let active = Namesystem::active(NamenodeConfig::default(), 1);
    for batch in batches(input) {
        let before = active.view();
        let result = log.log_edits(writer, &batch, |ops| active.apply_edits(ops));
        if let Err(EditLogError::Replay { .. }) = result
            && batch.len() > 1
        {
            assert_eq!(active.view(), before, "a refused batch changes nothing");
        }
    }
    let config = NamenodeConfig {
        behavior: NamesystemBehavior::Trunk,
        ..NamenodeConfig::default()
    };
    let standby = Namesystem::standby(config, 1);
    let logged = log.read_from(0, 4096);
    assert_eq!(standby.apply_edits(&logged), Ok(logged.len()));
    assert_eq!(standby.view().files, active.view().files);
});
