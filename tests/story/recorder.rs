//! The recorder: this crate's events in order, with their thread, node and fields; a
//! bound that keeps the end of a long story; threads spawned through the facade.

use hadoop_ref::story::{self, FieldValue, MAX_EVENTS, Recorder};
use hadoop_ref::sync::thread;

/// An event as a component emits one (the recorder keeps this crate's targets only).
fn emit(term: i64) {
    tracing::debug!(target: "hadoop_ref::datanode::state_context", node = "dn1", term, "term set");
}

#[test]
fn recorder_keeps_this_crates_events_with_their_node_and_fields() {
    let ((), story) = story::record(|| {
        emit(2);
        tracing::debug!(target: "another_crate", "not ours");
    });
    assert_eq!(story.events.len(), 1);
    let event = &story.events[0];
    assert_eq!(
        (event.step, event.name.as_str(), event.component.as_str()),
        (1, "term set", "datanode::state_context")
    );
    assert_eq!(event.node.as_deref(), Some("dn1"));
    assert_eq!(event.number("term"), Some(2));
    assert_eq!(
        event.value("node"),
        None,
        "the node is not repeated as a field"
    );
}

#[test]
fn recorder_keeps_the_last_events_within_its_bound() {
    let ((), story) = story::record(|| {
        for term in 0..(MAX_EVENTS + 5) {
            emit(i64::try_from(term).unwrap_or(i64::MAX));
        }
    });
    assert_eq!((story.events.len(), story.left_out), (MAX_EVENTS, 5));
    assert_eq!(story.events[0].step, 6, "steps count the events left out");
    let last = story.events.last().map(|e| e.number("term"));
    assert_eq!(last, Some(Some((MAX_EVENTS + 4) as u64)));
    assert!(
        story
            .table()
            .to_string()
            .contains("(5 earlier events left out)")
    );
}

#[test]
fn recorder_follows_threads_spawned_through_the_facade() {
    let ((), story) = story::record(|| {
        emit(1);
        let child = thread::spawn_named("endpoint scm2", || emit(2));
        child.join().expect("the thread does not panic");
    });
    let threads: Vec<_> = story.events.iter().map(|e| e.thread.as_str()).collect();
    assert_eq!(threads[1], "endpoint scm2");
    assert_eq!(story.events.len(), 2);
}

#[test]
fn taking_a_story_starts_the_next_execution_empty() {
    let recorder = Recorder::default();
    recorder.install(|| emit(1));
    assert_eq!(recorder.take().events.len(), 1);
    recorder.install(|| emit(2));
    let second = recorder.take();
    assert_eq!((second.events.len(), second.events[0].step), (1, 1));
}

#[test]
fn step_table_ends_at_the_violation() {
    let ((), story) = story::record(|| emit(3));
    let table = story
        .ending_at("HDDS-17268: property `x` violated: y")
        .to_string();
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("step"), "{table}");
    assert!(
        lines[1].contains("dn1 · ") && lines[1].contains("term=3"),
        "{table}"
    );
    assert_eq!(lines.len(), 3, "{table}");
    assert!(lines[2].contains("VIOLATION: HDDS-17268"), "{table}");
}

/// A sink that keeps what it is handed.
struct Keep(hadoop_ref::unmodelled::Shared<Vec<story::Event>>);

impl story::EventSink for Keep {
    fn event(&mut self, event: &story::Event) {
        self.0.with(|kept| kept.push(event.clone()));
    }
}

/// The events `emit_all` emits, as a recorder that keeps them records them, and as one
/// that keeps nothing hands them to its sink.
fn kept_and_handed(emit_all: impl Fn()) -> (Vec<story::Event>, Vec<story::Event>) {
    let ((), kept) = story::record(&emit_all);
    let handed = hadoop_ref::unmodelled::Shared::new(Vec::new());
    Recorder::discarding()
        .with_sink(Keep(handed.clone()))
        .install(&emit_all);
    (kept.events, handed.with(std::mem::take))
}

#[test]
fn a_recorder_that_keeps_nothing_hands_its_sinks_the_events_a_keeping_one_records() {
    let emit_all = || {
        emit(2);
        tracing::debug!(target: "hadoop_ref::scm::container_manager", node = "scm1", a = 1, b = ?Some(3), "many fields");
        tracing::debug!(target: "hadoop_ref::namenode::namesystem", x = "y", "no node");
        emit(3);
    };
    let (kept, handed) = kept_and_handed(emit_all);
    assert_eq!(handed, kept, "the same events, steps, nodes and fields");
    assert_eq!(
        handed[2].node, None,
        "a node is not carried over to the next event"
    );
    assert_eq!(handed[3].fields.len(), 1, "nor are fields");
}

/// The events [`KeepSome`] takes.
const KEPT_NAMES: [&str; 2] = ["term set", "no node"];

/// A sink that keeps the events named in [`KEPT_NAMES`] only.
struct KeepSome(hadoop_ref::unmodelled::Shared<Vec<story::Event>>);

impl story::EventSink for KeepSome {
    fn event(&mut self, event: &story::Event) {
        self.0.with(|kept| kept.push(event.clone()));
    }

    fn wants(&mut self, _component: &str, name: &str) -> bool {
        KEPT_NAMES.contains(&name)
    }
}

/// A streaming recorder routes a call site it has seen by its address alone, and names
/// its event after the site, whatever event it built last.
#[test]
fn a_sink_gets_the_events_it_wants_each_time_their_call_sites_come_back() {
    let emit_all = || {
        for term in 0..3 {
            tracing::debug!(target: "hadoop_ref::scm::container_manager", node = "scm1", a = 1, "other");
            emit(term);
            tracing::debug!(target: "hadoop_ref::namenode::namesystem", x = "y", "no node");
        }
    };
    let ((), kept) = story::record(emit_all);
    let handed = hadoop_ref::unmodelled::Shared::new(Vec::new());
    Recorder::discarding()
        .with_sink(KeepSome(handed.clone()))
        .install(emit_all);
    let wanted: Vec<story::Event> = kept
        .events
        .into_iter()
        .filter(|e| KEPT_NAMES.contains(&e.name.as_str()))
        .collect();
    assert_eq!(wanted.len(), 6);
    assert_eq!(handed.with(std::mem::take), wanted);
}

/// A streaming recorder refills a call site's own event in place: an event whose call
/// left a field or its node empty (an `Option` that is `None` records nothing) has none
/// left from the site's previous event, and a field that moved up takes its own name.
#[test]
fn a_call_sites_events_each_have_only_the_fields_and_node_they_were_given() {
    let emit_all = || {
        for i in 0..6_u64 {
            let node = (i % 2 == 0).then_some("dn1");
            let first = (i % 3 != 1).then_some(i);
            tracing::debug!(target: "hadoop_ref::datanode::state_context", node, first, second = i, "term set");
        }
    };
    let (kept, handed) = kept_and_handed(emit_all);
    assert_eq!(handed, kept);
    assert_eq!(handed[1].node, None, "{handed:?}");
    assert_eq!(
        handed[1].fields,
        [("second".to_owned(), FieldValue::U64(1))],
        "{handed:?}"
    );
    assert_eq!(handed[2].fields.len(), 2, "{handed:?}");
}

/// A sink that routes: the route it gave a call site, once, comes back with each event.
#[derive(Default)]
struct Routing {
    asked: Vec<String>,
    routed: Vec<(u32, String)>,
}

impl story::EventSink for Routing {
    fn event(&mut self, event: &story::Event) {
        self.routed.push((u32::MAX, event.name.clone()));
    }

    fn route(&mut self, _component: &str, name: &str) -> Option<u32> {
        self.asked.push(name.to_owned());
        (name == "term set").then_some(7)
    }

    fn routed(&mut self, route: u32, event: &story::Event) {
        self.routed.push((route, event.name.clone()));
    }
}

#[test]
fn a_sink_is_asked_its_route_once_per_call_site_and_gets_it_back_with_each_event() {
    let sink = hadoop_ref::unmodelled::Shared::new(Routing::default());
    let recorder = Recorder::streaming(sink.clone());
    recorder.install(|| {
        for term in 0..3 {
            emit(term);
            tracing::debug!(target: "hadoop_ref::datanode::state_context", "other");
        }
    });
    let (asked, routed) = sink.with(|s| (s.asked.clone(), s.routed.clone()));
    assert_eq!(asked, ["term set", "other"], "one question per call site");
    assert_eq!(
        routed,
        vec![(7, "term set".to_owned()); 3],
        "its route, each time"
    );
}

/// A sink that holds the events of the first pass it saw and, on a later pass, takes an
/// event equal to the held one at its place as that one ([`EventSink::met`]).
#[derive(Default)]
struct Holding {
    held: Vec<story::Event>,
    /// The next held event's place, on a later pass.
    at: usize,
    /// Whether this is a later pass.
    again: bool,
    met: usize,
    written: Vec<story::Event>,
}

impl story::EventSink for Holding {
    fn event(&mut self, event: &story::Event) {
        if self.again {
            self.written.push(event.clone());
            self.at += 1;
        } else {
            self.held.push(event.clone());
        }
    }

    fn met(&mut self, _route: u32, same: &mut dyn FnMut(&story::Event) -> bool) -> bool {
        let met = self.again && self.held.get(self.at).is_some_and(&mut *same);
        if met {
            self.at += 1;
            self.met += 1;
        }
        met
    }
}

/// One emitter's events: a term (an integer), a reason (text), a flag, a `Debug` value
/// and an optional field, on node `node`.
fn pass(node: &str, term: i64, why: &str, forced: bool, state: Option<u8>, extra: Option<u64>) {
    tracing::debug!(
        target: "hadoop_ref::datanode::state_context",
        node,
        term,
        why,
        forced,
        state = ?state,
        extra,
        "term set"
    );
}

#[test]
fn a_sink_holding_an_equal_event_takes_it_and_nothing_is_written_out() {
    let sink = hadoop_ref::unmodelled::Shared::new(Holding::default());
    let recorder = Recorder::streaming(sink.clone());
    let first = || pass("dn1", 3, "heartbeat", true, Some(2), Some(9));
    recorder.install(first);
    recorder.take();
    sink.with(|s| s.again = true);
    recorder.install(first);
    let (met, written) = sink.with(|s| (s.met, s.written.len()));
    assert_eq!(
        (met, written),
        (1, 0),
        "the equal event is met, not written out"
    );
}

#[test]
fn an_event_differing_in_any_value_node_or_field_is_written_out_whole() {
    let differing: [(&str, fn()); 6] = [
        ("an integer", || {
            pass("dn1", 4, "heartbeat", true, Some(2), Some(9))
        }),
        ("a text", || {
            pass("dn1", 3, "command", true, Some(2), Some(9))
        }),
        ("a flag", || {
            pass("dn1", 3, "heartbeat", false, Some(2), Some(9))
        }),
        ("a Debug value", || {
            pass("dn1", 3, "heartbeat", true, Some(3), Some(9))
        }),
        ("an absent field", || {
            pass("dn1", 3, "heartbeat", true, Some(2), None)
        }),
        ("the node", || {
            pass("dn2", 3, "heartbeat", true, Some(2), Some(9))
        }),
    ];
    for (what, emit_differing) in differing {
        let sink = hadoop_ref::unmodelled::Shared::new(Holding::default());
        let recorder = Recorder::streaming(sink.clone());
        recorder.install(|| pass("dn1", 3, "heartbeat", true, Some(2), Some(9)));
        recorder.take();
        sink.with(|s| s.again = true);
        recorder.install(emit_differing);
        let (met, written) = sink.with(|s| (s.met, s.written.clone()));
        assert_eq!(met, 0, "{what} differs: not met");
        let ((), story) = story::record(emit_differing);
        let mut expected = story.events;
        for event in &mut expected {
            event.thread = written[0].thread.clone();
        }
        assert_eq!(written, expected, "{what} differs: written out as recorded");
    }
}

/// One event's values, drawn: text with quotes, escapes and non-ASCII characters (written
/// by `Display` and by `Debug`), negative and positive integers, absent fields.
#[derive(Debug, Clone)]
struct Drawn {
    node: String,
    term: i64,
    why: String,
    forced: bool,
    state: Option<String>,
    extra: Option<u64>,
}

fn drawn() -> impl proptest::strategy::Strategy<Value = Drawn> {
    use proptest::prelude::*;
    let text = "[ab\"\\\\\n é-]{0,4}";
    (
        "dn[12]",
        -2i64..3,
        text,
        any::<bool>(),
        proptest::option::of(text),
        proptest::option::of(0u64..3),
    )
        .prop_map(|(node, term, why, forced, state, extra)| Drawn {
            node,
            term,
            why,
            forced,
            state,
            extra,
        })
}

/// Emits `drawn` from one call site.
fn emit_drawn(drawn: &Drawn) {
    tracing::debug!(
        target: "hadoop_ref::datanode::state_context",
        node = %drawn.node,
        term = drawn.term,
        why = %drawn.why,
        forced = drawn.forced,
        state = ?drawn.state,
        extra = drawn.extra,
        "term set"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(proptest::test_runner::FileFailurePersistence::Direct(
            "proptest-regressions/recorder_met.txt",
        ))),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// A sink holding the event `first` recorded meets the event `second` emits exactly
    /// when a recorder writes the two out alike (all but the thread): the comparison on the
    /// call's values is the comparison of the written events.
    #[test]
    fn an_event_is_met_exactly_when_it_would_be_written_out_alike(
        first in drawn(),
        other in drawn(),
        changed in proptest::option::of(0usize..6),
    ) {
        // The second event is the first, or the first with one field drawn again.
        let mut second = first.clone();
        match changed {
            Some(0) => second.node = other.node,
            Some(1) => second.term = other.term,
            Some(2) => second.why = other.why,
            Some(3) => second.forced = other.forced,
            Some(4) => second.state = other.state,
            Some(_) => second.extra = other.extra,
            None => {}
        }
        let written = |drawn: &Drawn| {
            let ((), story) = story::record(|| emit_drawn(drawn));
            story.events
        };
        let alike = written(&first) == written(&second);
        let sink = hadoop_ref::unmodelled::Shared::new(Holding::default());
        let recorder = Recorder::streaming(sink.clone());
        recorder.install(|| emit_drawn(&first));
        recorder.take();
        sink.with(|s| s.again = true);
        recorder.install(|| emit_drawn(&second));
        let met = sink.with(|s| s.met == 1);
        proptest::prop_assert_eq!(met, alike, "{:?} then {:?}", first, second);
    }
}
