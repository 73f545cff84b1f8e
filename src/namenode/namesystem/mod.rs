//! A NameNode's namespace and block manager as the HA standby runs them
//! (`FSNamesystem`, `FSEditLogLoader`, `BlockManager`), behind the namesystem lock.
//!
//! **The race (HDFS-2742).** The standby applies edits late, so a datanode's report can
//! reach it before the state it was produced under. Judged after the block's completion, a
//! healthy RBW replica looks corrupt (and the ten-step data-loss chain can then lose every
//! replica); judged before completion without crediting safe mode, the standby never
//! leaves safe mode.
//!
//! **The fix.** While `postpone` is on, a report that is future or inconsistent is queued
//! per replica, per block (`PendingDataNodeMessages`), and re-judged right after each edit
//! that changes that block (`BlockManager.processQueuedMessagesForBlock`); completion
//! credits the replicas already present; failover catches up with `postpone` still on,
//! turns it off, then judges what is left.
//!
//! Everything runs under one lock, the namesystem write lock: the ordering problem is
//! logical (a message against an edit), not a data race.
//!
//! One job a file: `config` (the behaviours and settings), `edits` (the replayed ops),
//! `view` (stored records, counters, the checkers' view), `state` (the state under the
//! lock), `api` ([`Namesystem`], one critical section a call), then the `impl` blocks of
//! the state: `replay`, `pipeline` (blocks being written: expected replicas, the append's
//! reopen, pipeline updates, stale replicas), `completion` (COMMITTED and COMPLETE),
//! `reports`, `drain` (the queue's re-judgement), `replication`, `safe_mode`, `failover`
//! and the legacy `whole_messages` queue.

mod api;
mod batch;
mod completion;
mod config;
mod contract;
mod drain;
mod edits;
mod failover;
mod pipeline;
mod replay;
mod replication;
mod reports;
mod safe_mode;
mod state;
mod view;
mod whole_messages;

pub use api::Namesystem;
pub use config::{NamenodeConfig, NamesystemBehavior};
pub use contract::{NamesystemApi, NamesystemFactory};
pub use edits::{EditOp, FileId, ReplayError};
pub use replication::excess_order;
pub use view::{
    BlockMetrics, HaState, INodeFile, NamesystemView, SafeModeCheck, SafeModeCounts, StoredBlock,
};
