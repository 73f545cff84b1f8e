//! The story of each seed's reproduction reads as the race: a committed, minimized legacy
//! catch is replayed with its protocol events, and the events a person needs to see the
//! race are there, in the order the race needs them, within a table short enough to read.

use std::path::Path;

use hadoop_ref::check::shuttle::{ReplayOutcome, explain_file};
use hadoop_ref::story::{Event, Story};

/// A story a person reads at once: the seed reproductions stay within this many events.
const MAX_SEED_STORY_EVENTS: usize = 40;

/// Replays a committed schedule; its violation must name `seed` and its story must be short.
fn story_of(schedule: &str, seed: &str) -> Story {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("shuttle-tests/schedules")
        .join(schedule);
    let (outcome, story) = explain_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let ReplayOutcome::Violation(violation) = outcome else {
        panic!("{schedule} does not replay to a violation: {outcome:?}");
    };
    assert!(violation.starts_with(seed), "{schedule}: {violation}");
    assert!(
        story.events.len() <= MAX_SEED_STORY_EVENTS && story.left_out == 0,
        "{schedule}: {} events, {} left out\n{}",
        story.events.len(),
        story.left_out,
        story.table()
    );
    story
}

/// The index of the first event after `from` that `matches`, or a failure showing the story.
fn find(story: &Story, from: usize, what: &str, matches: impl Fn(&Event) -> bool) -> usize {
    story.events[from..]
        .iter()
        .position(matches)
        .map(|at| from + at)
        .unwrap_or_else(|| panic!("no `{what}` after event {from}\n{}", story.table()))
}

/// HDDS-17268, MC4: the restarted datanode ignores the new leader's term until its first
/// command initialises it, so the old leader's force delete runs.
#[test]
fn term_story_shows_the_ignored_term_before_the_stale_delete_runs() {
    let story = story_of(
        "heartbeat_term_fences_believing_old_leader.Legacy.random.schedule",
        "HDDS-17268",
    );
    let ignored = find(&story, 0, "term ignored", |e| {
        e.name == "heartbeat term ignored before init" && e.number("term") == Some(2)
    });
    let init = find(&story, ignored, "term initialised", |e| {
        e.name == "term initialised" && e.number("term") == Some(1)
    });
    find(&story, init, "stale delete run", |e| {
        e.name == "command run"
            && e.text("command") == Some("DeleteContainer")
            && e.flag("force") == Some(true)
    });
}

/// HDDS-16811: two reconciliations of one container on one datanode pull and commit the
/// same block, and the partial one's tree is written in between.
#[test]
fn container_story_shows_two_reconcilers_committing_one_block() {
    let story = story_of(
        "concurrent_reconciliations_unguarded.SeedPatch.random.schedule",
        "HDDS-16811",
    );
    let commit = |e: &Event| e.name == "commit decided" && e.number("block") == Some(1);
    let first = find(&story, 0, "a commit", commit);
    let second = find(&story, first + 1, "a second commit", commit);
    assert_ne!(
        story.events[first].thread,
        story.events[second].thread,
        "two reconciler threads commit block 1\n{}",
        story.table()
    );
    find(&story, 0, "a partial commit", |e| {
        commit(e) && e.flag("partial") == Some(true)
    });
}

/// HDDS-16891: the new leader grants a container before its buckets are rebuilt; the
/// rebuild then resets the datanode's slots from a table read on either side of the grant,
/// and the datanode refuses a create it was granted.
#[test]
fn scm_story_shows_an_allocation_before_the_rebuild() {
    let story = story_of(
        "allocation_waits_for_the_rebuild.LegacyRebuildWithoutGate.random.schedule",
        "HDDS-16891",
    );
    let on_scm2 = |e: &Event| e.node.as_deref() == Some("scm2");
    let ready = find(&story, 0, "scm2 ready", |e| {
        on_scm2(e) && e.name == "leader ready"
    });
    let granted = find(&story, ready, "scm2 grants before its rebuild", |e| {
        on_scm2(e) && e.name == "allocation granted"
    });
    find(&story, granted, "scm2's rebuild, after the grant", |e| {
        on_scm2(e) && e.name == "buckets rebuilt"
    });
    find(&story, granted, "the refused create", |e| {
        e.name == "create refused"
    });
}

/// HDFS-2742 (HDFS-14941's split batch): the new active processes the datanode's report
/// before it has the block, and nothing queues it for the edit that adds the block.
#[test]
fn standby_story_shows_a_report_judged_before_its_block_edit() {
    let story = story_of(
        "replica_reported_between_split_batches_is_recorded.LegacyNoImpendingGenstamp.random.schedule",
        "HDFS-2742",
    );
    let on_nn1 = |e: &Event| e.node.as_deref() == Some("nn1");
    let judged = find(&story, 0, "nn1 judges the report", |e| {
        on_nn1(e)
            && e.name == "report processed"
            && e.text("verdict").is_some_and(|v| v.starts_with("unknown"))
    });
    find(&story, judged, "the block's edit", |e| {
        on_nn1(e) && e.name == "edit applied" && e.text("op") == Some("OP_ADD_BLOCK")
    });
}
