//! The named race windows of the standby's cases (HDFS-2742 and its follow-ups
//! HDFS-14941, HDFS-3605, HDFS-17905, HDFS-6289, HDFS-15422): predicates over the NameNode's protocol events
//! (`docs/event-log.md`), declared per scenario in `windows`.

use crate::check::exploration::{RaceWindow, Seen, WindowState};

/// The key of the block a NameNode event names, on that NameNode.
fn namenode_block_key(event: &Seen<'_>) -> u64 {
    event.node_key() ^ event.key("block").rotate_left(21)
}

/// HDFS-2742: a datanode's RBW report of a block reaches a NameNode ahead of the edits
/// that complete the block (it is queued, and the completion edit is replayed after), or
/// is handled after the completion (queued, judged, or marked corrupt): either way the
/// report is older than the block's last state, and judging it against the COMPLETE block
/// is the seed's false corruption. (A whole queued message names no block: it counts
/// when its RBW replica is judged.)
pub const RBW_AFTER_COMPLETION: RaceWindow = RaceWindow {
    seed: "HDFS-2742",
    name: "RBW report queued ahead of the completion edit, or arriving after it",
    reads: &[
        "block completed",
        "report queued",
        "report processed",
        "replica marked corrupt",
    ],
    fields: &["block", "state"],
    step: rbw_after_completion,
};

fn rbw_after_completion(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let key = namenode_block_key(event);
    // slots: 0 the completed block, 1 the block of an RBW report queued.
    match event.name {
        "block completed" if state.slots[1] == key => true,
        "block completed" => {
            state.stage = 1;
            state.slots[0] = key;
            false
        }
        _ if event.text("state") != Some("RBW") => false,
        "report queued" if state.stage == 0 || state.slots[0] != key => {
            state.slots[1] = key;
            false
        }
        _ => state.stage == 1 && state.slots[0] == key,
    }
}

/// HDFS-2742: a NameNode judges a FINALIZED report of a block before it replayed the
/// block's completion (`OP_CLOSE`): the replica the safe-mode count must credit when the
/// block completes.
pub const FINALIZED_BEFORE_COMPLETION: RaceWindow = RaceWindow {
    seed: "HDFS-2742",
    name: "FINALIZED report judged before the completion edit",
    reads: &["report processed", "edit applied", "block completed"],
    fields: &["block", "state", "op"],
    step: finalized_before_completion,
};

fn finalized_before_completion(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let key = namenode_block_key(event);
    match event.name {
        "report processed" if event.text("state") == Some("FINALIZED") => {
            state.stage = 1;
            state.slots[0] = key;
            false
        }
        "report processed" => false,
        "edit applied" if event.text("op") != Some("OP_CLOSE") => false,
        _ => state.stage == 1 && state.slots[0] == key,
    }
}

/// HDFS-2742: a datanode's newer report of a replica arrives (queued or judged) while an
/// older report of the same replica still waits in the queue (the older one is
/// superseded).
pub const SUPERSEDED_QUEUED_REPORT: RaceWindow = RaceWindow {
    seed: "HDFS-2742",
    name: "a newer report of a replica while an older one waits queued",
    reads: &[
        "report queued",
        "report processed",
        "queued reports drained",
    ],
    fields: &["block", "datanode", "gs", "state", "report"],
    step: superseded_queued_report,
};

fn superseded_queued_report(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let key = namenode_block_key(event);
    let replica = key ^ event.key("datanode").rotate_left(42);
    let version = event.key("gs") ^ event.key("state").rotate_left(13);
    let newer = state.stage == 1 && state.slots[0] == replica && state.slots[1] != version;
    match event.name {
        "report processed" => newer && event.text("report") != Some("queued"),
        "report queued" => {
            if newer {
                return true;
            }
            state.stage = 1;
            state.slots[0] = replica;
            state.slots[1] = version;
            state.slots[2] = key;
            false
        }
        _ => {
            // Drained: what was queued of the block is judged, nothing is left behind.
            if state.slots[2] == key {
                state.stage = 0;
            }
            false
        }
    }
}

/// HDFS-14941: a NameNode handles a datanode's report of a block after replaying the
/// block's generation stamp edit and before the edit that adds the block (the report
/// must be queued, not dropped).
pub const REPORT_BETWEEN_GENSTAMP_AND_BLOCK_EDITS: RaceWindow = RaceWindow {
    seed: "HDFS-2742",
    name: "a report between a block's genstamp edit and its block edit",
    reads: &["edit applied", "report queued", "report processed"],
    fields: &["op", "gs", "block"],
    step: report_between_genstamp_and_block_edits,
};

fn report_between_genstamp_and_block_edits(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let node = event.node_key();
    let gs = event.number("gs").unwrap_or(0);
    // slots: 0 the NameNode, 1 the stamp its last genstamp edit set.
    match event.name {
        "edit applied" if event.text("op") == Some("OP_SET_GENSTAMP_V2") => {
            state.stage = 1;
            state.slots[0] = node;
            state.slots[1] = gs;
            false
        }
        "edit applied" => {
            if state.slots[0] == node && event.value("block").is_some() && gs == state.slots[1] {
                state.stage = 0;
            }
            false
        }
        _ => state.stage == 1 && state.slots[0] == node && gs == state.slots[1],
    }
}

/// HDFS-3605: a NameNode becoming active replays edits in its catch-up after a report was
/// queued (the report waits through the catch-up, or is judged in it against an
/// intermediate state of the block): the last report queued on the NameNode is followed
/// by at least one edit before the catch-up ends.
pub const CATCH_UP_WITH_QUEUED_REPORTS: RaceWindow = RaceWindow {
    seed: "HDFS-2742",
    name: "failover's catch-up replays edits after a report was queued",
    reads: &["report queued", "edit applied", "failover: catch-up done"],
    fields: &["edits"],
    step: catch_up_with_queued_reports,
};

fn catch_up_with_queued_reports(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let node = event.node_key();
    // slots: 0 the NameNode of the last report queued, 1 the edits it applied since.
    match event.name {
        "report queued" => {
            state.stage = 1;
            state.slots[0] = node;
            state.slots[1] = 0;
            false
        }
        "edit applied" => {
            if state.slots[0] == node {
                state.slots[1] += 1;
            }
            false
        }
        _ => {
            state.stage == 1
                && state.slots[0] == node
                && state.slots[1] > 0
                && event.number("edits").is_some_and(|n| n > 0)
        }
    }
}

/// HDFS-17905: a NameNode replays a file's deletion while datanode reports wait in its
/// queue (the entries of the deleted blocks must go with them).
pub const DELETION_WITH_QUEUED_REPORTS: RaceWindow = RaceWindow {
    seed: "HDFS-2742",
    name: "a file deleted while reports wait queued",
    reads: &["report queued", "queued reports drained", "edit applied"],
    fields: &["op"],
    step: deletion_with_queued_reports,
};

fn deletion_with_queued_reports(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let node = event.node_key();
    match event.name {
        "report queued" => {
            state.stage = 1;
            state.slots[0] = node;
            false
        }
        "queued reports drained" => {
            if state.slots[0] == node {
                state.stage = 0;
            }
            false
        }
        _ => state.stage == 1 && state.slots[0] == node && event.text("op") == Some("OP_DELETE"),
    }
}

/// HDFS-6289: a NameNode removes a datanode (dead, or gone after decommissioning) while a
/// report of that datanode waits in its queue.
pub const REMOVAL_WITH_QUEUED_REPORTS: RaceWindow = RaceWindow {
    seed: "HDFS-2742",
    name: "a datanode removed while its reports wait queued",
    reads: &[
        "report queued",
        "queued reports drained",
        "datanode removed",
    ],
    fields: &["datanode"],
    step: removal_with_queued_reports,
};

fn removal_with_queued_reports(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let node = event.node_key();
    // slots: 0 the NameNode of the last report queued, 1 that report's datanode.
    match event.name {
        "report queued" => {
            state.stage = 1;
            state.slots[0] = node;
            state.slots[1] = event.key("datanode");
            false
        }
        "queued reports drained" => {
            if state.slots[0] == node {
                state.stage = 0;
            }
            false
        }
        _ => state.stage == 1 && state.slots[0] == node && state.slots[1] == event.key("datanode"),
    }
}

/// HDFS-2742: a datanode's report of a block is queued ahead of the edit that adds the
/// block or moves it to the report's stamp, and replay then reaches that edit (which must
/// judge it).
pub const REPORT_QUEUED_AHEAD_OF_ITS_BLOCK_EDIT: RaceWindow = RaceWindow {
    seed: "HDFS-2742",
    name: "a report queued ahead of the edit that adds or re-stamps its block",
    reads: &["report queued", "edit applied"],
    fields: &["block", "gs", "op"],
    step: report_queued_ahead_of_its_block_edit,
};

fn report_queued_ahead_of_its_block_edit(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let key = namenode_block_key(event);
    let gs = event.number("gs").unwrap_or(0);
    // slots: 0 the block of the last report queued, 1 its stamp.
    match event.name {
        "report queued" => {
            state.stage = 1;
            state.slots[0] = key;
            state.slots[1] = gs;
            false
        }
        _ => {
            let block_edit = matches!(event.text("op"), Some("OP_ADD_BLOCK" | "OP_UPDATE_BLOCKS"));
            state.stage == 1 && block_edit && state.slots[0] == key && state.slots[1] == gs
        }
    }
}

/// HDFS-15422: a NameNode postpones a report whose stamp is older than the stored
/// block's (queued as corrupt-looking, not as future): what it queues must be the report.
pub const STALE_REPORT_QUEUED: RaceWindow = RaceWindow {
    seed: "HDFS-2742",
    name: "a report older than its stored block queued while postponing",
    reads: &["report queued"],
    fields: &["why"],
    step: stale_report_queued,
};

fn stale_report_queued(_state: &mut WindowState, event: &Seen<'_>) -> bool {
    event.text("why") == Some("genstamp mismatch")
}
