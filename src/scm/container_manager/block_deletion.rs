//! The SCM's block deletion (`DeletedBlockLogImpl`, `SCMBlockDeletingService`) and its
//! datanodes' command queues (`SCMNodeManager`): transactions added through the
//! replicated log, sent each round to the replicas' datanodes with the leader's term,
//! completed by their acks.
//!
//! **The race (HDDS-17268).** The command queues outlive a step-down, so a deposed
//! leader's heartbeats still hand out delete commands of its old term; **the datanode's
//! fix** drops them. On this side, what is in flight belongs to one term: the status is
//! reset the first time a new term uses it, which is when Ozone's `onBecomeLeader` runs
//! for every use that matters (a round, an ack), so a new leader resends everything the
//! replicated table holds and ignores the acks of the old term's commands.

use std::collections::{BTreeMap, BTreeSet};

use super::super::container_info::LifeCycleState;
use super::super::deleted_block_log::{ContainerView, DeleteTransactionStatus};
use super::super::error::ScmError;
use super::super::ha::LogEntry;
use super::super::replica_count::{ContainerHealth, check_health};
use super::{ContainerTable, Listed, StorageContainerManager};
use crate::hdds::command::{
    CommandId, CommandKind, DeleteBlockTransactionResult, DeletedBlocksTransaction, ScmCommand,
};
use crate::hdds::ids::{ContainerId, DatanodeId, LocalId};
use crate::hdds::term::Term;
use crate::sync::MutexGuard;
use crate::sync::atomic::Ordering;

impl StorageContainerManager {
    /// `DeletedBlockLogImpl.addTransactions`: one transaction per container for its
    /// `blocks`, each with a fresh id, added to every SCM's table through the log. Only
    /// the leader adds; an empty block list adds nothing. Returns the transaction ids.
    pub fn add_delete_transactions(
        &self,
        blocks: &BTreeMap<ContainerId, Vec<LocalId>>,
    ) -> Result<Vec<u64>, ScmError> {
        let context = self.context();
        if !context.is_leader || !self.ratis_leader_ready.load(Ordering::Acquire) {
            return Err(ScmError::NotLeader { scm: self.id });
        }
        let transactions: Vec<DeletedBlocksTransaction> = blocks
            .iter()
            .filter(|(_, ids)| !ids.is_empty())
            .map(|(&container, ids)| DeletedBlocksTransaction {
                tx_id: self.log.next_delete_tx_id(),
                container,
                local_ids: ids.clone(),
            })
            .collect();
        let tx_ids: Vec<u64> = transactions.iter().map(|tx| tx.tx_id).collect();
        if tx_ids.is_empty() {
            return Ok(tx_ids);
        }
        self.log
            .submit(
                self.id,
                context.term,
                LogEntry::AddDeleteTransactions(transactions),
            )
            .map_err(|reason| ScmError::DeleteNotConfirmed { reason })?;
        self.catch_up();
        crate::events::debug!(
            node = %self.id,
            term = context.term,
            txs = %Listed(&tx_ids),
            "delete transactions added"
        );
        Ok(tx_ids)
    }

    /// The deleted-block log as this SCM applied it, by transaction id.
    pub fn deleted_block_log(&self) -> Vec<DeletedBlocksTransaction> {
        let table = self.table.read();
        table.applied.deleted_blocks.values().cloned().collect()
    }

    /// One run of `SCMBlockDeletingService`: when this SCM serves (leader-ready, out of
    /// safe mode), picks the transactions each datanode gets and queues one delete-blocks
    /// command per datanode, stamped with the leader's term, read again for each command;
    /// transactions of containers no longer in the table, or DELETED, are removed from the
    /// log. Returns the commands queued.
    pub fn run_block_deleting_service(&self) -> Result<usize, ScmError> {
        let context = self.context();
        if !context.is_serving() {
            return Ok(0);
        }
        let included = self.datanodes_within_command_limit();
        let now_ms = self.clock.now_ms();
        let round = {
            let table = self.table.read();
            let mut deletion = self.deletion_for(context.term);
            deletion.pick(
                &table.applied.deleted_blocks,
                |container| self.container_view(&table, container),
                &included,
                &self.config.block_deletion,
                now_ms,
            )
        };
        if !round.purge.is_empty() {
            self.remove_delete_transactions(context.term, round.purge)?;
        }
        let mut queued = 0;
        for (datanode, transactions) in round.per_datanode {
            // `getTermOfLeader` per command: a deposed SCM skips the rest of the round;
            // what it queued stays (a re-election mid-round ends the round too, where
            // upstream would stamp the newer term).
            let now = self.context();
            if !now.is_leader || now.term != context.term {
                crate::events::debug!(node = %self.id, term = context.term, "block deleting round skipped");
                break;
            }
            let id = self.next_command();
            let tx_ids: Vec<u64> = transactions.iter().map(|tx| tx.tx_id).collect();
            let command =
                ScmCommand::new(id, context.term, CommandKind::DeleteBlocks { transactions });
            self.deletion_for(context.term)
                .record_created(datanode, id, tx_ids.clone(), now_ms);
            if let Err(error) = self.commands.add(datanode, command) {
                // Not queued: the record goes, and a later round picks the transactions.
                self.deletion_for(context.term).forget(datanode, id);
                return Err(error);
            }
            crate::events::debug!(
                node = %self.id,
                datanode = %datanode,
                term = context.term,
                txs = %Listed(&tx_ids),
                "delete blocks command queued"
            );
            queued += 1;
        }
        Ok(queued)
    }

    /// The commands queued for `datanode`, as its heartbeat takes them
    /// (`SCMNodeManager.processHeartbeat`): delete-blocks commands are marked sent. A
    /// deposed leader hands its queue out too, each command with its own term.
    pub fn take_commands(&self, datanode: DatanodeId) -> Vec<ScmCommand> {
        let commands = self.commands.take(datanode);
        let sent: Vec<CommandId> = commands
            .iter()
            .filter(|c| matches!(c.kind, CommandKind::DeleteBlocks { .. }))
            .map(|c| c.id)
            .collect();
        if !sent.is_empty() {
            let now_ms = self.clock.now_ms();
            let mut deletion = self.deletion.lock();
            for id in sent {
                deletion.on_sent(datanode, id, now_ms);
            }
        }
        commands
    }

    /// `DeletedBlockLogImpl.onMessage` for `datanode`'s answer to delete-blocks `command`:
    /// ignored unless this SCM is leader-ready; otherwise the acks go to the status, and
    /// the transactions every replica acked are removed from the log. Returns them.
    pub fn process_delete_acks(
        &self,
        datanode: DatanodeId,
        command: CommandId,
        acks: &[DeleteBlockTransactionResult],
    ) -> Result<Vec<u64>, ScmError> {
        let context = self.context();
        if !context.is_leader || !context.leader_ready {
            return Ok(Vec::new());
        }
        let completed = {
            let table = self.table.read();
            let replicas = |c: ContainerId| {
                let info = table.applied.containers.get(&c)?;
                Some((table.holders(c), self.expected_replicas(info)))
            };
            self.deletion_for(context.term)
                .on_ack(datanode, command, acks, replicas)
        };
        if !completed.is_empty() {
            self.remove_delete_transactions(context.term, completed.clone())?;
        }
        Ok(completed)
    }

    /// Removes `tx_ids` from every SCM's table through the log.
    fn remove_delete_transactions(&self, term: Term, tx_ids: Vec<u64>) -> Result<(), ScmError> {
        crate::events::debug!(
            node = %self.id,
            term,
            txs = %Listed(&tx_ids),
            "delete transactions removed"
        );
        self.log
            .submit(self.id, term, LogEntry::RemoveDeleteTransactions(tx_ids))
            .map_err(|reason| ScmError::DeleteNotConfirmed { reason })?;
        self.catch_up();
        Ok(())
    }

    /// The in-flight deletions of `term`, reset when they belong to another term
    /// (`onBecomeLeader`).
    fn deletion_for(&self, term: Term) -> MutexGuard<'_, DeleteTransactionStatus> {
        let mut deletion = self.deletion.lock();
        deletion.for_term(term);
        deletion
    }

    /// `getDatanodesWithinCommandLimit`: registered datanodes with fewer delete-blocks
    /// commands than the limit (queued here plus reported queued there), and fewer than
    /// two queued here.
    fn datanodes_within_command_limit(&self) -> BTreeSet<DatanodeId> {
        let limit = self.config.block_deletion.datanode_queue_limit;
        self.nodes
            .all()
            .iter()
            .map(|node| node.id())
            .filter(|&datanode| {
                let (here, there) = self.commands.delete_blocks_counts(datanode);
                here + there < limit && here < 2
            })
            .collect()
    }

    /// What the block deleting service knows of `container` (`getTransactions`): not in
    /// the table or DELETED (its transactions are purged), OPEN or CLOSING (they wait), or
    /// otherwise its reported replicas with the replication manager's health check
    /// (`checkInadequateReplica` asks for HEALTHY).
    fn container_view(&self, table: &ContainerTable, container: ContainerId) -> ContainerView {
        let Some(info) = table.applied.containers.get(&container) else {
            return ContainerView::Missing;
        };
        if info.state == LifeCycleState::Deleted {
            return ContainerView::Missing;
        }
        if info.state.is_open() {
            return ContainerView::Open;
        }
        let replicas = table.replicas.get(&container).cloned().unwrap_or_default();
        let health = {
            let rm = self.replication.lock();
            check_health(
                info.state,
                info.sequence_id,
                self.expected_replicas(info),
                &replicas,
                rm.pending.get(container),
            )
            .health
        };
        ContainerView::Closed {
            healthy: health == ContainerHealth::Healthy,
            replicas: replicas.keys().copied().collect(),
        }
    }
}
