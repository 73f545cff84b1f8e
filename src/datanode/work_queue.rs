//! The bounded queue in front of a datanode executor (the command handlers' thread pools,
//! the replication supervisor, the on-demand scanner): the command processor hands work
//! over and goes on, and the executor's thread takes it when it gets to it.
//!
//! **Why it matters (HDDS-17268, HDDS-16811).** A hand-over is where upstream's second
//! term fence earns its keep: the term can rise between dispatch and execution, and a
//! reconciliation runs while the block deleting service and the heartbeats go on.
//! **What it keeps**: a full queue refuses new work at once (the submitter reports it), a
//! stopped executor's thread wakes and returns, and a driver that steps the datanode
//! takes the same work on its own thread ([`try_take`](WorkQueue::try_take)).

use std::collections::VecDeque;

use crate::sync::{Condvar, Mutex};

/// A bounded queue of `T` (see the module docs).
#[derive(Debug)]
pub struct WorkQueue<T> {
    limit: usize,
    items: Mutex<VecDeque<T>>,
    ready: Condvar,
}

impl<T> WorkQueue<T> {
    /// A queue holding at most `limit` items (at least 1).
    pub fn new(limit: usize) -> Self {
        Self {
            limit: limit.max(1),
            items: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
        }
    }

    /// Queues `work`; refused without waiting when the queue holds its
    /// [`limit`](Self::limit), and handed back.
    pub fn push(&self, work: T) -> Result<(), T> {
        let mut items = self.items.lock();
        if items.len() >= self.limit {
            return Err(work);
        }
        items.push_back(work);
        self.ready.notify_one();
        Ok(())
    }

    /// The oldest work, if any, without waiting.
    pub fn try_take(&self) -> Option<T> {
        self.items.lock().pop_front()
    }

    /// The oldest work, waiting for it; `None` once `stopped` says so. A thread that sets
    /// what `stopped` reads then calls [`wake`](Self::wake).
    pub fn take(&self, stopped: impl Fn() -> bool) -> Option<T> {
        let mut items = self.items.lock();
        loop {
            if stopped() {
                return None;
            }
            if let Some(work) = items.pop_front() {
                return Some(work);
            }
            self.ready.wait(&mut items);
        }
    }

    /// Wakes the threads waiting in [`take`](Self::take), so they check whether to stop.
    pub fn wake(&self) {
        let _items = self.items.lock();
        self.ready.notify_all();
    }

    /// Items it holds at most.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Items queued.
    pub fn len(&self) -> usize {
        self.items.lock().len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.items.lock().is_empty()
    }

    /// Calls `visit` with each queued item, oldest first.
    pub fn for_each(&self, mut visit: impl FnMut(&T)) {
        self.items.lock().iter().for_each(&mut visit);
    }

    /// Drops everything queued (a process crash loses it).
    pub fn clear(&self) {
        self.items.lock().clear();
    }
}
