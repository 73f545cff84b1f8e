//! Judging each distinct event sequence once ([`JudgedOnce`]): a repeat gets the
//! violations its sequence got the first time, a sequence that differs in anything a
//! monitor reads is judged afresh (one that differs only in its threads is a repeat), a
//! run of distinct sequences stops remembering, and a sequence longer than the tree holds
//! is judged as it comes. Every answer is the one the bare set gives.

use hadoop_ref::check::monitor::memo::JudgedOnce;
use hadoop_ref::check::monitor::memo::{MAX_EVENTS_KEPT, PROBE_EXECUTIONS};
use hadoop_ref::check::monitor::{Judgement, MonitorSet};
use hadoop_ref::story::{Event, EventSink};

use crate::test_util::monitor::ev;

const STATE_CONTEXT: &str = "datanode::state_context";

fn event(step: usize, name: &str, fields: &[(&str, &str)]) -> Event {
    Event {
        step,
        ..ev("dn1", STATE_CONTEXT, name, fields)
    }
}

/// `dn1` takes term 4 after `padding` other term changes, then runs a command of
/// `command_term`: below 4, HDDS-17268's stale command.
fn execution(padding: usize, command_term: &str) -> Vec<Event> {
    let mut events: Vec<Event> = (0..padding)
        .map(|i| event(i + 1, "term set", &[("term", "1"), ("why", "heartbeat")]))
        .collect();
    events.push(event(
        padding + 1,
        "term set",
        &[("term", "4"), ("why", "heartbeat")],
    ));
    events.push(event(
        padding + 2,
        "command dispatched",
        &[("command", "Close"), ("term", command_term)],
    ));
    events
}

/// What a fresh set finds violated over `events`.
fn by_the_set(events: &[Event]) -> Vec<Judgement> {
    let mut set = MonitorSet::verdicts_only();
    for event in events {
        set.observe(event);
    }
    set.violations()
}

/// One execution of `events` through `monitors`.
fn judged(monitors: &mut JudgedOnce, events: &[Event]) -> Vec<Judgement> {
    monitors.reset();
    for event in events {
        monitors.event(event);
    }
    monitors.violations()
}

fn properties(judgements: &[Judgement]) -> Vec<&'static str> {
    judgements.iter().map(|j| j.property).collect()
}

#[test]
fn a_repeated_sequence_gets_the_violations_judged_the_first_time() {
    let stale = execution(0, "3");
    let expected = by_the_set(&stale);
    assert!(
        properties(&expected).contains(&"no command below a term already taken"),
        "{expected:?}"
    );
    let mut monitors = JudgedOnce::new(MonitorSet::verdicts_only());
    for _ in 0..3 {
        assert_eq!(judged(&mut monitors, &stale), expected);
    }
    assert_eq!((monitors.executions(), monitors.repeats()), (3, 2));
}

#[test]
fn a_sequence_differing_in_a_field_is_judged_afresh_and_in_its_threads_is_a_repeat() {
    let mut monitors = JudgedOnce::new(MonitorSet::verdicts_only());
    assert!(!judged(&mut monitors, &execution(0, "3")).is_empty());
    assert_eq!(judged(&mut monitors, &execution(0, "5")), []);
    assert_eq!(
        monitors.repeats(),
        0,
        "a different term is another sequence"
    );
    let mut other_threads = execution(0, "3");
    for event in &mut other_threads {
        event.thread = "t2".into();
    }
    assert_eq!(
        judged(&mut monitors, &other_threads),
        by_the_set(&other_threads)
    );
    assert_eq!(monitors.repeats(), 1, "no monitor reads the thread");
}

#[test]
fn a_run_of_distinct_sequences_stops_remembering_and_judges_alike() {
    let mut monitors = JudgedOnce::new(MonitorSet::verdicts_only());
    let executions = usize::try_from(PROBE_EXECUTIONS).unwrap() * 3;
    for padding in 0..executions {
        let term = if padding % 2 == 0 { "3" } else { "4" };
        let events = execution(padding, term);
        assert_eq!(
            judged(&mut monitors, &events),
            by_the_set(&events),
            "execution {padding}"
        );
    }
    assert_eq!(monitors.repeats(), 0);
    // Remembering stopped: a repeat is judged again, and alike.
    let events = execution(0, "3");
    assert_eq!(judged(&mut monitors, &events), by_the_set(&events));
    assert_eq!(monitors.repeats(), 0);
}

#[test]
fn a_sequence_longer_than_the_tree_holds_is_judged_as_it_comes() {
    let mut monitors = JudgedOnce::new(MonitorSet::verdicts_only());
    let short = execution(0, "3");
    assert_eq!(judged(&mut monitors, &short), by_the_set(&short));
    let long = execution(MAX_EVENTS_KEPT, "3");
    let expected = by_the_set(&long);
    assert!(!expected.is_empty());
    assert_eq!(judged(&mut monitors, &long), expected);
    // The full tree started afresh: the short sequence is judged once more, then
    // remembered again.
    assert_eq!(judged(&mut monitors, &short), by_the_set(&short));
    assert_eq!(judged(&mut monitors, &short), by_the_set(&short));
    assert_eq!(monitors.repeats(), 1);
}

/// `dn1` takes term 4, then runs a command of `command_term`, as the components emit
/// them (through `tracing`).
fn emit_execution(command_term: u64) {
    tracing::debug!(target: "hadoop_ref::datanode::state_context", node = "dn1", term = 4u64, why = "heartbeat", "term set");
    tracing::debug!(target: "hadoop_ref::datanode::state_context", node = "dn1", command = "Close", term = command_term, "command dispatched");
}

#[test]
fn behind_a_recorder_a_repeat_is_met_at_each_event_and_a_change_is_judged_afresh() {
    use hadoop_ref::story::{self, Recorder};
    use hadoop_ref::unmodelled::Shared;
    let monitors = Shared::new(JudgedOnce::new(MonitorSet::verdicts_only()));
    let recorder = Recorder::streaming(monitors.clone());
    let run = |command_term: u64| {
        monitors.with(JudgedOnce::reset);
        recorder.install(|| emit_execution(command_term));
        recorder.take();
        monitors.with(JudgedOnce::violations)
    };
    let expected =
        |command_term: u64| by_the_set(&story::record(|| emit_execution(command_term)).1.events);
    let stale = expected(3);
    assert!(!stale.is_empty(), "the stale command is caught");
    for _ in 0..3 {
        assert_eq!(run(3), stale);
    }
    assert_eq!(
        run(5),
        expected(5),
        "a newer command's term is judged afresh"
    );
    assert_eq!(run(3), stale);
    assert_eq!(
        monitors.with(|m| (m.executions(), m.repeats())),
        (5, 3),
        "the stale sequence judged once, then met"
    );
}
