//! The invariants of the HA standby's handling of early datanode messages (HDFS-2742),
//! each checked on a [`NamesystemView`] against what the datanodes sent and hold.
//!
//! The oracle of "healthy" is the latest report a datanode sent about a block: a replica
//! may be flagged corrupt only if that report is itself corrupt against the block's final
//! state (`BlockManager.checkReplicaCorrupt`), never on the strength of a superseded report
//! or of a report judged against a state newer than the one it was produced under.

use std::collections::BTreeMap;

use super::violation::violation;
use crate::namenode::evaluation::{
    BlockUcState, ReplicaVerdict, StoredBlockView, check_replica_corrupt,
};
use crate::namenode::ha::NameNode;
use crate::namenode::namesystem::{HaState, NamesystemApi, NamesystemView, SafeModeCheck};
use crate::namenode::pending_messages::ReportedState;
use crate::namenode::{Block, BlockId, GenerationStamp, ReplicaState, StorageId};
use crate::scenarios::Violation;
use crate::sim::ha_pair::HaPair;
use crate::sim::hdfs_datanode::{HdfsDataNode, Holdings, SentReports, observe_datanodes};
use crate::sync::Arc;

/// The property [`standby_is_passive`] checks.
pub const STANDBY_IS_PASSIVE: &str = "standby is passive";
/// The property [`no_false_corruption`] checks.
pub const NO_FALSE_CORRUPTION: &str = "no false corruption";
/// The property [`safe_mode_matches_recount`] checks.
pub const SAFE_MODE_RECOUNT: &str = "safe-mode recount";
/// The half of [`queue_is_sound`] that compares each queued entry with what its datanode
/// sent (HDFS-15422: the entry is the report, never the stored block).
pub const QUEUE_PER_PAIR_FIFO: &str = "per-(block, datanode) FIFO";
/// The property [`location_completeness`] checks.
pub const LOCATION_COMPLETENESS: &str = "location completeness";

/// **Standby is passive** (and the half of **no false corruption** that needs no
/// oracle): while `postpone` is on, nothing is ever marked corrupt.
pub fn standby_is_passive(nn: &str, view: &NamesystemView) -> Result<(), Violation> {
    if view.metrics.corrupt_marked_while_postponing > 0 {
        return Err(violation(
            STANDBY_IS_PASSIVE,
            format!(
                "{nn} marked {} replica(s) corrupt while postponing; corrupt now {:?}",
                view.metrics.corrupt_marked_while_postponing, view.corrupt
            ),
        ));
    }
    Ok(())
}

/// **Safe-mode recount**: in safe mode the incremental counters (`blockTotal`,
/// `blockSafe`) equal a recount over the namespace. Exact while no replica is flagged
/// corrupt (always on a standby): HDFS's own counters drift once one is, since completion
/// counts flagged locations and unflagging one counts nothing.
pub fn safe_mode_matches_recount(nn: &str, check: &SafeModeCheck) -> Result<(), Violation> {
    let counted = (check.safe_mode.block_total, check.safe_mode.block_safe);
    if check.safe_mode.on && !check.any_corrupt && counted != check.recount {
        return Err(violation(
            SAFE_MODE_RECOUNT,
            format!(
                "{nn}: incremental (total, safe) = {counted:?}, recount = {:?}",
                check.recount
            ),
        ));
    }
    Ok(())
}

/// **Queue soundness** and **per-(block, datanode) FIFO**: once postponing is off the
/// queue (`PendingDataNodeMessages`) is empty; every entry is a report some datanode
/// sent, with its own values (never the stored ones); the entries of one (block,
/// datanode) keep the datanode's send order. `sent` must be observed after `view`.
pub fn queue_is_sound(
    nn: &str,
    view: &NamesystemView,
    sent: &SentReports,
) -> Result<(), Violation> {
    if !view.postpone && !view.queued.is_empty() {
        return Err(violation(
            "queue soundness",
            format!(
                "{nn} is not postponing but holds {} queued report(s)",
                view.queued.len()
            ),
        ));
    }
    let mut per_pair: BTreeMap<(BlockId, StorageId), Vec<(Block, ReportedState)>> = BTreeMap::new();
    for entry in &view.queued {
        per_pair
            .entry((entry.block.id, entry.storage))
            .or_default()
            .push((entry.block, entry.state));
    }
    for (pair, queued) in per_pair {
        let history = sent.get(&pair).map_or(&[][..], Vec::as_slice);
        // Greedy subsequence match: each queued entry at or after the previous match.
        let mut rest = history.iter();
        for entry in &queued {
            if !rest.any(|sent| sent == entry) {
                return Err(violation(
                    QUEUE_PER_PAIR_FIFO,
                    format!(
                        "{nn}: queued {queued:?} for {pair:?} is not in the send order {history:?}"
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn latest_report(sent: &SentReports, pair: (BlockId, StorageId)) -> Option<(Block, ReportedState)> {
    sent.get(&pair).and_then(|reports| reports.last().copied())
}

/// **No false corruption**: a replica is flagged corrupt only if the latest report its
/// datanode sent about the block is itself corrupt against the block's final state.
/// Check once no message is in flight.
pub fn no_false_corruption(
    nn: &str,
    view: &NamesystemView,
    sent: &SentReports,
) -> Result<(), Violation> {
    for (id, flagged) in &view.corrupt {
        let Some(stored) = view.blocks.get(id) else {
            continue;
        };
        let stored_view = StoredBlockView {
            gs: stored.block.gs,
            length: stored.block.length,
            state: stored.state,
        };
        for storage in flagged.keys() {
            let Some((reported, ReportedState::Replica(state))) =
                latest_report(sent, (*id, *storage))
            else {
                continue;
            };
            let verdict = check_replica_corrupt(&reported, state, &stored_view, view.rules);
            if !matches!(verdict, ReplicaVerdict::Corrupt(_)) {
                return Err(violation(
                    NO_FALSE_CORRUPTION,
                    format!(
                        "{nn} flags {storage:?} corrupt for {id:?} ({:?} {:?}), but its latest \
                         report {reported:?} {state:?} is healthy",
                        stored.block, stored.state
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// **Location completeness**: for every COMPLETE block, every datanode holding a
/// FINALIZED replica with the final GS and length, whose latest report says so, is a
/// stored location. Check on the active once no message or command is in flight.
pub fn location_completeness(
    nn: &str,
    view: &NamesystemView,
    sent: &SentReports,
    held: &Holdings,
) -> Result<(), Violation> {
    for (&(id, storage), &(replica, state)) in held {
        let Some(stored) = view.blocks.get(&id) else {
            continue;
        };
        let healthy = state == ReplicaState::Finalized && replica == stored.block;
        let reported =
            latest_report(sent, (id, storage)) == Some((replica, ReportedState::Replica(state)));
        if stored.state == BlockUcState::Complete
            && healthy
            && reported
            && !stored.locations.contains(&storage)
        {
            return Err(violation(
                LOCATION_COMPLETENESS,
                format!(
                    "{nn}: {storage:?} holds and reported {replica:?} FINALIZED, but is not a \
                     location of {id:?} (locations {:?})",
                    stored.locations
                ),
            ));
        }
    }
    Ok(())
}

/// **No stale location**: every live location of a COMPLETE block is a datanode that has
/// reported the block at its generation stamp. A datanode left out of an append's or a
/// recovery's new pipeline keeps the old stamp; counted as a location it completes the
/// block and can be the one replica a lowered replication factor keeps
/// (`BlockManager.removeStaleReplicas` drops it). Replica stamps only grow, so `sent`,
/// observed after `view`, can only excuse a location, never accuse one falsely.
pub fn no_stale_location(
    nn: &str,
    view: &NamesystemView,
    sent: &SentReports,
) -> Result<(), Violation> {
    for (id, stored) in &view.blocks {
        if stored.state != BlockUcState::Complete {
            continue;
        }
        let flagged = view.corrupt.get(id);
        for storage in &stored.locations {
            if flagged.is_some_and(|f| f.contains_key(storage)) {
                continue;
            }
            let newest = sent
                .get(&(*id, *storage))
                .into_iter()
                .flatten()
                .filter(|(_, state)| matches!(state, ReportedState::Replica(_)))
                .map(|(reported, _)| reported.gs)
                .max();
            if newest.is_none_or(|gs| gs < stored.block.gs) {
                return Err(violation(
                    "no stale location",
                    format!(
                        "{nn}: {storage:?} is a live location of COMPLETE {:?}, but reported \
                         it at most at GS {newest:?}",
                        stored.block
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// **No data-loss chain**: every COMPLETE block of the namespace keeps a FINALIZED
/// replica with its final GS and length on some datanode.
pub fn no_block_lost(nn: &str, view: &NamesystemView, held: &Holdings) -> Result<(), Violation> {
    for (id, stored) in &view.blocks {
        if stored.state != BlockUcState::Complete {
            continue;
        }
        let kept = held.iter().any(|(&(held_id, _), &(replica, state))| {
            held_id == *id && state == ReplicaState::Finalized && replica == stored.block
        });
        if !kept {
            return Err(violation(
                "no data-loss chain",
                format!(
                    "{nn}: no datanode holds a replica of COMPLETE {:?}; metrics {:?}",
                    stored.block, view.metrics
                ),
            ));
        }
    }
    Ok(())
}

/// **Generation stamp never reused** (HDFS-14941): an active NameNode's counter is at least
/// the highest GS any active logged (`highest_logged`, read before `view`), so the next
/// `nextGenerationStamp` is a new one. A failover that left the impending GS unapplied
/// would hand out a stamp the old active already used.
pub fn generation_stamp_never_reused(
    nn: &str,
    view: &NamesystemView,
    highest_logged: GenerationStamp,
) -> Result<(), Violation> {
    if view.ha == HaState::Active && view.generation_stamp < highest_logged {
        return Err(violation(
            "generation stamp never reused",
            format!(
                "{nn} is active at GS {} (impending {}), but GS {highest_logged} was logged",
                view.generation_stamp, view.impending_generation_stamp
            ),
        ));
    }
    Ok(())
}

/// The invariants a NameNode must satisfy at any moment its lock is free.
pub fn check_namenode(
    nn: &str,
    namesystem: &dyn NamesystemApi,
    dns: &[Arc<HdfsDataNode>],
) -> Result<(), Violation> {
    let view = namesystem.view();
    let (sent, _) = observe_datanodes(dns);
    standby_is_passive(nn, &view)?;
    safe_mode_matches_recount(nn, &view.safe_mode_check())?;
    queue_is_sound(nn, &view, &sent)?;
    no_stale_location(nn, &view, &sent)
}

/// The end-state invariants of the active once nothing is in flight, and of both
/// NameNodes at any time.
pub fn check_quiescent(
    active: &NameNode,
    standby: &NameNode,
    dns: &[Arc<HdfsDataNode>],
) -> Result<(), Violation> {
    let view = active.namesystem().view();
    let (sent, held) = observe_datanodes(dns);
    let name = format!("{:?} (active)", active.id());
    no_block_lost(&name, &view, &held)?;
    no_false_corruption(&name, &view, &sent)?;
    location_completeness(&name, &view, &sent, &held)?;
    check_namenode(&name, active.namesystem().as_ref(), dns)?;
    check_namenode(
        &format!("{:?} (standby)", standby.id()),
        standby.namesystem().as_ref(),
        dns,
    )
}

/// [`check_namenode`] and [`generation_stamp_never_reused`] on both NameNodes of
/// `pair`, whatever their roles.
pub fn check_pair_namenodes(pair: &HaPair) -> Result<(), Violation> {
    for nn in pair.namenodes() {
        let name = format!("{:?}", nn.id());
        check_namenode(&name, nn.namesystem().as_ref(), pair.datanodes())?;
        let logged = pair.highest_logged_genstamp();
        generation_stamp_never_reused(&name, &nn.namesystem().view(), logged)?;
    }
    Ok(())
}

/// [`check_quiescent`] on the current roles of `pair`, and
/// [`generation_stamp_never_reused`] on its active.
pub fn check_pair_quiescent(pair: &HaPair) -> Result<(), Violation> {
    let (active, standby) = pair.roles();
    check_quiescent(&active, &standby, pair.datanodes())?;
    let logged = pair.highest_logged_genstamp();
    let name = format!("{:?} (active)", active.id());
    generation_stamp_never_reused(&name, &active.namesystem().view(), logged)
}
