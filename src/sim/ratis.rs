//! [`SimulatedRatis`], an in-process stand-in for the SCM's Ratis ring, behind the SCM's
//! [`ReplicatedLog`] boundary.
//!
//! Deliberately thin and honest about it: one shared log with leader terms, commit on
//! append (no quorum, no network, no elections of its own: leadership moves when a
//! scenario says so), a sequence-id generator, log compaction into a snapshot that a
//! lagging follower must install, and two injected faults that matter to HDDS-16891: a
//! submit that times out although the entry commits, and a not-leader answer for an entry
//! the next leader commits anyway (Ratis may commit a request it answered with an error).
//!
//! [`UnfencedLog`] is a handle to the same ring that drops the one check real Ratis does
//! not make: the submitter's term.
//!
//! For the [story](crate::story) of a failure the ring tells what the SCMs cannot see:
//! `submit fault injected`, an entry `committed, timeout answered` or `committed,
//! not-leader answered, leader lost`, `leader lost` (a crash or partition of the leader)
//! and `log compacted`. Elections are told by the SCMs themselves (`became leader`,
//! `stepped down`).

use std::collections::VecDeque;

use crate::hdds::ids::{ContainerId, ScmId};
use crate::hdds::term::Term;
use crate::scm::ha::{CatchUp, LogEntry, ReplicatedLog, Snapshot, SubmitError};
use crate::sync::{Arc, Mutex, arc_from_box};

/// A fault the next submit meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubmitFault {
    /// The entry commits, the submitter hears a timeout.
    TimeoutAfterCommit,
    /// The submitter steps down with the entry in its log and hears not-leader; the entry
    /// commits (a next leader commits it). The ring has no leader until the next election.
    NotLeaderAfterCommit,
}

#[derive(Debug, Default)]
struct RingState {
    term: Term,
    leader: Option<ScmId>,
    /// Entries after the snapshot, with their indexes.
    entries: Vec<(u64, LogEntry)>,
    last_index: u64,
    snapshot: Snapshot,
    next_container_id: u64,
    next_delete_tx_id: u64,
    faults: VecDeque<SubmitFault>,
}

/// An in-process Ratis ring for the SCMs of a scenario (see the module docs for what it
/// leaves out). Clones are handles to the same ring.
#[derive(Debug, Clone, Default)]
pub struct SimulatedRatis {
    state: Arc<Mutex<RingState>>,
}

impl SimulatedRatis {
    /// An empty log at term 0 without a leader.
    pub fn new() -> Self {
        Self::default()
    }

    /// A handle as the `Arc<dyn ReplicatedLog>` an SCM takes.
    pub fn log(&self) -> Arc<dyn ReplicatedLog> {
        arc_from_box(Box::new(self.clone()) as Box<dyn ReplicatedLog>)
    }

    /// Makes `leader` the leader of a new term and returns the term. The previous leader
    /// is deposed: its later submits are refused.
    pub fn elect(&self, leader: ScmId) -> Term {
        let mut state = self.state.lock();
        state.term += 1;
        state.leader = Some(leader);
        state.term
    }

    /// Feeds `state` the ring: its term and leader, the log (the entries after the
    /// snapshot, the snapshot's index), the next ids it hands out and the faults queued.
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        let ring = self.state.lock();
        (ring.term, ring.leader, &ring.entries, ring.last_index).hash(state);
        (
            ring.snapshot.index,
            ring.next_container_id,
            ring.next_delete_tx_id,
        )
            .hash(state);
        ring.faults.hash(state);
    }

    /// The current term and leader.
    pub fn leadership(&self) -> (Term, Option<ScmId>) {
        let state = self.state.lock();
        (state.term, state.leader)
    }

    /// The leader crashed or was partitioned away: no leader until the next election.
    pub fn lose_leader(&self) {
        let mut state = self.state.lock();
        if let Some(leader) = state.leader.take() {
            crate::events::debug!(leader = %leader, term = state.term, "leader lost");
        }
    }

    /// Compacts every committed entry into the snapshot; a member behind it must install
    /// the snapshot.
    pub fn compact(&self) {
        let mut state = self.state.lock();
        let entries = std::mem::take(&mut state.entries);
        let compacted = !entries.is_empty();
        for (index, entry) in entries {
            state.snapshot.apply(index, &entry);
        }
        if compacted {
            crate::events::debug!(index = state.snapshot.index, "log compacted");
        }
    }

    /// The next submit meets `fault`.
    pub fn inject(&self, fault: SubmitFault) {
        self.state.lock().faults.push_back(fault);
        crate::events::debug!(fault = ?fault, "submit fault injected");
    }

    /// Index of the last committed entry.
    pub fn last_index(&self) -> u64 {
        self.state.lock().last_index
    }
}

impl ReplicatedLog for SimulatedRatis {
    fn submit(&self, from: ScmId, term: Term, entry: LogEntry) -> Result<u64, SubmitError> {
        let mut state = self.state.lock();
        if state.leader != Some(from) || state.term != term {
            return Err(SubmitError::NotLeader);
        }
        state.last_index += 1;
        let index = state.last_index;
        state.entries.push((index, entry));
        match state.faults.pop_front() {
            None => Ok(index),
            Some(SubmitFault::TimeoutAfterCommit) => {
                crate::events::debug!(from = %from, index, "committed, timeout answered");
                Err(SubmitError::Timeout)
            }
            Some(SubmitFault::NotLeaderAfterCommit) => {
                // The leader stepped down with the entry in its log; a next leader commits
                // it. Until an election there is no leader.
                state.leader = None;
                crate::events::debug!(
                    from = %from,
                    index,
                    "committed, not-leader answered, leader lost"
                );
                Err(SubmitError::NotLeader)
            }
        }
    }

    fn catch_up(&self, applied_index: u64) -> CatchUp {
        let state = self.state.lock();
        let snapshot = (applied_index < state.snapshot.index).then(|| state.snapshot.clone());
        let after = snapshot.as_ref().map_or(applied_index, |s| s.index);
        // Entries are contiguous from the snapshot's index on: slice, don't scan.
        let skip =
            usize::try_from(after.saturating_sub(state.snapshot.index)).unwrap_or(usize::MAX);
        let entries = state.entries.get(skip..).unwrap_or_default().to_vec();
        debug_assert!(entries.first().is_none_or(|(index, _)| *index == after + 1));
        CatchUp { snapshot, entries }
    }

    fn next_container_id(&self) -> ContainerId {
        let mut state = self.state.lock();
        state.next_container_id += 1;
        ContainerId(state.next_container_id)
    }

    fn next_delete_tx_id(&self) -> u64 {
        let mut state = self.state.lock();
        state.next_delete_tx_id += 1;
        state.next_delete_tx_id
    }
}

/// A handle to a [`SimulatedRatis`] ring that fences like real Ratis: a submit is refused
/// only when the submitter does not lead now, never for the term it believes it leads at
/// (Ratis carries no term per request). With it, an allocation of an old term that is
/// still in flight when its SCM is re-elected commits at the new term, which is the
/// interleaving the hardened rebuild must survive (HDDS-16891).
#[derive(Debug, Clone)]
pub struct UnfencedLog {
    ring: SimulatedRatis,
}

impl UnfencedLog {
    /// A handle to `ring`.
    pub fn new(ring: SimulatedRatis) -> Self {
        Self { ring }
    }

    /// This handle as the `Arc<dyn ReplicatedLog>` an SCM takes.
    pub fn into_log(self) -> Arc<dyn ReplicatedLog> {
        arc_from_box(Box::new(self) as Box<dyn ReplicatedLog>)
    }
}

impl ReplicatedLog for UnfencedLog {
    fn submit(&self, from: ScmId, _term: Term, entry: LogEntry) -> Result<u64, SubmitError> {
        let (term, _) = self.ring.leadership();
        self.ring.submit(from, term, entry)
    }

    fn catch_up(&self, applied_index: u64) -> CatchUp {
        self.ring.catch_up(applied_index)
    }

    fn next_container_id(&self) -> ContainerId {
        self.ring.next_container_id()
    }

    fn next_delete_tx_id(&self) -> u64 {
        self.ring.next_delete_tx_id()
    }
}
