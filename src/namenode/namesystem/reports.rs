//! Datanode reports (`BlockManager.processReport`, `processIncrementalBlockReport`,
//! `processReportedBlock`): each replica is postponed, judged, or recorded as a location;
//! a block's postponed replicas are re-judged when an edit changes the block.
//!
//! **The race (HDFS-2742).** A standby that judges a replica against a block state the
//! replica was not produced under marks a healthy replica corrupt (`markBlockAsCorrupt`).
//! **The fix:** while postponing, a replica whose GS is in the future, or that looks
//! corrupt, is queued per block (`PendingDataNodeMessages`) and re-judged by the drain
//! (`drain.rs`) after each edit that changes its block; a report that is not future drops
//! its pair's queued entries before it is judged (HDFS-17477), so a future report never
//! does.

use std::collections::BTreeSet;

use super::state::{Message, Origin, State};
use super::view::HaState;
use crate::namenode::evaluation::{
    BlockUcState, CorruptReason, ReplicaVerdict, StoredBlockView, check_replica_corrupt,
    is_block_under_construction,
};
use crate::namenode::pending_messages::{QueuedReport, ReportedState};
use crate::namenode::{Block, BlockId, DatanodeId, GenerationStamp, ReplicaState, StorageId};

/// One replica report as `processReportedBlock` sees it.
#[derive(Debug, Clone, Copy)]
struct Report {
    storage: StorageId,
    block: Block,
    state: ReportedState,
    origin: Origin,
}

impl State {
    /// One incremental report entry (or, for the legacy queue, the whole message).
    pub(super) fn receive_incremental_report(
        &mut self,
        storage: StorageId,
        block: Block,
        state: ReportedState,
    ) {
        if self.postpones_whole_message(block.gs) {
            crate::events::debug!(
                node = self.node(),
                datanode = %storage.datanode,
                block = block.id.0,
                gs = block.gs,
                state = %state,
                report = Origin::Incremental.name(),
                why = "future genstamp: whole message",
                namenode_gs = self.gs_counter,
                "report queued"
            );
            self.whole_messages
                .push((block.gs, Message::Incremental(storage, block, state)));
            return;
        }
        self.process_reported(storage, block, state, Origin::Incremental);
    }

    /// One storage's full report (or, for the legacy queue, the whole report, copied).
    pub(super) fn receive_full_report(
        &mut self,
        storage: StorageId,
        entries: &[(Block, ReplicaState)],
    ) {
        let target = entries
            .iter()
            .map(|(b, _)| b.gs)
            .max()
            .unwrap_or(GenerationStamp::MIN);
        if self.postpones_whole_message(target) {
            crate::events::debug!(
                node = self.node(),
                datanode = %storage.datanode,
                replicas = entries.len(),
                gs = target,
                report = "full",
                why = "future genstamp: whole message",
                namenode_gs = self.gs_counter,
                "report queued"
            );
            self.whole_messages
                .push((target, Message::FullReport(storage, entries.to_vec())));
            return;
        }
        self.process_full_report(storage, entries);
    }

    /// `processFirstBlockReport` for a storage's first report, `reportDiff` for a later
    /// one, which also drops the locations the report omits.
    pub(super) fn process_full_report(
        &mut self,
        storage: StorageId,
        entries: &[(Block, ReplicaState)],
    ) {
        let first = self.reported_storages.insert(storage);
        let origin = if first {
            Origin::FirstFullReport
        } else {
            Origin::LaterFullReport
        };
        for &(block, state) in entries {
            self.process_reported(storage, block, ReportedState::Replica(state), origin);
        }
        if !first {
            // Replicas the NameNode had on this storage that the report omits.
            let listed: BTreeSet<BlockId> = entries.iter().map(|(b, _)| b.id).collect();
            let omitted: Vec<BlockId> = self
                .blocks
                .iter()
                .filter(|(id, b)| b.locations.contains(&storage) && !listed.contains(id))
                .map(|(id, _)| *id)
                .collect();
            for id in omitted {
                crate::events::debug!(
                    node = self.node(),
                    datanode = %storage.datanode,
                    block = id.0,
                    why = "omitted from full report",
                    "location removed"
                );
                self.remove_stored_location(id, storage);
            }
        }
        // A full report to the active clears the datanode's stale flag.
        if self.ha == HaState::Active {
            if self.stale.remove(&storage.datanode) {
                crate::events::debug!(
                    node = self.node(),
                    datanode = %storage.datanode,
                    why = "full report after failover",
                    "datanode no longer stale"
                );
            }
            self.process_over_replicated_blocks();
        }
    }

    /// `processReportedBlock` for one replica: postponed while its GS is in the future
    /// or, while postponing, when it looks corrupt; otherwise judged and recorded. Returns
    /// false only when the report was queued as future (`processAndHandleReportedBlock`).
    pub(super) fn process_reported(
        &mut self,
        storage: StorageId,
        reported: Block,
        state: ReportedState,
        origin: Origin,
    ) -> bool {
        let postpone = self.postponing();
        let report = Report {
            storage,
            block: reported,
            state,
            origin,
        };
        // 1. Future GS (`isGenStampInFuture`), before anything else.
        if postpone && self.is_future(reported.gs) {
            crate::events::debug!(
                node = self.node(),
                datanode = %storage.datanode,
                block = reported.id.0,
                gs = reported.gs,
                state = %state,
                report = origin.name(),
                why = "future genstamp",
                namenode_gs = self.gs_counter,
                "report queued"
            );
            self.enqueue(storage, reported, state);
            return false;
        }
        let ReportedState::Replica(replica_state) = state else {
            // DELETED (`removeStoredBlock` with a storage, HDFS-8245): the location goes.
            self.trace_processed(report, None);
            self.remove_stored_location(reported.id, storage);
            return true;
        };
        self.purge_superseded(storage, reported);
        // 2-3. Lookup, and deletion already scheduled.
        let Some(view) = self.stored_view(report) else {
            return true;
        };
        // 4. Corrupt?
        let rules = self.config.replica_rules();
        match check_replica_corrupt(&reported, replica_state, &view, rules) {
            ReplicaVerdict::Corrupt(reason) if postpone => {
                crate::events::debug!(
                    node = self.node(),
                    datanode = %storage.datanode,
                    block = reported.id.0,
                    gs = reported.gs,
                    state = %state,
                    report = origin.name(),
                    why = %reason,
                    stored_gs = view.gs,
                    stored_state = %view.state,
                    "report queued"
                );
                let queued = match self.config.behavior.queues_reported_block() {
                    true => reported,
                    false => Block {
                        gs: view.gs,
                        length: view.length,
                        ..reported
                    },
                };
                self.enqueue(storage, queued, state);
            }
            ReplicaVerdict::Corrupt(reason) => self.mark_corrupt(report, reason, view),
            ReplicaVerdict::Ignored => self.trace_processed(report, Some("ignored")),
            ReplicaVerdict::Ok => {
                if !self.is_kept_unchanged(report) {
                    self.trace_processed(report, Some("ok"));
                }
                self.accept_replica(storage, reported, replica_state, view.state);
            }
        }
        true
    }

    /// HDFS-17477, when the behavior purges: a report that is not queued as future
    /// supersedes the queued entries of its (storage, block) pair.
    fn purge_superseded(&mut self, storage: StorageId, reported: Block) {
        if !self.config.behavior.purges_superseded_entries() {
            return;
        }
        let purged = self.queue.remove_queued_block(storage, reported.id);
        if purged > 0 {
            crate::events::debug!(
                node = self.node(),
                datanode = %storage.datanode,
                block = reported.id.0,
                purged,
                why = "superseded by this report",
                "stale entries purged"
            );
        }
    }

    /// Whether a full report's entry is one `reportDiff` keeps as it is: a FINALIZED
    /// replica already stored as a healthy location. Such entries, most of a full report,
    /// change nothing and make no event.
    fn is_kept_unchanged(&self, report: Report) -> bool {
        let full = matches!(
            report.origin,
            Origin::FirstFullReport | Origin::LaterFullReport
        );
        full && report.state == ReportedState::Replica(ReplicaState::Finalized)
            && self
                .blocks
                .get(&report.block.id)
                .is_some_and(|b| b.locations.contains(&report.storage))
            && !self
                .corrupt
                .get(&report.block.id)
                .is_some_and(|f| f.contains_key(&report.storage))
    }

    /// The `report processed` event: a report judged (`verdict`) or, DELETED, applied.
    fn trace_processed(&self, report: Report, verdict: Option<&'static str>) {
        crate::events::debug!(
            node = self.node(),
            datanode = %report.storage.datanode,
            block = report.block.id.0,
            gs = report.block.gs,
            state = %report.state,
            report = report.origin.name(),
            verdict,
            "report processed"
        );
    }

    /// The stored block a replica is judged against, or `None` when there is nothing to
    /// judge: a replica of an unknown block is scheduled for deletion (except from a
    /// storage's first full report), and one already scheduled for deletion is ignored.
    fn stored_view(&mut self, report: Report) -> Option<StoredBlockView> {
        let Report {
            storage,
            block: reported,
            origin,
            ..
        } = report;
        let Some(stored) = self.blocks.get(&reported.id) else {
            self.trace_processed(report, Some("unknown block"));
            if origin != Origin::FirstFullReport {
                self.record_unknown_replica(storage, reported);
            }
            return None;
        };
        if origin != Origin::FirstFullReport
            && self
                .pending_deletion
                .get(&storage)
                .is_some_and(|blocks| blocks.contains_key(&reported.id))
        {
            self.trace_processed(report, Some("deletion pending"));
            return None;
        }
        Some(StoredBlockView {
            gs: stored.block.gs,
            length: stored.block.length,
            state: stored.state,
        })
    }

    /// Records a replica of an unknown block for deletion, up to the storage's bound.
    fn record_unknown_replica(&mut self, storage: StorageId, reported: Block) {
        let limit = self.config.unknown_replica_deletions_per_storage_limit;
        let waiting = self.pending_deletion.entry(storage).or_default();
        if waiting.len() >= limit && !waiting.contains_key(&reported.id) {
            self.metrics.unknown_replica_deletions_dropped += 1;
            return;
        }
        waiting.insert(reported.id, reported);
    }

    /// A replica judged healthy: one of the replicas expected to finish a block under
    /// construction (`isBlockUnderConstruction`), and, once FINALIZED, a location. A
    /// replica flagged corrupt reaches `addStoredBlock` again (trunk; the
    /// under-construction test reads `(FINALIZED && not stored) || flagged`).
    fn accept_replica(
        &mut self,
        storage: StorageId,
        reported: Block,
        replica_state: ReplicaState,
        block_state: BlockUcState,
    ) {
        let flagged = self.config.behavior.readds_corrupt_replicas()
            && self
                .corrupt
                .get(&reported.id)
                .is_some_and(|f| f.contains_key(&storage));
        let Some(stored) = self.blocks.get(&reported.id) else {
            return;
        };
        let finalized_new =
            replica_state == ReplicaState::Finalized && !stored.locations.contains(&storage);
        // 5. Accepted as a replica under construction.
        if is_block_under_construction(block_state, replica_state) {
            self.record_expected_replica(reported.id, storage, reported.gs, replica_state);
            if finalized_new || flagged {
                self.add_stored_block(reported.id, storage);
            }
            return;
        }
        // 6. A new location (or a flagged one reported healthy).
        if replica_state == ReplicaState::Finalized && (finalized_new || flagged) {
            self.add_stored_block(reported.id, storage);
        }
    }

    pub(super) fn enqueue(&mut self, storage: StorageId, block: Block, state: ReportedState) {
        // At the bound the report is refused and counted; the datanode's next report of
        // the replica brings it back (see `PendingDataNodeMessages`).
        let queued = self.queue.enqueue(QueuedReport {
            storage,
            block,
            state,
        });
        if let Err(full) = queued {
            crate::events::debug!(
                node = self.node(),
                datanode = %storage.datanode,
                block = block.id.0,
                gs = block.gs,
                limit = full.limit,
                "report refused: queue full"
            );
        }
    }

    /// `addStoredBlock`: a new location; a COMMITTED block completes at `minReplication`
    /// (`completeBlock` does its safe-mode accounting), else a COMPLETE block is credited
    /// as it crosses the safe replication; on the active, the replication checks. A
    /// location already stored and flagged for a GS mismatch is unflagged
    /// (`removeFromCorruptReplicasMap` with `GENSTAMP_MISMATCH`).
    fn add_stored_block(&mut self, id: BlockId, storage: StorageId) {
        let Some(stored) = self.blocks.get_mut(&id) else {
            return;
        };
        if !stored.locations.insert(storage) {
            self.unflag_genstamp_mismatch(id, storage);
            return;
        }
        let state = stored.state;
        let count = stored.locations.len();
        match state {
            BlockUcState::Committed => self.complete_if_min_replicated(id),
            BlockUcState::Complete => self.count_added_location(count),
            _ => {}
        }
        let complete = self.blocks.get(&id).map(|b| b.state) == Some(BlockUcState::Complete);
        if complete && self.ha == HaState::Active {
            self.check_replication(id);
        }
    }

    /// `CorruptReplicasMap.removeFromCorruptReplicasMap(block, node, GENSTAMP_MISMATCH)`:
    /// only a flag raised for a GS mismatch goes.
    fn unflag_genstamp_mismatch(&mut self, id: BlockId, storage: StorageId) {
        let Some(flagged) = self.corrupt.get_mut(&id) else {
            return;
        };
        if flagged.get(&storage).map(|(_, reason)| *reason) == Some(CorruptReason::GenstampMismatch)
        {
            flagged.remove(&storage);
            crate::events::debug!(
                // The map is borrowed: the name is read from its field.
                node = self.config.namenode_id,
                datanode = %storage.datanode,
                block = id.0,
                why = "reported again healthy",
                "corrupt mark removed"
            );
        }
        if flagged.is_empty() {
            self.corrupt.remove(&id);
        }
    }

    /// A location leaves (DELETED report, omitted from a full report, invalidated).
    pub(super) fn remove_stored_location(&mut self, id: BlockId, storage: StorageId) {
        let Some(stored) = self.blocks.get_mut(&id) else {
            return;
        };
        if !stored.locations.remove(&storage) {
            return;
        }
        let complete = stored.state == BlockUcState::Complete;
        let remaining = stored.locations.len();
        if let Some(corrupt) = self.corrupt.get_mut(&id) {
            corrupt.remove(&storage);
            if corrupt.is_empty() {
                self.corrupt.remove(&id);
            }
        }
        if complete {
            self.count_removed_location(remaining);
        }
    }

    /// `markBlockAsCorrupt`: the replica is flagged with the GS it was reported with
    /// (HDFS-3157) and becomes a location; it is invalidated at once, in safe mode too, if
    /// enough live replicas remain (`invalidateBlock`).
    fn mark_corrupt(&mut self, report: Report, reason: CorruptReason, against: StoredBlockView) {
        let Report {
            storage,
            block: reported,
            state,
            origin,
        } = report;
        let Some(stored) = self.blocks.get_mut(&reported.id) else {
            return;
        };
        stored.locations.insert(storage);
        crate::events::debug!(
            node = self.node(),
            datanode = %storage.datanode,
            block = reported.id.0,
            gs = reported.gs,
            state = %state,
            report = origin.name(),
            why = %reason,
            stored_gs = against.gs,
            stored_state = %against.state,
            postponing = self.postpone.then_some(true),
            "replica marked corrupt"
        );
        self.metrics.corrupt_marked += 1;
        if self.postpone {
            self.metrics.corrupt_marked_while_postponing += 1;
        }
        self.corrupt
            .entry(reported.id)
            .or_default()
            .insert(storage, (reported.gs, reason));
        self.invalidate_if_enough_live(reported.id, storage);
    }

    /// `BlockManager.removeBlocksAssociatedTo` for a datanode that leaves: its locations,
    /// corrupt flags, pending deletions and queued reports (HDFS-6289). Returns how many
    /// queued reports went.
    pub(super) fn remove_datanode(&mut self, datanode: DatanodeId) -> usize {
        let held: Vec<(BlockId, StorageId)> = self
            .blocks
            .iter()
            .flat_map(|(id, b)| b.locations.iter().map(move |s| (*id, *s)))
            .filter(|(_, s)| s.datanode == datanode)
            .collect();
        for (id, storage) in held {
            self.remove_stored_location(id, storage);
        }
        for flagged in self.corrupt.values_mut() {
            flagged.retain(|s, _| s.datanode != datanode);
        }
        self.corrupt.retain(|_, flagged| !flagged.is_empty());
        self.pending_deletion.retain(|s, _| s.datanode != datanode);
        self.reported_storages.retain(|s| s.datanode != datanode);
        self.stale.remove(&datanode);
        let purged = match self.config.behavior.purges_departed_datanode_messages() {
            true => self.queue.remove_all_for_datanode(datanode),
            false => 0,
        };
        crate::events::debug!(node = self.node(), datanode = %datanode, purged, "datanode removed");
        purged
    }
}
