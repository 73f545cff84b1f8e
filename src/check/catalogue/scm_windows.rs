//! The named race windows of the SCM's cases (HDDS-16891): predicates over the SCM's and
//! the datanodes' protocol events (`docs/event-log.md`), declared per scenario in
//! `windows`.

use crate::check::exploration::{RaceWindow, Seen, WindowState};

/// HDDS-16891: an SCM that became leader is asked to allocate before its pending
/// buckets were rebuilt from the replicated log.
pub const ALLOCATION_BEFORE_REBUILD: RaceWindow = RaceWindow {
    seed: "HDDS-16891",
    name: "allocation before the rebuild",
    reads: &[
        "became leader",
        "buckets rebuilt",
        "allocation refused",
        "slots reserved",
        "allocation granted",
    ],
    fields: &[],
    step: allocation_before_rebuild,
};

fn allocation_before_rebuild(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let node = event.node_key();
    match event.name {
        "became leader" => {
            state.stage = 1;
            state.slots[0] = node;
            false
        }
        "buckets rebuilt" => {
            if state.slots[0] == node {
                state.stage = 0;
            }
            false
        }
        _ => state.stage == 1 && state.slots[0] == node,
    }
}

/// HDDS-16891: leadership moves (or the leader restarts) after a container was granted
/// and before its datanodes created it, and the new leader allocates meanwhile.
pub const LEADER_CHANGE_BEFORE_CREATION: RaceWindow = RaceWindow {
    seed: "HDDS-16891",
    name: "leader change between a grant and the container's creation, then an allocation",
    reads: &[
        "allocation granted",
        "became leader",
        "container created",
        "slots reserved",
        "allocation refused",
    ],
    fields: &["container"],
    step: leader_change_before_creation,
};

fn leader_change_before_creation(state: &mut WindowState, event: &Seen<'_>) -> bool {
    leader_change_then_allocation(state, event, "allocation granted", |e, container| {
        e.name == "container created" && e.key("container") == container
    })
}

/// HDDS-16891: a container is granted, leadership moves before any SCM processed a
/// container report, then the new leader allocates (the granted container, written or
/// not, has no footprint but the rebuild's).
pub const LEADER_CHANGE_BEFORE_REPORT: RaceWindow = RaceWindow {
    seed: "HDDS-16891",
    name: "leader change between a grant and any container report, then an allocation",
    reads: &[
        "allocation granted",
        "became leader",
        "container report processed",
        "slots reserved",
        "allocation refused",
    ],
    fields: &["container"],
    step: leader_change_before_report,
};

fn leader_change_before_report(state: &mut WindowState, event: &Seen<'_>) -> bool {
    leader_change_then_allocation(state, event, "allocation granted", |e, _| {
        e.name == "container report processed"
    })
}

/// A container's work begins (`begins`, its `container` kept in slot 0), a leader is
/// elected (slot 1) before `ends` says the work is confirmed, then that leader
/// allocates (`slots reserved` or `allocation refused`).
fn leader_change_then_allocation(
    state: &mut WindowState,
    event: &Seen<'_>,
    begins: &str,
    ends: impl Fn(&Seen<'_>, u64) -> bool,
) -> bool {
    match event.name {
        name if name == begins && state.stage == 0 => {
            state.stage = 1;
            state.slots[0] = event.key("container");
            false
        }
        "became leader" if state.stage >= 1 => {
            state.stage = 2;
            state.slots[1] = event.node_key();
            false
        }
        "slots reserved" | "allocation refused" => {
            state.stage == 2 && state.slots[1] == event.node_key()
        }
        _ => {
            if ends(event, state.slots[0]) {
                state.stage = 0;
            }
            false
        }
    }
}

/// HDDS-16891: a datanode re-registers (a new address, version or port) after a container
/// was granted on it and before it created the container, and the leader allocates
/// meanwhile.
pub const REREGISTRATION_BEFORE_CREATION: RaceWindow = RaceWindow {
    seed: "HDDS-16891",
    name: "re-registration between a grant and the container's creation, then an allocation",
    reads: &[
        "allocation granted",
        "datanode re-registered",
        "container created",
        "slots reserved",
        "allocation refused",
    ],
    fields: &["container"],
    step: reregistration_before_creation,
};

fn reregistration_before_creation(state: &mut WindowState, event: &Seen<'_>) -> bool {
    match event.name {
        "allocation granted" if state.stage == 0 => {
            state.stage = 1;
            state.slots[0] = event.key("container");
            false
        }
        "datanode re-registered" if state.stage >= 1 => {
            state.stage = 2;
            false
        }
        "container created" => {
            if state.slots[0] == event.key("container") {
                state.stage = 0;
            }
            false
        }
        _ => state.stage == 2,
    }
}

/// HDDS-16891: a datanode created a container and the leader allocates on it before the
/// datanode's report of that container was processed (the space check must count the
/// container as pending or as created, never as neither).
pub const ALLOCATION_BEFORE_CREATION_REPORT: RaceWindow = RaceWindow {
    seed: "HDDS-16891",
    name: "allocation between a container's creation and its report",
    reads: &[
        "container created",
        "container report processed",
        "slots reserved",
        "allocation refused",
    ],
    fields: &["container", "confirmed"],
    step: allocation_before_creation_report,
};

fn allocation_before_creation_report(state: &mut WindowState, event: &Seen<'_>) -> bool {
    match event.name {
        "container created" => {
            state.stage = 1;
            state.slots[0] = event.key("container");
            false
        }
        "container report processed" => {
            if event.lists_key("confirmed", state.slots[0]) {
                state.stage = 0;
            }
            false
        }
        _ => state.stage == 1,
    }
}

/// HDDS-14924: the leader sent a replicate and allocates before the target's report of
/// the copy confirmed it (the target's room must count the copy as pending).
pub const ALLOCATION_BEFORE_COPY_REPORT: RaceWindow = RaceWindow {
    seed: "HDDS-16891",
    name: "allocation between a replicate and its copy's report",
    reads: &[
        "under-replicated replica added",
        "container report processed",
        "slots reserved",
        "allocation refused",
    ],
    fields: &["container", "confirmed"],
    step: allocation_before_copy_report,
};

fn allocation_before_copy_report(state: &mut WindowState, event: &Seen<'_>) -> bool {
    match event.name {
        "under-replicated replica added" => {
            state.stage = 1;
            state.slots[0] = event.key("container");
            false
        }
        "container report processed" => {
            if event.lists_key("confirmed", state.slots[0]) {
                state.stage = 0;
            }
            false
        }
        _ => state.stage == 1,
    }
}

/// HDDS-16891 with HDDS-14924: leadership moves after a replicate was sent and before the
/// copy's report confirmed it, and the new leader allocates meanwhile.
pub const LEADER_CHANGE_BEFORE_COPY_REPORT: RaceWindow = RaceWindow {
    seed: "HDDS-16891",
    name: "leader change between a replicate and its copy's report, then an allocation",
    reads: &[
        "under-replicated replica added",
        "became leader",
        "container report processed",
        "slots reserved",
        "allocation refused",
    ],
    fields: &["container", "confirmed"],
    step: leader_change_before_copy_report,
};

fn leader_change_before_copy_report(state: &mut WindowState, event: &Seen<'_>) -> bool {
    leader_change_then_allocation(
        state,
        event,
        "under-replicated replica added",
        |e, container| {
            e.name == "container report processed" && e.lists_key("confirmed", container)
        },
    )
}

/// HDDS-8473: a replicate's target drops it as stale (it heard a newer term), and an SCM
/// becomes leader again (in either order): the re-elected SCM's pending add of its
/// earlier term would name a copy that will not come.
pub const STALE_REPLICATE_AND_REELECTION: RaceWindow = RaceWindow {
    seed: "HDDS-17268",
    name: "replicate dropped as stale, and an SCM leading again",
    reads: &["command dropped as stale", "became leader"],
    fields: &["command"],
    step: stale_replicate_and_reelection,
};

/// Stage bits: a replicate was dropped as stale (1), an SCM became leader a second time
/// (2). Slots 1 to 3 keep the SCMs seen becoming leader.
fn stale_replicate_and_reelection(state: &mut WindowState, event: &Seen<'_>) -> bool {
    let before = state.stage;
    match event.name {
        "command dropped as stale" if event.text("command") == Some("ReplicateContainer") => {
            state.stage |= 1;
        }
        "became leader" => {
            let node = event.node_key();
            if state.slots[1..].contains(&node) {
                state.stage |= 2;
            } else if let Some(free) = state.slots[1..].iter_mut().find(|s| **s == 0) {
                *free = node;
            }
        }
        _ => {}
    }
    before != 3 && state.stage == 3
}
