//! HDFS-6289 on the standby: queued reports of a datanode the NameNode removes.
//!
//! **The race.** A datanode's reports wait in the standby's queue for edits not yet
//! replayed; the datanode dies and the NameNode removes it. Left queued, they reach
//! failover's drain as reports of a datanode nobody knows any more (upstream the
//! transition to active fails; here the new active records a location nothing takes back).
//!
//! **The fix** (`DatanodeManager.removeDatanode` calls
//! `PendingDataNodeMessages.removeAllMessagesForDatanode`): removing a datanode drops its
//! queued reports, with its locations and their safe-mode credit.

use super::edits::{BLOCK_LENGTH, block, open_file};
use super::invariants::safe_mode_matches_recount;
use super::reporter::{FINALIZED, Reporter, standby};
use crate::namenode::namesystem::{
    EditOp, FileId, NamesystemApi, NamesystemFactory, NamesystemView,
};
use crate::namenode::{Block, BlockId, DatanodeId};
use crate::scenarios::Violation;

/// The JIRA every violation of this scenario names.
pub const DEPARTED_SEED_KEY: &str = "HDFS-6289";

/// The property [`no_report_of_a_departed_datanode`] checks.
pub const NO_DEPARTED_DATANODE_REPORT: &str = "no report of a departed datanode";

/// The datanode that dies.
const DEPARTED: DatanodeId = DatanodeId(3);

fn departed_violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: DEPARTED_SEED_KEY,
        property,
        detail,
    }
}

/// **No report of a departed datanode**: once `departed` is removed, the namesystem
/// neither queues a report of it nor lists it as a location of any block.
pub fn no_report_of_a_departed_datanode(
    nn: &str,
    view: &NamesystemView,
    departed: DatanodeId,
) -> Result<(), Violation> {
    let queued: Vec<String> = view
        .queued
        .iter()
        .filter(|entry| entry.storage.datanode == departed)
        .map(|entry| format!("{} {}", entry.state, entry.block))
        .collect();
    let located: Vec<String> = view
        .blocks
        .iter()
        .filter(|(_, stored)| stored.locations.iter().any(|s| s.datanode == departed))
        .map(|(id, _)| id.to_string())
        .collect();
    if queued.is_empty() && located.is_empty() {
        return Ok(());
    }
    Err(departed_violation(
        NO_DEPARTED_DATANODE_REPORT,
        format!(
            "{nn}: {departed} was removed, yet its queued report(s) [{}] remain and it is a \
             location of [{}]",
            queued.join(", "),
            located.join(", ")
        ),
    ))
}

/// **No report of a departed datanode** and **safe-mode recount** on the schedule of
/// HDFS-6289, sequential. The standby knows two complete files: the first reported by
/// DN1-DN3 before its close replays (completion credits it once, three replicas present),
/// the second held by DN3 alone. The active logs a third file; DN1 and DN3 report its
/// block before the standby replays it (queued as future). DN3 dies and is removed: its
/// queued report must go, and the second file's block loses its safe-mode credit. At
/// failover the catch-up replays the third file and judges the queue: DN1 only.
pub fn departed_datanode_leaves_no_queued_report<F: NamesystemFactory>(
    factory: F,
) -> Result<(), Violation> {
    let ns = standby(factory, 0);
    let mut reporter = Reporter::default();
    let first = block(BlockId(1), 1, BLOCK_LENGTH);
    replay(&*ns, open_file(FileId(1), 3, block(first.id, 1, 0)))?;
    for dn in 1..=3 {
        reporter.incremental(&*ns, dn, first, FINALIZED);
    }
    replay(&*ns, vec![close(1, first)])?;
    let second = block(BlockId(2), 2, BLOCK_LENGTH);
    let mut edits = open_file(FileId(2), 1, block(second.id, 2, 0));
    edits.push(close(2, second));
    replay(&*ns, edits)?;
    reporter.incremental(&*ns, DEPARTED.0, second, FINALIZED);
    safe_mode_matches_recount("standby", &ns.safe_mode_check())?;
    let third = block(BlockId(3), 3, BLOCK_LENGTH);
    reporter.incremental(&*ns, 1, third, FINALIZED);
    reporter.incremental(&*ns, DEPARTED.0, third, FINALIZED);
    ns.remove_datanode(DEPARTED);
    no_report_of_a_departed_datanode("standby", &ns.view(), DEPARTED)?;
    safe_mode_matches_recount("standby", &ns.safe_mode_check())?;
    let mut rest = open_file(FileId(3), 2, block(third.id, 3, 0));
    rest.push(close(3, third));
    ns.transition_to_active(&rest, &[DatanodeId(1), DatanodeId(2)])
        .map_err(|error| setup(error.to_string()))?;
    no_report_of_a_departed_datanode("new active", &ns.view(), DEPARTED)?;
    safe_mode_matches_recount("new active", &ns.safe_mode_check())
}

fn close(file: u64, last: Block) -> EditOp {
    EditOp::Close {
        file: FileId(file),
        blocks: vec![last],
    }
}

fn replay(ns: &dyn NamesystemApi, edits: Vec<EditOp>) -> Result<(), Violation> {
    ns.apply_edits(&edits)
        .map(|_| ())
        .map_err(|(_, error)| setup(error.to_string()))
}

fn setup(detail: String) -> Violation {
    departed_violation("scenario setup", detail)
}
