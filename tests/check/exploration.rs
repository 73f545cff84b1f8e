//! Coverage of what a run explored (`check::exploration`): the race windows' predicates
//! over constructed event sequences, and the hook's counts over real components.

use hadoop_ref::check::catalogue::windows::{
    DELETE_BETWEEN_PULL_AND_COMMIT, RBW_AFTER_COMPLETION, TERM_BEFORE_INIT, windows_of,
};
use hadoop_ref::check::catalogue::{self, Expectation};
use hadoop_ref::check::exploration::Coverage;
use hadoop_ref::clock::SystemClock;
use hadoop_ref::datanode::state_context::{StateContext, StateContextBehavior, StateContextConfig};
use hadoop_ref::hdds::ids::ScmId;
use hadoop_ref::story::{Event, Story, read_fields};

/// An event of `node`'s `thread` named `name` with `fields`.
fn event(node: &str, thread: &str, name: &str, fields: &[(&str, &str)]) -> Event {
    Event {
        step: 0,
        thread: thread.to_owned(),
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
fn heartbeat_term_before_init_then_a_stale_command_is_the_window() {
    let reached = story(vec![
        event(
            "dn1",
            "endpoint scm2",
            "heartbeat term recorded for init",
            &[("term", "2")],
        ),
        event(
            "dn1",
            "endpoint scm1",
            "command queued",
            &[("command", "Close"), ("term", "1")],
        ),
    ]);
    assert!(TERM_BEFORE_INIT.reached_by(&reached));
    // The same command after the term was initialised is fenced, not the window.
    let after_init = story(vec![
        event(
            "dn1",
            "endpoint scm2",
            "heartbeat term recorded for init",
            &[("term", "2")],
        ),
        event("dn1", "processor", "term initialised", &[("term", "2")]),
        event(
            "dn1",
            "endpoint scm1",
            "command queued",
            &[("command", "Close"), ("term", "1")],
        ),
    ]);
    assert!(!TERM_BEFORE_INIT.reached_by(&after_init));
    // A command of the heartbeat's own term is not stale.
    let same_term = story(vec![
        event(
            "dn1",
            "endpoint scm2",
            "heartbeat term recorded for init",
            &[("term", "2")],
        ),
        event(
            "dn1",
            "endpoint scm2",
            "command queued",
            &[("command", "Close"), ("term", "2")],
        ),
    ]);
    assert!(!TERM_BEFORE_INIT.reached_by(&same_term));
}

#[test]
fn deletion_between_a_pull_and_its_commit_is_the_window() {
    let block = [("container", "c1"), ("block", "1")];
    let pulled = event("dn1", "reconciler", "chunk pulled", &block);
    let deleted = event("dn1", "deleting service", "block deleted", &block);
    let decided = event("dn1", "reconciler", "commit decided", &block);
    let between = story(vec![pulled.clone(), deleted.clone(), decided.clone()]);
    assert!(DELETE_BETWEEN_PULL_AND_COMMIT.reached_by(&between));
    let after = story(vec![pulled.clone(), decided, deleted]);
    assert!(!DELETE_BETWEEN_PULL_AND_COMMIT.reached_by(&after));
    let other_replica = story(vec![
        pulled,
        event("dn2", "deleting service", "block deleted", &block),
    ]);
    assert!(!DELETE_BETWEEN_PULL_AND_COMMIT.reached_by(&other_replica));
}

#[test]
fn rbw_report_after_the_completion_edit_is_the_window() {
    let completed = event(
        "nn1",
        "tailer",
        "block completed",
        &[("block", "blk_100"), ("gs", "5")],
    );
    let rbw = event(
        "nn1",
        "datanode dn1",
        "report queued",
        &[("block", "blk_100"), ("state", "RBW")],
    );
    assert!(RBW_AFTER_COMPLETION.reached_by(&story(vec![completed.clone(), rbw.clone()])));
    // Queued before, still pending when the block completes.
    assert!(RBW_AFTER_COMPLETION.reached_by(&story(vec![rbw.clone(), completed.clone()])));
    // A report on another NameNode is not the window.
    let other = event(
        "nn0",
        "datanode dn1",
        "report queued",
        &[("block", "blk_100"), ("state", "RBW")],
    );
    assert!(!RBW_AFTER_COMPLETION.reached_by(&story(vec![other, completed])));
}

#[test]
fn every_fixed_case_of_a_seed_race_declares_its_windows() {
    for case in catalogue::all() {
        assert_eq!(case.windows.len(), windows_of(case.scenario).len());
        for window in case.windows {
            assert!(!window.reads.is_empty(), "{window:?} reads no event");
        }
    }
    let fixed_with_windows = catalogue::all()
        .into_iter()
        .filter(|c| c.expectation == Expectation::Holds && !c.windows.is_empty())
        .count();
    assert!(fixed_with_windows > 0);
}

#[test]
fn the_hook_counts_sequences_and_windows_over_a_real_state_context() {
    let windows: &'static [_] = &[TERM_BEFORE_INIT];
    let coverage = Coverage::new(windows);
    let context = || {
        StateContext::new(
            StateContextBehavior::SeedPatch,
            StateContextConfig::default(),
            &[(ScmId(1), false)],
            SystemClock::shared(),
        )
        .expect("a context")
    };
    coverage.install(None, || {
        for term in [4, 4, 5] {
            coverage.execution(|| {
                let context = context();
                context
                    .update_term_from_heartbeat(term)
                    .expect("a heartbeat term");
            });
        }
    });
    let summary = coverage.summary();
    assert_eq!(summary.executions, 3);
    // The same two events each time: one sequence, whatever the term.
    assert_eq!(summary.sequences, 1);
    assert_eq!(summary.racing_pairs, 0, "one thread races nothing");
    assert_eq!(summary.windows.len(), 1);
    assert_eq!(summary.windows[0].reached, 0, "no command was queued");
    // Events outside an execution are not counted.
    coverage.install(None, || {
        context().update_term_from_heartbeat(6).expect("a term");
    });
    assert_eq!(coverage.summary().executions, 3);
}

#[test]
fn a_deposed_leaders_command_after_a_restart_is_the_window() {
    use hadoop_ref::check::catalogue::windows::DEPOSED_COMMAND_AFTER_RESTART;
    let reached = story(vec![
        event("scm1", "main-thread", "became leader", &[("term", "1")]),
        event("scm2", "main-thread", "became leader", &[("term", "2")]),
        event("scm1", "main-thread", "stepped down", &[("term", "1")]),
        event(
            "dn1",
            "main-thread",
            "restarted: term and queue lost",
            &[("incarnation", "1")],
        ),
        event(
            "dn1",
            "endpoint scm1",
            "command queued",
            &[("command", "Delete"), ("term", "1")],
        ),
    ]);
    assert!(DEPOSED_COMMAND_AFTER_RESTART.reached_by(&reached));
    // The term initialised first: the command meets a set term.
    let mut initialised = reached.clone();
    initialised.events.insert(
        4,
        event(
            "dn1",
            "command processor",
            "term initialised",
            &[("term", "2")],
        ),
    );
    assert!(!DEPOSED_COMMAND_AFTER_RESTART.reached_by(&initialised));
}

#[test]
fn a_finalized_report_before_the_completion_edit_is_the_window() {
    use hadoop_ref::check::catalogue::windows::FINALIZED_BEFORE_COMPLETION;
    let report = event(
        "nn1",
        "main-thread",
        "report processed",
        &[
            ("block", "blk_14"),
            ("state", "FINALIZED"),
            ("report", "incremental"),
        ],
    );
    let close = |block: &str| {
        event(
            "nn1",
            "main-thread",
            "edit applied",
            &[("op", "OP_CLOSE"), ("block", block)],
        )
    };
    let reached = story(vec![report.clone(), close("blk_10"), close("blk_14")]);
    assert!(FINALIZED_BEFORE_COMPLETION.reached_by(&reached));
    assert!(!FINALIZED_BEFORE_COMPLETION.reached_by(&story(vec![close("blk_14"), report])));
}

#[test]
fn a_newer_report_behind_a_queued_one_is_the_window() {
    use hadoop_ref::check::catalogue::windows::SUPERSEDED_QUEUED_REPORT;
    let report = |name: &str, gs: &str, kind: &str| {
        event(
            "nn1",
            "datanode dn1",
            name,
            &[
                ("datanode", "dn1"),
                ("block", "blk_100"),
                ("gs", gs),
                ("state", "FINALIZED"),
                ("report", kind),
            ],
        )
    };
    let queued = report("report queued", "1", "incremental");
    let newer = report("report processed", "2", "incremental");
    assert!(SUPERSEDED_QUEUED_REPORT.reached_by(&story(vec![queued.clone(), newer.clone()])));
    // The queued entry judged from the queue is the same report, not a newer one.
    let drained = report("report processed", "1", "queued");
    assert!(!SUPERSEDED_QUEUED_REPORT.reached_by(&story(vec![queued.clone(), drained])));
    let drain = event(
        "nn1",
        "tailer",
        "queued reports drained",
        &[("block", "blk_100")],
    );
    assert!(!SUPERSEDED_QUEUED_REPORT.reached_by(&story(vec![queued, drain, newer])));
}

#[test]
fn an_rbw_replica_marked_corrupt_after_completion_is_the_window() {
    let completed = event("nn1", "tailer", "block completed", &[("block", "blk_100")]);
    let corrupt = event(
        "nn1",
        "tailer",
        "replica marked corrupt",
        &[("block", "blk_100"), ("state", "RBW")],
    );
    assert!(RBW_AFTER_COMPLETION.reached_by(&story(vec![completed, corrupt])));
}

#[test]
fn executions_counted_before_one_that_panicked_are_read_after_its_thread_ends() {
    let windows: &'static [_] = &[TERM_BEFORE_INIT];
    let coverage = Coverage::new(windows);
    let counting = coverage.clone();
    let outcome = hadoop_ref::unmodelled::on_new_os_thread(move || {
        counting.install(None, || {
            counting.execution(|| {
                StateContext::new(
                    StateContextBehavior::SeedPatch,
                    StateContextConfig::default(),
                    &[(ScmId(1), false)],
                    SystemClock::shared(),
                )
                .expect("a context")
                .update_term_from_heartbeat(4)
                .expect("a heartbeat term");
            });
            // The next execution starts and never ends: its tally stays on this thread.
            counting.start();
            assert_eq!(counting.summary().executions, 1, "read where it runs");
            std::panic::resume_unwind(Box::new(hadoop_ref::unmodelled::ExpectedPanic));
        })
    });
    assert!(outcome.is_err(), "the body panicked");
    let summary = coverage.summary();
    assert_eq!(summary.executions, 1, "{summary:?}");
    assert_eq!(summary.sequences, 1, "{summary:?}");
}
