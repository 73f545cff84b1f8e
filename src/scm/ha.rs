//! The SCM's replicated log as an SCM sees it ([`ReplicatedLog`], the part of
//! `SCMRatisServer` used here) and the persisted tables ([`ScmDb`]): the containers and
//! the deleted-block log.
//!
//! The ring itself is not here: `sim::ratis::SimulatedRatis` is an in-process stand-in
//! for scenarios and tests. Real Ratis is out of scope.

use std::collections::BTreeMap;
use std::fmt;

use super::container_info::{ContainerInfo, LifeCycleState};
use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::ids::{ContainerId, ScmId};
use crate::hdds::term::Term;
use crate::sync::Mutex;

/// An entry of the SCM log.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LogEntry {
    /// `ContainerStateManager.addContainer`, applied on every SCM.
    AddContainer(ContainerInfo),
    /// `ContainerStateManager.updateContainerState`: the container's new lifecycle state,
    /// applied only where the lifecycle allows the move
    /// ([`LifeCycleState::can_move_to`]).
    UpdateContainerState(ContainerId, LifeCycleState),
    /// `ContainerStateManager.transitionDeletingOrDeletedToTargetState`: a DELETING or
    /// DELETED container back to CLOSED or QUASI_CLOSED, because a replica reported
    /// blocks ([`LifeCycleState::can_come_back_to`]).
    TransitionDeletingOrDeleted(ContainerId, LifeCycleState),
    /// `DeletedBlockLogStateManager.addTransactionsToDB`: delete transactions with the
    /// ids the leader gave them.
    AddDeleteTransactions(Vec<DeletedBlocksTransaction>),
    /// `DeletedBlockLogStateManager.removeTransactionsFromDB`: transactions every replica
    /// acknowledged.
    RemoveDeleteTransactions(Vec<u64>),
}

/// Why a submit was not confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SubmitError {
    /// The submitter is not the leader of the log's current term (`SCM_NOT_LEADER`). The
    /// entry may or may not be in the log.
    #[error("not the leader")]
    NotLeader,
    /// No answer in time (`ozone.scm.ha.ratis.request.timeout`); the entry may commit.
    #[error("request timed out")]
    Timeout,
}

/// What a follower must apply to catch up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatchUp {
    /// The log was compacted past the follower: install this container table first.
    pub snapshot: Option<Snapshot>,
    /// Committed entries after the snapshot (or after the follower's index), with their
    /// indexes.
    pub entries: Vec<(u64, LogEntry)>,
}

/// The replicated tables as of a log index: a compacted prefix of the log, an SCM's
/// applied state, or its database.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// The last index it covers.
    pub index: u64,
    /// The container table at that index.
    pub containers: BTreeMap<ContainerId, ContainerInfo>,
    /// The deleted-block log at that index (`DeletedBlocksTXTable`), by transaction id.
    pub deleted_blocks: BTreeMap<u64, DeletedBlocksTransaction>,
}

impl Snapshot {
    /// Applies the entry at `index`; an index at or below the one applied is ignored.
    /// Returns whether it applied.
    pub fn apply(&mut self, index: u64, entry: &LogEntry) -> bool {
        if index <= self.index {
            return false;
        }
        match entry {
            LogEntry::AddContainer(info) => {
                self.containers.insert(info.id, info.clone());
            }
            LogEntry::UpdateContainerState(id, state) => {
                if let Some(info) = self.containers.get_mut(id)
                    && info.state.can_move_to(*state)
                {
                    info.state = *state;
                }
            }
            LogEntry::TransitionDeletingOrDeleted(id, state) => {
                if let Some(info) = self.containers.get_mut(id)
                    && info.state.can_come_back_to(*state)
                {
                    info.state = *state;
                }
            }
            LogEntry::AddDeleteTransactions(transactions) => {
                for tx in transactions {
                    self.deleted_blocks.insert(tx.tx_id, tx.clone());
                }
            }
            LogEntry::RemoveDeleteTransactions(tx_ids) => {
                for tx_id in tx_ids {
                    self.deleted_blocks.remove(tx_id);
                }
            }
        }
        self.index = index;
        true
    }
}

/// The replicated log as one SCM sees it (the part of `SCMRatisServer` used here).
pub trait ReplicatedLog: Send + Sync + fmt::Debug {
    /// Appends `entry` as `from`, which believes it leads at `term`. `Ok(index)` once the
    /// entry is committed. An error says nothing about whether the entry commits: real
    /// Ratis carries no term per request and may commit a request it answered with
    /// not-leader or a timeout. The SCM's fix does not rely on a term check here.
    fn submit(&self, from: ScmId, term: Term, entry: LogEntry) -> Result<u64, SubmitError>;
    /// What a member that applied up to `applied_index` must apply next.
    fn catch_up(&self, applied_index: u64) -> CatchUp;
    /// The next container id (`SequenceIdGenerator`, itself replicated in Ozone). Ids are
    /// consumed even when the allocation then fails.
    fn next_container_id(&self) -> ContainerId;
    /// The next delete transaction id (`SequenceIdGenerator`'s `delTxnId`, replicated in
    /// Ozone); ids are consumed even when the add then fails.
    fn next_delete_tx_id(&self) -> u64;
}

/// An SCM's persisted state (its RocksDB in Ozone): the replicated tables and the index
/// they were applied up to. Survives a crash; a restarted SCM reloads from it.
#[derive(Debug, Default)]
pub struct ScmDb {
    state: Mutex<Snapshot>,
}

impl ScmDb {
    /// An empty database.
    pub fn new() -> Self {
        Self::default()
    }

    /// The applied index and the tables.
    pub fn load(&self) -> Snapshot {
        self.state.lock().clone()
    }

    /// Persists one applied entry; an index at or below the persisted one is ignored (an
    /// old incarnation of the SCM still finishing a call cannot move the database back).
    pub fn apply(&self, index: u64, entry: &LogEntry) {
        self.state.lock().apply(index, entry);
    }

    /// Replaces everything with an installed snapshot, unless the database is already at
    /// or past its index.
    pub fn install(&self, snapshot: Snapshot) {
        let mut state = self.state.lock();
        if snapshot.index > state.index || (snapshot.index == 0 && state.index == 0) {
            *state = snapshot;
        }
    }
}
