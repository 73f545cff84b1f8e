//! The race windows of the scenarios beyond the seeds' reproductions: each predicate over
//! constructed event sequences, reached by the interleaving it names and not by its
//! neighbour; and every fixed case of the catalogue declares at least one window.

use hadoop_ref::check::catalogue::windows::{
    CATCH_UP_WITH_QUEUED_REPORTS, DELETING_ROUND_DURING_RECONCILIATION,
    DELETION_WITH_QUEUED_REPORTS, DEPOSED_COMMAND_AFTER_NEWER_TERM,
    REPORT_BETWEEN_GENSTAMP_AND_BLOCK_EDITS,
};
use hadoop_ref::check::catalogue::{self, Expectation};
use hadoop_ref::story::{Event, Story, read_fields};

/// An event of `node` named `name` with `fields`.
fn event(node: &str, name: &str, fields: &[(&str, &str)]) -> Event {
    Event {
        step: 0,
        thread: "main-thread".to_owned(),
        node: Some(node.to_owned()),
        component: "test".to_owned(),
        name: name.to_owned(),
        fields: read_fields(fields.iter().copied()),
    }
}

fn story(events: Vec<Event>) -> Story {
    Story {
        events,
        left_out: 0,
    }
}

#[test]
fn every_fixed_case_declares_a_race_window() {
    let bare: Vec<String> = catalogue::all()
        .into_iter()
        .filter(|c| c.expectation == Expectation::Holds && c.windows.is_empty())
        .map(|c| c.id())
        .collect();
    assert!(bare.is_empty(), "fixed cases without a window: {bare:?}");
}

#[test]
fn a_deposed_leaders_command_after_a_newer_term_is_the_window() {
    let stepped_down = event("scm1", "stepped down", &[("term", "1")]);
    let heard = event("dn2", "heartbeat term received", &[("term", "2")]);
    let stale = event("dn2", "command queued", &[("term", "1")]);
    let reached = story(vec![stepped_down.clone(), heard.clone(), stale.clone()]);
    assert!(DEPOSED_COMMAND_AFTER_NEWER_TERM.reached_by(&reached));
    // Before the datanode heard the newer term, the command is not yet stale there.
    let unheard = story(vec![stepped_down.clone(), stale.clone(), heard]);
    assert!(!DEPOSED_COMMAND_AFTER_NEWER_TERM.reached_by(&unheard));
    // Another datanode heard it: not this one's window.
    let elsewhere = event("dn3", "heartbeat term received", &[("term", "2")]);
    assert!(!DEPOSED_COMMAND_AFTER_NEWER_TERM.reached_by(&story(vec![
        stepped_down,
        elsewhere,
        stale
    ])));
}

#[test]
fn a_deleting_rounds_tree_write_during_a_reconciliation_is_the_window() {
    let started = event("dn1", "reconciliation started", &[("container", "c1")]);
    let finished = event("dn1", "reconciliation finished", &[("container", "c1")]);
    let write = |by: &str| {
        event(
            "dn1",
            "tree write failed",
            &[("container", "c1"), ("by", by)],
        )
    };
    let reached = story(vec![
        started.clone(),
        write("deleting round"),
        finished.clone(),
    ]);
    assert!(DELETING_ROUND_DURING_RECONCILIATION.reached_by(&reached));
    let after = story(vec![started.clone(), finished, write("deleting round")]);
    assert!(!DELETING_ROUND_DURING_RECONCILIATION.reached_by(&after));
    let own_write = story(vec![started, write("reconciliation")]);
    assert!(!DELETING_ROUND_DURING_RECONCILIATION.reached_by(&own_write));
}

#[test]
fn a_report_between_the_genstamp_and_block_edits_is_the_window() {
    let genstamp = event(
        "nn1",
        "edit applied",
        &[("op", "OP_SET_GENSTAMP_V2"), ("gs", "1")],
    );
    let block = event(
        "nn1",
        "edit applied",
        &[("op", "OP_ADD_BLOCK"), ("block", "blk_100"), ("gs", "1")],
    );
    let report = event("nn1", "report queued", &[("block", "blk_100"), ("gs", "1")]);
    let reached = story(vec![genstamp.clone(), report.clone(), block.clone()]);
    assert!(REPORT_BETWEEN_GENSTAMP_AND_BLOCK_EDITS.reached_by(&reached));
    let after = story(vec![genstamp, block, report]);
    assert!(!REPORT_BETWEEN_GENSTAMP_AND_BLOCK_EDITS.reached_by(&after));
}

#[test]
fn a_catch_up_after_a_queued_report_is_the_window() {
    let queued = event("nn1", "report queued", &[("block", "blk_100"), ("gs", "2")]);
    let edit = event("nn1", "edit applied", &[("op", "OP_CLOSE")]);
    let done = event("nn1", "failover: catch-up done", &[("edits", "1")]);
    let reached = story(vec![queued.clone(), edit.clone(), done.clone()]);
    assert!(CATCH_UP_WITH_QUEUED_REPORTS.reached_by(&reached));
    // The report queued after the last edit: the catch-up never saw it waiting.
    assert!(!CATCH_UP_WITH_QUEUED_REPORTS.reached_by(&story(vec![edit, queued, done])));
}

#[test]
fn a_file_deleted_while_reports_wait_queued_is_the_window() {
    let queued = event("nn1", "report queued", &[("block", "blk_100"), ("gs", "2")]);
    let drained = event("nn1", "queued reports drained", &[("count", "1")]);
    let delete = event("nn1", "edit applied", &[("op", "OP_DELETE")]);
    assert!(DELETION_WITH_QUEUED_REPORTS.reached_by(&story(vec![queued.clone(), delete.clone()])));
    assert!(!DELETION_WITH_QUEUED_REPORTS.reached_by(&story(vec![queued, drained, delete])));
}
