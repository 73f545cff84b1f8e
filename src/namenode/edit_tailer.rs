//! The standby's `EditLogTailer`: replays the shared edit log into the namesystem in
//! batches, each under the namesystem lock (HDFS-2742).
//!
//! **The race.** Between two batches (and, with capped batches, between any two edits)
//! datanode reports reach the standby on their own threads, so a report can be processed
//! before or after the edit it was produced under; the failover must not judge what is
//! queued while the tailer is still mid-log.
//!
//! **The fix.** Reports are queued and re-judged by the namesystem's drains (see
//! [`Namesystem`](super::namesystem::Namesystem)); here, failover first [stops](EditLogTailer::stop) the tailer, which
//! waits for a batch in progress, so the catch-up starts exactly where the tailer ended.
//!
//! [`EditLogTailer::tail_once`] is one `doTailEdits`; the checkers call it on threads of
//! their own. [`TailerThread`] is the production driver, pacing by
//! `dfs.ha.tail-edits.period`.
//!
//! ```
//! # hadoop_ref::sync::run_example(|| {
//! use hadoop_ref::namenode::edit_log::{NameNodeId, SharedEditLog};
//! use hadoop_ref::namenode::edit_tailer::EditLogTailer;
//! use hadoop_ref::namenode::namesystem::{EditOp, NamenodeConfig, Namesystem};
//! use hadoop_ref::sync::Arc;
//!
//! let log = Arc::new(SharedEditLog::new(1_000));
//! let active = Namesystem::active(NamenodeConfig::default(), 0);
//! log.fence(NameNodeId(0));
//! log.log_edits(NameNodeId(0), &[EditOp::SetGenstamp(7)], |ops| active.apply_edits(ops))?;
//! let standby = Arc::new(Namesystem::standby(NamenodeConfig::default(), 0));
//! let tailer = EditLogTailer::new(Arc::clone(&log), standby.clone(), 0, 100);
//! assert_eq!(tailer.tail_once(), Ok(1));
//! // Replayed, the GS edit only records an impending stamp (HDFS-14941).
//! assert_eq!(standby.impending_generation_stamp(), 7);
//! assert_eq!(standby.generation_stamp(), 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # });
//! ```

use std::time::Duration;

use super::edit_log::{EditLogError, NameNodeId, SharedEditLog, TxId};
use super::namesystem::{EditOp, NamesystemApi, ReplayError};
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::channel::{self, Sender};
use crate::sync::{Arc, Mutex, stop_requested, thread};

/// A batch the tailer could not apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("edit at position {position} does not fit the standby's namespace: {error}")]
pub struct TailError {
    /// The position of the refused edit: the edits of its batch before it were not
    /// applied either, and the tailer stays at the batch's start.
    pub position: TxId,
    /// Why.
    pub error: ReplayError,
}

#[derive(Debug)]
struct TailerState {
    position: TxId,
    running: bool,
}

/// Tails the shared log into one NameNode's namesystem.
#[derive(Debug)]
pub struct EditLogTailer {
    log: Arc<SharedEditLog>,
    namesystem: Arc<dyn NamesystemApi>,
    /// `dfs.ha.tail-edits.max-txns-per-lock`: edits per batch (HDFS default unlimited;
    /// small values let reports interleave between any two edits).
    max_txns_per_lock: usize,
    state: Mutex<TailerState>,
}

impl EditLogTailer {
    /// A running tailer that starts reading at `position`, at most `max_txns_per_lock`
    /// edits per batch (at least 1).
    pub fn new(
        log: Arc<SharedEditLog>,
        namesystem: Arc<dyn NamesystemApi>,
        position: TxId,
        max_txns_per_lock: usize,
    ) -> Self {
        Self {
            log,
            namesystem,
            max_txns_per_lock: max_txns_per_lock.max(1),
            state: Mutex::new(TailerState {
                position,
                running: true,
            }),
        }
    }

    /// One `doTailEdits`: applies the next batch under the namesystem lock and returns how
    /// many edits it applied (0 when stopped or caught up). A batch with an edit that does
    /// not fit is applied not at all, and the tailer stays at its start.
    pub fn tail_once(&self) -> Result<usize, TailError> {
        let mut state = self.state.lock();
        if !state.running {
            return Ok(0);
        }
        let batch = self.log.read_from(state.position, self.max_txns_per_lock);
        if batch.is_empty() {
            return Ok(0);
        }
        let result = self.namesystem.apply_edits(&batch);
        if let Ok(applied) = &result {
            state.position += *applied as TxId;
        }
        result.map_err(|(index, error)| TailError {
            position: state.position + index as TxId,
            error,
        })
    }

    /// The active's side of the same position (`FSImage`'s last applied or written
    /// transaction): applies `ops` to this NameNode's namesystem and appends them as
    /// `writer` ([`SharedEditLog::log_edits`]), and moves the position past them, so that
    /// once this NameNode becomes standby it tails from exactly its own last edit.
    /// Refused while the tailer runs (a standby never logs).
    pub fn log_own_edits(&self, writer: NameNodeId, ops: &[EditOp]) -> Result<TxId, EditLogError> {
        let mut state = self.state.lock();
        if state.running {
            return Err(EditLogError::Fenced {
                writer,
                holder: self.log.writer(),
            });
        }
        let before = self.log.end();
        debug_assert_eq!(
            before, state.position,
            "an active has applied all it logged"
        );
        let result = self
            .log
            .log_edits(writer, ops, |ops| self.namesystem.apply_edits(ops));
        state.position = match &result {
            Ok(end) => *end,
            Err(_) => state.position,
        };
        result
    }

    /// Stops tailing and returns the position after the last applied edit: waits for a
    /// batch in progress, and no batch starts afterwards (the first step of failover).
    pub fn stop(&self) -> TxId {
        let mut state = self.state.lock();
        state.running = false;
        state.position
    }

    /// Takes the log's epoch for `writer` ([`SharedEditLog::fence`]).
    pub fn fence_log(&self, writer: NameNodeId) -> u64 {
        self.log.fence(writer)
    }

    /// Failover's first step: stops tailing (waiting for a batch in progress), then
    /// returns every edit the tailer has not applied, up to the end of the log, and moves
    /// the position past them: the caller replays them in the catch-up. Call after fencing
    /// the log, so that the end cannot move.
    pub fn stop_for_catch_up(&self) -> Vec<EditOp> {
        let mut state = self.state.lock();
        state.running = false;
        let remaining = self.log.read_from(state.position, usize::MAX);
        state.position += remaining.len() as TxId;
        remaining
    }

    /// Starts tailing again where the tailer stopped or this NameNode's own edits ended
    /// (the NameNode became standby).
    pub fn resume(&self) {
        self.state.lock().running = true;
    }

    /// The position after the last applied edit.
    pub fn position(&self) -> TxId {
        self.state.lock().position
    }

    /// Whether the tailer is running.
    pub fn is_running(&self) -> bool {
        self.state.lock().running
    }
}

/// The production driver: a thread calling [`EditLogTailer::tail_once`] every
/// `period` (`dfs.ha.tail-edits.period`, 60 s in HDFS), at once again while batches come
/// back full. Dropping it stops the thread.
#[derive(Debug)]
pub struct TailerThread {
    stop: Option<Sender<()>>,
    handle: Option<thread::JoinHandle<()>>,
    failed_batches: Arc<AtomicU64>,
}

impl TailerThread {
    /// Starts the thread. A batch that fails is reported (a `warn` event, and
    /// [`failed_batches`](Self::failed_batches)) and retried next period: the edit stays
    /// where it is until an operator repairs the log, as in HDFS, and the thread keeps
    /// running.
    pub fn start(tailer: Arc<EditLogTailer>, period: Duration) -> Self {
        let (stop, stopped) = channel::bounded::<()>(1);
        let failed_batches = Arc::new(AtomicU64::new(0));
        let failures = Arc::clone(&failed_batches);
        let handle = thread::spawn(move || {
            loop {
                let wait = match tailer.tail_once() {
                    Ok(applied) if applied >= tailer.max_txns_per_lock => Duration::ZERO,
                    Ok(_) => period,
                    Err(failure) => {
                        failures.fetch_add(1, Ordering::Relaxed);
                        crate::events::warn!(
                            position = failure.position,
                            why = %failure.error,
                            "edit batch refused; retrying next period"
                        );
                        period
                    }
                };
                if stop_requested(&stopped, wait) {
                    return;
                }
            }
        });
        Self {
            stop: Some(stop),
            handle: Some(handle),
            failed_batches,
        }
    }

    /// Batches refused so far (each retried a period later).
    pub fn failed_batches(&self) -> u64 {
        self.failed_batches.load(Ordering::Relaxed)
    }

    /// Stops the thread and waits for it.
    pub fn shutdown(&mut self) {
        // Disconnecting the channel wakes the waiting loop.
        drop(self.stop.take());
        if let Some(handle) = self.handle.take() {
            // A panicking tailer already reported itself.
            let _ = handle.join();
        }
    }
}

impl Drop for TailerThread {
    fn drop(&mut self) {
        self.shutdown();
    }
}
