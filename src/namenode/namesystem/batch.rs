//! A batch of edits is applied whole or not at all.
//!
//! **The gap.** Replay checks each edit before it changes anything, so a refused edit
//! changes nothing; but the edits before it in the same batch would stay applied, and on
//! the active (which applies and logs a batch in one step) an unlogged half-batch could
//! leave its namespace and the shared log apart. **The rule here**: a batch is first
//! replayed on a shadow, a copy of just the part of the namespace the batch reads, with
//! no events; a batch the shadow refuses is refused whole, before the namespace changes.
//! HDFS's `FSEditLogLoader` has no such step (it stops at the failing op); this is the
//! crate's hardening, listed in `FIDELITY.md`.

use super::edits::{EditOp, ReplayError};
use super::state::State;
use super::view::INodeFile;
use crate::namenode::{BlockId, GenerationStamp};

impl State {
    /// Replays one batch (one `EditLogTailer.doTailEdits`): all of it, returning how many
    /// edits were applied, or none of it, returning the index of the first edit that does
    /// not fit with its error.
    pub(super) fn apply_batch(&mut self, ops: &[EditOp]) -> Result<usize, (usize, ReplayError)> {
        if ops.len() > 1
            && let Err((index, error)) = self.shadow_for(ops).dry_run(ops)
        {
            crate::events::debug!(
                node = self.node(),
                edits = ops.len(),
                refused = index,
                op = ops[index].name(),
                why = %error,
                "edit batch refused"
            );
            return Err((index, error));
        }
        self.batch_max_gs = GenerationStamp::MIN;
        let mut result = Ok(ops.len());
        for (index, op) in ops.iter().enumerate() {
            if let Err(error) = self.apply(op) {
                // Only a single edit gets here (a longer batch passed the shadow), and a
                // refused edit changes nothing.
                result = Err((index, error));
                break;
            }
        }
        self.end_of_batch();
        result
    }

    /// A state holding copies of the files `ops` name, their blocks and the blocks `ops`
    /// name, with this state's settings and counters, and nothing else: every check of
    /// replay reads only these.
    fn shadow_for(&self, ops: &[EditOp]) -> State {
        let mut shadow = State::new(self.config.clone(), self.gs_counter, self.ha);
        shadow.postpone = self.postpone;
        shadow.impending_gs = self.impending_gs;
        shadow.catching_up = self.catching_up;
        shadow.last_applied_txid = self.last_applied_txid;
        shadow.safe_mode = self.safe_mode;
        for op in ops {
            if let Some(file) = op.file()
                && let Some(inode) = self.files.get(&file)
            {
                shadow.files.insert(file, inode.clone());
                self.copy_blocks(&mut shadow, inode);
            }
            for id in named_blocks(op) {
                if let Some(block) = self.blocks.get(&id) {
                    shadow.blocks.insert(id, block.clone());
                }
            }
        }
        shadow
    }

    fn copy_blocks(&self, shadow: &mut State, inode: &INodeFile) {
        for id in &inode.blocks {
            if let Some(block) = self.blocks.get(id) {
                shadow.blocks.insert(*id, block.clone());
            }
        }
    }

    /// Replays `ops` on this (shadow) state with no events, stopping at the first edit
    /// that does not fit.
    fn dry_run(mut self, ops: &[EditOp]) -> Result<(), (usize, ReplayError)> {
        crate::events::silenced(|| {
            for (index, op) in ops.iter().enumerate() {
                self.apply(op).map_err(|error| (index, error))?;
            }
            Ok(())
        })
    }
}

/// The ids of the blocks an edit names.
fn named_blocks(op: &EditOp) -> Vec<BlockId> {
    match op {
        EditOp::AddBlock {
            penultimate, last, ..
        } => penultimate.iter().chain([last]).map(|b| b.id).collect(),
        EditOp::UpdateBlocks { blocks, .. } | EditOp::Close { blocks, .. } => {
            blocks.iter().map(|b| b.id).collect()
        }
        _ => Vec::new(),
    }
}
