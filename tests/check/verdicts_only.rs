//! The set that only counts violations ([`MonitorSet::verdicts_only`]) hands each monitor
//! only the events its verdict reads ([`Monitor::judges`]): over any run, it must judge
//! as the whole set does, but for a violation's evidence. Property-tested over HDDS-17268's
//! vocabulary, where the term trackers take many events for their evidence alone (the
//! heartbeat's, `heartbeat term received`) and a few that move a datanode's terms.
//!
//! [`Monitor::judges`]: hadoop_ref::check::monitor::Monitor::judges

use hadoop_ref::check::monitor::{Judgement, MonitorSet, Verdict};
use hadoop_ref::story::Event;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use crate::test_util::monitor::ev;

const STATE_CONTEXT: &str = "datanode::state_context";

/// One event of a datanode's or an SCM's part in HDDS-17268, with terms 1 to 4.
fn term_event() -> impl Strategy<Value = Event> {
    let datanode = prop::sample::select(vec!["dn1", "dn2"]);
    let term = (1..=4_u8).prop_map(|t| t.to_string());
    let context = prop::sample::select(vec![
        "restarted: term and queue lost",
        "term set",
        "term set without the lock",
        "heartbeat term recorded for init",
        "heartbeat term ignored before init",
        "heartbeat term ignored",
        "heartbeat term received",
        "term initialised",
        "command queued",
        "command dispatched",
    ]);
    let outcome = prop::sample::select(vec!["Executed", "Failed", "Dropped"]);
    let leadership = prop::sample::select(vec!["became leader", "stepped down", "started"]);
    let scm = prop::sample::select(vec!["scm1", "scm2"]);
    prop_oneof![
        4 => (datanode.clone(), context, term.clone()).prop_map(|(node, name, term)| {
            ev(node, STATE_CONTEXT, name, &[("term", &term), ("command", "Close")])
        }),
        1 => (datanode.clone(), term.clone()).prop_map(|(node, term)| {
            ev(node, "datanode::heartbeat", "heartbeat response", &[("term", &term)])
        }),
        1 => (datanode, term.clone(), outcome).prop_map(|(node, term, outcome)| {
            let fields = [("command", "Close"), ("term", term.as_str()), ("outcome", outcome)];
            ev(node, "datanode::dispatcher", "command run", &fields)
        }),
        1 => (scm, leadership, term).prop_map(|(node, name, term)| {
            ev(node, "scm::container_manager::leadership", name, &[("term", &term)])
        }),
    ]
}

/// Each verdict over `events` (numbered from 1) by `set`, a violation's evidence left out.
fn verdicts(mut set: MonitorSet, events: &[Event]) -> Vec<(&'static str, Verdict)> {
    for (at, event) in events.iter().enumerate() {
        set.observe(&Event {
            step: at + 1,
            ..event.clone()
        });
    }
    set.finish().iter().map(without_evidence).collect()
}

fn without_evidence(judgement: &Judgement) -> (&'static str, Verdict) {
    let mut verdict = judgement.verdict.clone();
    if let Verdict::Violated(finding) = &mut verdict {
        finding.evidence.clear();
    }
    (judgement.property, verdict)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/verdicts_only.txt",
        ))),
        ..ProptestConfig::default()
    })]

    /// A monitor judges from the events it says it judges exactly as from every event it
    /// wants.
    #[test]
    fn counting_violations_judges_term_events_as_the_whole_set_does(
        events in prop::collection::vec(term_event(), 1..40),
    ) {
        prop_assert_eq!(
            verdicts(MonitorSet::verdicts_only(), &events),
            verdicts(MonitorSet::all(), &events)
        );
    }
}
