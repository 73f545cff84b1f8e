//! The replication manager's own state (its service status, `ContainerReplicaPendingOps`
//! and the `ReplicationQueue` its processors work through), never replicated: a leaf the
//! SCM holds and the manager's runs read.

use std::collections::VecDeque;

use super::super::pending_ops::ContainerReplicaPendingOps;
use crate::hdds::ids::ContainerId;
use crate::hdds::term::Term;

/// The replication manager's own state (`ReplicationManager`'s service status,
/// `ContainerReplicaPendingOps`, `ReplicationQueue`), never replicated.
#[derive(Debug, Default)]
pub(super) struct ReplicationManagerState {
    /// The leader term it last became RUNNING in.
    pub(super) running_for_term: Option<Term>,
    /// When it became RUNNING (`lastTimeToBeReadyInMillis`).
    pub(super) ready_since_ms: u64,
    /// When its last pass ran.
    pub(super) last_pass_ms: Option<u64>,
    /// When each processor last ran: the under-replicated one's, then the over-replicated
    /// one's.
    pub(super) last_processed_ms: [Option<u64>; 2],
    /// Ops sent and not yet seen done.
    pub(super) pending: ContainerReplicaPendingOps,
    /// The containers the last pass found under- or over-replicated, for the processors.
    pub(super) queue: ReplicationQueue,
}

impl ReplicationManagerState {
    /// Feeds `state` the manager's status (the term it runs for, when it became ready and
    /// last passed), its pending ops and its queue.
    pub(super) fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        (
            self.running_for_term,
            self.ready_since_ms,
            self.last_pass_ms,
            self.last_processed_ms,
        )
            .hash(state);
        self.pending.digest(state);
        for queued in self.queue.under.iter().chain(&self.queue.over) {
            (queued.container, queued.term).hash(state);
        }
        self.queue.under.len().hash(state);
    }
}

/// A container a pass queued, with the term this SCM led in when it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Queued {
    pub(super) container: ContainerId,
    pub(super) term: Term,
}

/// `ReplicationQueue`: what a pass of the replication manager found to fix, taken by its
/// processors later. Each pass replaces it whole; a change of leader does not clear it.
/// Bounded by the containers of the table: a pass queues each at most once.
#[derive(Debug, Default)]
pub(super) struct ReplicationQueue {
    pub(super) under: VecDeque<Queued>,
    pub(super) over: VecDeque<Queued>,
}

/// Which of the replication manager's processors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Processor {
    /// `UnderReplicatedProcessor`.
    Under,
    /// `OverReplicatedProcessor`.
    Over,
}

impl Processor {
    pub(super) fn index(self) -> usize {
        match self {
            Processor::Under => 0,
            Processor::Over => 1,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Processor::Under => "under-replicated",
            Processor::Over => "over-replicated",
        }
    }
}

impl ReplicationQueue {
    pub(super) fn of(&mut self, processor: Processor) -> &mut VecDeque<Queued> {
        match processor {
            Processor::Under => &mut self.under,
            Processor::Over => &mut self.over,
        }
    }

    /// Containers queued in all.
    pub(super) fn len(&self) -> usize {
        self.under.len() + self.over.len()
    }
}
