//! The shared edit log of an HA pair (the quorum journal's role): the active appends the
//! edits it applied, the standby's [`EditLogTailer`](super::edit_tailer::EditLogTailer)
//! reads them late (HDFS-2742).
//!
//! Writes are fenced by an epoch, as the journal quorum's promised epoch fences them: the
//! NameNode that becomes active calls [`SharedEditLog::fence`] first, and from then on
//! the deposed active's appends are refused, so the log never interleaves two writers.
//! An active applies an edit to its own namespace and appends it in one step under the
//! log's lock, so the log's order is the order the active applied.
//!
//! ```
//! # hadoop_ref::sync::run_example(|| {
//! use hadoop_ref::namenode::edit_log::{NameNodeId, SharedEditLog};
//! use hadoop_ref::namenode::namesystem::{EditOp, NamenodeConfig, Namesystem};
//!
//! let log = SharedEditLog::new(1_000);
//! let active = Namesystem::active(NamenodeConfig::default(), 0);
//! log.fence(NameNodeId(0));
//! log.log_edits(NameNodeId(0), &[EditOp::SetGenstamp(1)], |ops| active.apply_edits(ops))?;
//! assert_eq!(log.read_from(0, 10), vec![EditOp::SetGenstamp(1)]);
//! # Ok::<(), hadoop_ref::namenode::edit_log::EditLogError>(())
//! # });
//! ```

use std::fmt;

use super::namesystem::{EditOp, ReplayError};
use crate::sync::Mutex;

pub use super::{NameNodeId, TxId};

/// Why an append was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditLogError {
    /// The writer does not hold the current epoch: another NameNode became active.
    #[error("{writer:?} is fenced: the log's writer is {holder:?}")]
    Fenced {
        /// Who tried to append.
        writer: NameNodeId,
        /// Who holds the epoch.
        holder: Option<NameNodeId>,
    },
    /// The log holds its capacity of edits.
    #[error("the edit log is full ({capacity} edits)")]
    Full {
        /// The bound.
        capacity: usize,
    },
    /// The writer's own namespace refused the batch's edit at `index`; none of the batch
    /// was applied or logged.
    #[error("edit {index} of the batch does not fit the writer's namespace: {error}")]
    Replay {
        /// The refused edit's index in the batch.
        index: usize,
        /// Why.
        error: ReplayError,
    },
}

#[derive(Debug)]
struct Journal {
    ops: Vec<EditOp>,
    writer: Option<NameNodeId>,
    epoch: u64,
}

/// The edit log both NameNodes share, bounded to `capacity` edits (segments are never
/// purged here: a scenario's log is short, and a production log would roll and purge
/// segments the standby has checkpointed).
#[derive(Debug)]
pub struct SharedEditLog {
    journal: Mutex<Journal>,
    capacity: usize,
}

impl SharedEditLog {
    /// An empty log with no writer, holding at most `capacity` edits.
    pub fn new(capacity: usize) -> Self {
        Self {
            journal: Mutex::new(Journal {
                ops: Vec::new(),
                writer: None,
                epoch: 0,
            }),
            capacity,
        }
    }

    /// Makes `writer` the only NameNode whose appends are accepted and returns the new
    /// epoch (`newEpoch`): the first step of becoming active.
    pub fn fence(&self, writer: NameNodeId) -> u64 {
        let mut journal = self.journal.lock();
        journal.epoch += 1;
        journal.writer = Some(writer);
        journal.epoch
    }

    /// The NameNode holding the current epoch.
    pub fn writer(&self) -> Option<NameNodeId> {
        self.journal.lock().writer
    }

    /// Applies `ops` to the writer's namespace with `apply` and appends them, in one step
    /// under the log's lock; a batch `apply` refuses (it applies none of it) is not
    /// logged. Refused without calling `apply` when `writer` is fenced or the edits would
    /// not fit.
    pub fn log_edits(
        &self,
        writer: NameNodeId,
        ops: &[EditOp],
        apply: impl FnOnce(&[EditOp]) -> Result<usize, (usize, ReplayError)>,
    ) -> Result<TxId, EditLogError> {
        let mut journal = self.journal.lock();
        if journal.writer != Some(writer) {
            return Err(EditLogError::Fenced {
                writer,
                holder: journal.writer,
            });
        }
        if journal.ops.len() + ops.len() > self.capacity {
            return Err(EditLogError::Full {
                capacity: self.capacity,
            });
        }
        let result = apply(ops);
        let logged = match &result {
            Ok(applied) => &ops[..(*applied).min(ops.len())],
            Err(_) => &[],
        };
        let first = journal.ops.len() as TxId + 1;
        journal.ops.extend_from_slice(logged);
        let end = journal.ops.len() as TxId;
        if !logged.is_empty() {
            crate::events::debug!(
                node = %writer,
                txid = %TxIds(first, end),
                ops = %Ops(logged),
                "edits logged"
            );
        }
        match result {
            Ok(_) => Ok(end),
            Err((index, error)) => Err(EditLogError::Replay { index, error }),
        }
    }

    /// Up to `max_ops` edits from `position` on (fewer at the end of the log).
    pub fn read_from(&self, position: TxId, max_ops: usize) -> Vec<EditOp> {
        let journal = self.journal.lock();
        let start =
            usize::try_from(position).map_or(journal.ops.len(), |p| p.min(journal.ops.len()));
        let end = start.saturating_add(max_ops).min(journal.ops.len());
        journal.ops[start..end].to_vec()
    }

    /// The position after the last edit.
    pub fn end(&self) -> TxId {
        self.journal.lock().ops.len() as TxId
    }
}

/// Transaction ids `first..=last`, shown `4` or `4..5` in an event.
struct TxIds(TxId, TxId);

impl fmt::Display for TxIds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == self.1 {
            write!(f, "{}", self.0)
        } else {
            write!(f, "{}..{}", self.0, self.1)
        }
    }
}

/// Edits, shown `OP_SET_GENSTAMP_V2(6),OP_UPDATE_BLOCKS(blk_100_6)` in an event.
struct Ops<'a>(&'a [EditOp]);

impl fmt::Display for Ops<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, op) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{op}")?;
        }
        Ok(())
    }
}
