//! The leader's side of the SCM's deleted-block log (`DeletedBlockLogImpl` with its
//! `SCMDeletedBlockTransactionStatusManager`): each round of the block deleting service
//! picks the delete transactions each datanode gets, and the datanodes' acks complete
//! them.
//!
//! **The race it meets (HDDS-17268).** A delete command is stamped with the term of the
//! leader that created it, and what is in flight is the leader's alone: a deposed leader's
//! commands may still reach a datanode, which drops any older than the highest term it
//! saw. **What keeps deletions whole**: the transactions live in the replicated table
//! (`LogEntry::AddDeleteTransactions`), a new leader starts with nothing in flight
//! ([`DeleteTransactionStatus::on_become_leader`]), so the acks of an earlier term's
//! commands find no entry and are ignored, and its own rounds send every transaction
//! again. A transaction leaves the table only once every replica of its container acked
//! it.
//!
//! As in Ozone since HDDS-13520, a transaction is retried without limit: the retry count
//! is kept for inspection only. SCM never resends a command itself; a transaction is not
//! picked again for a datanode while a record of it is in flight there, and a record the
//! datanode was handed but never answered times out after
//! [`BlockDeletionConfig::command_timeout_ms`].

use std::collections::{BTreeMap, BTreeSet};

use crate::hdds::command::{CommandId, DeleteBlockTransactionResult, DeletedBlocksTransaction};
use crate::hdds::ids::{ContainerId, DatanodeId};
use crate::hdds::term::Term;

/// Settings of the block deleting service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockDeletionConfig {
    /// Blocks one round sends, counted once per replica
    /// (`hdds.scm.block.deletion.per-interval.max`, default 500,000).
    pub per_interval_max_blocks: usize,
    /// A datanode's share of a round is the limit divided by (datanodes / this factor)
    /// (`ozone.scm.block.deletion.per.dn.distribution.factor`, default 8).
    pub per_datanode_distribution_factor: usize,
    /// A datanode takes part in a round only while it has fewer delete commands than this,
    /// queued at the SCM and reported queued on the datanode
    /// (`hdds.datanode.block.delete.queue.limit`, default 5).
    pub datanode_queue_limit: usize,
    /// A command handed to a datanode and not answered is forgotten after this long, and
    /// its transactions can be picked again (`scmCommandTimeoutMs`, 300 s).
    pub command_timeout_ms: u64,
}

impl Default for BlockDeletionConfig {
    fn default() -> Self {
        Self {
            per_interval_max_blocks: 500_000,
            per_datanode_distribution_factor: 8,
            datanode_queue_limit: 5,
            command_timeout_ms: 300_000,
        }
    }
}

impl BlockDeletionConfig {
    /// A datanode's cap on blocks in one round among `datanodes` (`getTransactions`).
    pub fn per_datanode_cap(&self, datanodes: usize) -> usize {
        let shares = (datanodes / self.per_datanode_distribution_factor.max(1)).max(1);
        (self.per_interval_max_blocks / shares).min(self.per_interval_max_blocks)
    }
}

/// What the leader knows of a container when it picks its transactions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerView {
    /// Not in the container table (or deleted): its transactions are purged.
    Missing,
    /// Still OPEN: its transactions wait.
    Open,
    /// QUASI_CLOSED, CLOSED or DELETING: the datanodes holding its replicas, and whether
    /// the replication manager would call it healthy.
    Closed {
        /// Datanodes with a replica, from container reports.
        replicas: BTreeSet<DatanodeId>,
        /// `ReplicationManager.getContainerReplicationHealth` says HEALTHY.
        healthy: bool,
    },
}

/// A command's place in its life (`CmdStatusData`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandStatus {
    /// Queued at the SCM, not handed out yet.
    ToBeSent,
    /// Handed to the datanode in a heartbeat response, not answered yet.
    Sent,
}

#[derive(Debug, Clone)]
struct CommandRecord {
    tx_ids: Vec<u64>,
    status: CommandStatus,
    updated_ms: u64,
}

/// What one round picked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Round {
    /// The transactions each datanode gets, in id order.
    pub per_datanode: BTreeMap<DatanodeId, Vec<DeletedBlocksTransaction>>,
    /// Transactions of containers no longer in the table: remove them from the log.
    pub purge: Vec<u64>,
}

/// The leader's in-flight state (`SCMDeletedBlockTransactionStatusManager`): never
/// replicated, cleared when an SCM becomes leader.
#[derive(Debug, Default)]
pub struct DeleteTransactionStatus {
    /// The leader term the state belongs to, once [`for_term`](Self::for_term) set it.
    term: Option<Term>,
    /// Datanodes that acked each transaction sent this term (`transactionToDNsCommitMap`).
    committed: BTreeMap<u64, BTreeSet<DatanodeId>>,
    records: BTreeMap<DatanodeId, BTreeMap<CommandId, CommandRecord>>,
    /// Rounds that sent each transaction (`transactionToRetryCountMap`, for inspection).
    retries: BTreeMap<u64, u64>,
    /// Where the next round's scan starts (`lastProcessedTransactionId`).
    last_processed: u64,
}

impl DeleteTransactionStatus {
    /// Nothing in flight.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds `state` what is in flight: its term, the acks of each transaction, each
    /// datanode's records (their transactions and status, in a canonical order: the
    /// command ids only label them) and where the next round starts. The retry counts,
    /// kept for inspection, are left out.
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        (self.term, &self.committed, self.last_processed).hash(state);
        for (datanode, records) in &self.records {
            datanode.hash(state);
            let mut canonical: Vec<String> = records
                .values()
                .map(|r| format!("{:?} {:?} {}", r.tx_ids, r.status, r.updated_ms))
                .collect();
            canonical.sort();
            canonical.hash(state);
        }
    }

    /// `onBecomeLeader`: forgets every record, ack and count.
    pub fn on_become_leader(&mut self) {
        *self = Self::default();
    }

    /// The state of leader term `term`: what belongs to another term is forgotten first
    /// ([`on_become_leader`](Self::on_become_leader)). An SCM that calls this before each
    /// use resets at the first use of a new term, which no use can tell from a reset when
    /// the term began.
    pub fn for_term(&mut self, term: Term) -> &mut Self {
        if self.term != Some(term) {
            self.on_become_leader();
            self.term = Some(term);
        }
        self
    }

    /// `onDatanodeDead`: the datanode's records go.
    pub fn on_datanode_dead(&mut self, datanode: DatanodeId) {
        self.records.remove(&datanode);
    }

    /// Rounds that sent `tx_id` this term.
    pub fn retry_count(&self, tx_id: u64) -> u64 {
        self.retries.get(&tx_id).copied().unwrap_or(0)
    }

    /// Commands of `datanode` in flight.
    pub fn in_flight(&self, datanode: DatanodeId) -> usize {
        self.records.get(&datanode).map_or(0, BTreeMap::len)
    }

    /// `getTransactions`: scans `table` round-robin from where the last round stopped
    /// and gives each transaction of a healthy closed container to every replica's
    /// datanode that has not acked it and has no record of it in flight, within the
    /// round's and each datanode's block limits. Only `included` datanodes (in service,
    /// within their command limit) take part, and a transaction is taken only if every
    /// replica's datanode does.
    pub fn pick(
        &mut self,
        table: &BTreeMap<u64, DeletedBlocksTransaction>,
        view: impl Fn(ContainerId) -> ContainerView,
        included: &BTreeSet<DatanodeId>,
        config: &BlockDeletionConfig,
        now_ms: u64,
    ) -> Round {
        self.clean_timeouts(now_ms, config.command_timeout_ms);
        let cap = config.per_datanode_cap(included.len());
        let mut round = Round::default();
        let mut per_datanode_blocks: BTreeMap<DatanodeId, usize> = BTreeMap::new();
        let mut total = 0usize;
        let start = self.last_processed;
        let scan = table.range(start + 1..).chain(table.range(..=start));
        // Bounded by the table: each transaction is visited at most once.
        for (&tx_id, tx) in scan {
            if total >= config.per_interval_max_blocks {
                break;
            }
            self.last_processed = tx_id;
            let replicas = match view(tx.container) {
                ContainerView::Missing => {
                    round.purge.push(tx_id);
                    continue;
                }
                ContainerView::Open => continue,
                ContainerView::Closed { replicas, healthy } => {
                    if !healthy || replicas.is_empty() || !replicas.is_subset(included) {
                        continue;
                    }
                    replicas
                }
            };
            let blocks = tx.local_ids.len();
            // `getTransaction`: every replica's datanode still below its cap (a transaction
            // may take a datanode past it).
            let fits = |dn: &DatanodeId| per_datanode_blocks.get(dn).copied().unwrap_or(0) < cap;
            if !replicas.iter().all(fits) {
                continue;
            }
            let mut sent = false;
            for datanode in replicas {
                if self.is_duplicate(tx_id, datanode) {
                    continue;
                }
                *per_datanode_blocks.entry(datanode).or_default() += blocks;
                total += blocks;
                round
                    .per_datanode
                    .entry(datanode)
                    .or_default()
                    .push(tx.clone());
                sent = true;
            }
            if sent {
                *self.retries.entry(tx_id).or_default() += 1;
            }
        }
        for txs in round.per_datanode.values_mut() {
            txs.sort_by_key(|tx| tx.tx_id);
        }
        round
    }

    /// `isDuplication`: `datanode` acked `tx_id` already, or has a record of it in flight.
    fn is_duplicate(&self, tx_id: u64, datanode: DatanodeId) -> bool {
        self.committed
            .get(&tx_id)
            .is_some_and(|acked| acked.contains(&datanode))
            || self.records.get(&datanode).is_some_and(|records| {
                records
                    .values()
                    .any(|record| record.tx_ids.contains(&tx_id))
            })
    }

    /// `recordTransactionCreated`: `command` carries `tx_ids` to `datanode`, queued now.
    pub fn record_created(
        &mut self,
        datanode: DatanodeId,
        command: CommandId,
        tx_ids: Vec<u64>,
        now_ms: u64,
    ) {
        for &tx_id in &tx_ids {
            self.committed.entry(tx_id).or_default();
        }
        self.records.entry(datanode).or_default().insert(
            command,
            CommandRecord {
                tx_ids,
                status: CommandStatus::ToBeSent,
                updated_ms: now_ms,
            },
        );
    }

    /// `onSent`: the heartbeat handed `command` to `datanode`.
    pub fn on_sent(&mut self, datanode: DatanodeId, command: CommandId, now_ms: u64) {
        if let Some(record) = self
            .records
            .get_mut(&datanode)
            .and_then(|records| records.get_mut(&command))
        {
            record.status = CommandStatus::Sent;
            record.updated_ms = now_ms;
        }
    }

    /// The status of `command` at `datanode`, if it is in flight.
    pub fn status(&self, datanode: DatanodeId, command: CommandId) -> Option<CommandStatus> {
        self.records
            .get(&datanode)
            .and_then(|records| records.get(&command))
            .map(|record| record.status)
    }

    /// `commitTransactions`: `datanode` answered `command` with `acks`; its record goes.
    /// A successful ack of a transaction sent this term adds the datanode to its acked
    /// set; the transaction is complete once that set holds every datanode of the
    /// container's replicas now and `min(replicas, acked)` reaches the container's
    /// replication factor (`replicas` gives both, read at ack time; `None` for a container
    /// not in the table, whose transaction the next round purges). Returns the completed
    /// transactions, to remove from the log. An ack for a transaction not sent this term
    /// (an earlier leader's command) is ignored; a failed one waits for a later round.
    pub fn on_ack(
        &mut self,
        datanode: DatanodeId,
        command: CommandId,
        acks: &[DeleteBlockTransactionResult],
        replicas: impl Fn(ContainerId) -> Option<(BTreeSet<DatanodeId>, usize)>,
    ) -> Vec<u64> {
        self.forget(datanode, command);
        let mut completed = Vec::new();
        for ack in acks.iter().filter(|ack| ack.success) {
            let Some(acked) = self.committed.get_mut(&ack.tx_id) else {
                continue;
            };
            acked.insert(datanode);
            let Some((holders, required)) = replicas(ack.container) else {
                continue;
            };
            if holders.len().min(acked.len()) >= required && holders.is_subset(acked) {
                self.committed.remove(&ack.tx_id);
                self.retries.remove(&ack.tx_id);
                completed.push(ack.tx_id);
            }
        }
        completed
    }

    /// Drops the record of `command` at `datanode` (answered, or never queued).
    pub fn forget(&mut self, datanode: DatanodeId, command: CommandId) {
        if let Some(records) = self.records.get_mut(&datanode) {
            records.remove(&command);
        }
    }

    /// `cleanAllTimeoutSCMCommand`: sent records older than `timeout_ms` (strictly) go.
    fn clean_timeouts(&mut self, now_ms: u64, timeout_ms: u64) {
        for records in self.records.values_mut() {
            records.retain(|_, record| {
                record.status == CommandStatus::ToBeSent
                    || now_ms.saturating_sub(record.updated_ms) <= timeout_ms
            });
        }
    }
}
