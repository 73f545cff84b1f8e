//! HDDS-17268's properties over the datanode's term events, per datanode (the events'
//! `node`), each datanode restart (`restarted: term and queue lost`) starting afresh.
//!
//! A datanode has **taken** term `t` once an event shows the term applied or kept under
//! the context's lock, or consumed by the legacy paths: `term set`, `term set without the
//! lock`, `heartbeat term recorded for init`, `heartbeat term ignored before init`,
//! `heartbeat term ignored` (the code before HDDS-7621 or HDDS-3988), or
//! `command queued` of term `t` (the scenarios' "heard": a heartbeat response's term or
//! a queued command's, once the heartbeat task returned). `heartbeat term received`
//! alone is not taking: it is emitted before the lock, and the fixed code may rightly
//! dispatch a lower command meanwhile.
//!
//! - **no command below a term already taken**: no `command dispatched` of a term below
//!   one the datanode had taken (judged at each dispatch).
//! - **term covers every term heard**: at the end of the run, each datanode's term (the
//!   last `term set`) is at least every term it took.
//! - **term never decreases**: between two restarts, no `term set` or `term set without
//!   the lock` writes a term below the one the datanode's term was last set to (the
//!   legacy unlocked update's lost race, seen as it happens).
//! - **no command of a leader deposed before the restart**: after a datanode restarts,
//!   no command runs (`command run`, outcome `Executed` or `Failed`) of a term below the
//!   lowest term of the SCMs that believed they led at the restart (`became leader` not
//!   followed by `stepped down` or a restart, `started`). Undecided without a restart.
//!   The seed's patch (`SeedPatch`) breaks it by design.

use std::collections::BTreeMap;

use super::judgement::{Finding, Monitor, Needed, Reads, Trail, Verdict};
use crate::scenarios::Violation;
use crate::scenarios::term_fencing::{
    NO_COMMAND_BELOW_TAKEN_TERM, NO_COMMAND_OF_DEPOSED_LEADER, SEED_KEY, TERM_COVERS_HEARD_TERMS,
    TERM_NEVER_DECREASES,
};
use crate::story::Event;

const STATE_CONTEXT: &str = "datanode::state_context";
const DISPATCHER: &str = "datanode::dispatcher";
const HEARTBEAT: &str = "datanode::heartbeat";
/// The datanode of a context that was not told its id.
const UNNAMED: &str = "(unnamed datanode)";

const RESTARTED: Needed = Needed::of(STATE_CONTEXT, "restarted: term and queue lost");
const TERM_SET: Needed = Needed::of(STATE_CONTEXT, "term set");
const TERM_SET_UNLOCKED: Needed = Needed::of(STATE_CONTEXT, "term set without the lock");
/// The events by which a datanode takes a term, those a log must show for an ok. The
/// monitors also read `heartbeat term ignored`, which only the code before HDDS-7621 (or
/// HDDS-3988) emits: no upstream version that logs terms runs that path, so a log format
/// that cannot show it leaves the verdicts decided.
const TAKES: [Needed; 5] = [
    TERM_SET,
    TERM_SET_UNLOCKED,
    Needed::of(STATE_CONTEXT, "heartbeat term recorded for init"),
    Needed::of(STATE_CONTEXT, "heartbeat term ignored before init"),
    Needed::of(STATE_CONTEXT, "command queued"),
];

/// The term-fencing monitors.
pub fn monitors() -> Vec<Box<dyn Monitor>> {
    vec![
        Box::new(NoCommandBelowTakenTerm::default()),
        Box::new(TermCoversTakenTerms::default()),
        Box::new(TermNeverDecreases::default()),
        Box::new(NoCommandOfDeposedLeader::default()),
    ]
}

/// One datanode's term and what it took, since its last restart.
#[derive(Debug, Clone, Default)]
struct Terms {
    term: Option<(i64, usize)>,
    taken: Option<(i64, usize)>,
}

/// Follows every datanode's term and taken terms through the state context's events.
#[derive(Debug, Default)]
struct TermTracker {
    datanodes: BTreeMap<String, Terms>,
    trail: Trail<String>,
}

/// What a state-context event did to its datanode's terms.
enum Step {
    /// Not a term event.
    Other,
    /// The datanode restarted.
    Restarted,
    /// The term was set (and so taken).
    Set(i64),
    /// A term was taken without setting the term.
    Took(i64),
    /// A command was handed out.
    Dispatched(i64),
}

/// The state-context events that move a datanode's terms ([`TermTracker::apply`] maps
/// each to a [`Step`] other than `Other`); the tracker's other events (the heartbeat's,
/// `heartbeat term received`, …) only add to a violation's evidence.
const TERM_EVENTS: [&str; 8] = [
    "restarted: term and queue lost",
    "term set",
    "term set without the lock",
    "heartbeat term recorded for init",
    "heartbeat term ignored before init",
    "heartbeat term ignored",
    "command queued",
    "command dispatched",
];

impl TermTracker {
    /// Whether an event of `component` is one the tracker reads.
    fn reads(component: &str) -> bool {
        component == STATE_CONTEXT || component == HEARTBEAT
    }

    /// Whether an event of `component` named `name` moves a datanode's terms: the events
    /// a verdict over the tracker reads.
    fn judges(component: &str, name: &str) -> bool {
        component == STATE_CONTEXT && TERM_EVENTS.contains(&name)
    }

    /// Forgets every datanode, keeping the trail's buffers for the next run.
    fn reset(&mut self) {
        self.datanodes.clear();
        self.trail.clear();
    }

    /// Applies `event`; returns what it did to its datanode (the event's `node`).
    fn apply(&mut self, event: &Event) -> Option<Step> {
        let node = event.node.as_deref().unwrap_or(UNNAMED);
        if event.component == HEARTBEAT {
            self.trail.note(node, event.step);
        }
        if event.component != STATE_CONTEXT {
            return None;
        }
        let term = event.signed("term");
        let step = match (event.name.as_str(), term) {
            ("restarted: term and queue lost", _) => Step::Restarted,
            ("term set" | "term set without the lock", Some(t)) => Step::Set(t),
            (
                "heartbeat term recorded for init"
                | "heartbeat term ignored before init"
                | "heartbeat term ignored"
                | "command queued",
                Some(t),
            ) => Step::Took(t),
            ("command dispatched", Some(t)) => Step::Dispatched(t),
            _ => Step::Other,
        };
        if !self.datanodes.contains_key(node) {
            self.datanodes.insert(node.to_owned(), Terms::default());
        }
        let terms = self.datanodes.get_mut(node)?;
        match step {
            Step::Restarted => {
                *terms = Terms::default();
                self.trail.forget(node);
            }
            Step::Set(t) => {
                terms.term = Some((t, event.step));
                raise(&mut terms.taken, t, event.step);
            }
            Step::Took(t) => raise(&mut terms.taken, t, event.step),
            Step::Dispatched(_) | Step::Other => {}
        }
        self.trail.note(node, event.step);
        Some(step)
    }
}

fn raise(taken: &mut Option<(i64, usize)>, term: i64, step: usize) {
    if taken.is_none_or(|(t, _)| t < term) {
        *taken = Some((term, step));
    }
}

fn violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: SEED_KEY,
        property,
        detail,
    }
}

/// No command is handed out whose term is below a term its datanode already took.
#[derive(Debug, Default)]
pub struct NoCommandBelowTakenTerm {
    tracker: TermTracker,
    judged: usize,
    found: Option<Finding>,
}

impl Monitor for NoCommandBelowTakenTerm {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        NO_COMMAND_BELOW_TAKEN_TERM
    }

    fn observe(&mut self, event: &Event) {
        let Some(Step::Dispatched(term)) = self.tracker.apply(event) else {
            return;
        };
        let node = event.node.as_deref().unwrap_or(UNNAMED);
        self.judged += 1;
        let taken = self.tracker.datanodes.get(node).and_then(|t| t.taken);
        let Some((heard, heard_at)) = taken.filter(|&(heard, _)| term < heard) else {
            return;
        };
        if self.found.is_none() {
            self.found = Some(Finding {
                violation: violation(
                    NO_COMMAND_BELOW_TAKEN_TERM,
                    format!(
                        "{node}: command {} of term {term} was dispatched after the datanode took term {heard} (step {heard_at})",
                        event.text("command").unwrap_or("?")
                    ),
                ),
                step: event.step,
                evidence: self.tracker.trail.evidence(node, event.step, &[heard_at]),
            });
        }
    }

    fn wants(&self, component: &str, _name: &str) -> bool {
        TermTracker::reads(component)
    }

    fn judges(&self, component: &str, name: &str) -> bool {
        TermTracker::judges(component, name)
    }

    fn reset(&mut self) {
        self.tracker.reset();
        self.judged = 0;
        self.found = None;
    }

    fn violation_so_far(&self) -> Option<&Finding> {
        self.found.as_ref()
    }

    fn finish(&mut self) -> Verdict {
        match &self.found {
            Some(finding) => Verdict::Violated(finding.clone()),
            None => Verdict::held(self.judged, "command dispatched by a datanode"),
        }
    }

    fn reads(&self) -> Reads {
        const HOLD: [Needed; 6] = [
            Needed::of(STATE_CONTEXT, "command dispatched"),
            TAKES[0],
            TAKES[1],
            TAKES[2],
            TAKES[3],
            TAKES[4],
        ];
        const READS: Reads = Reads {
            to_hold: &HOLD,
            to_break: &[RESTARTED],
        };
        READS
    }
}

/// At the end of the run, each datanode's term covers every term it took.
#[derive(Debug, Default)]
pub struct TermCoversTakenTerms {
    tracker: TermTracker,
}

impl Monitor for TermCoversTakenTerms {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        TERM_COVERS_HEARD_TERMS
    }

    fn observe(&mut self, event: &Event) {
        self.tracker.apply(event);
    }

    fn wants(&self, component: &str, _name: &str) -> bool {
        TermTracker::reads(component)
    }

    fn judges(&self, component: &str, name: &str) -> bool {
        TermTracker::judges(component, name)
    }

    fn reset(&mut self) {
        self.tracker.reset();
    }

    fn violation_so_far(&self) -> Option<&Finding> {
        None
    }

    fn finish(&mut self) -> Verdict {
        let mut judged = 0;
        for (node, terms) in &self.tracker.datanodes {
            let (Some((term, set_at)), Some((taken, taken_at))) = (terms.term, terms.taken) else {
                continue;
            };
            judged += 1;
            if term < taken {
                return Verdict::Violated(Finding {
                    violation: violation(
                        TERM_COVERS_HEARD_TERMS,
                        format!(
                            "{node}: term is {term} (set at step {set_at}) after the datanode took term {taken} (step {taken_at})"
                        ),
                    ),
                    step: set_at,
                    evidence: self.tracker.trail.evidence(node, set_at, &[taken_at]),
                });
            }
        }
        Verdict::held(judged, "datanode term set")
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &TAKES,
            to_break: &[TERM_SET, TERM_SET_UNLOCKED, RESTARTED],
        };
        READS
    }
}

/// Between two restarts of a datanode, its term is never set below what it was set to.
#[derive(Debug, Default)]
pub struct TermNeverDecreases {
    tracker: TermTracker,
    judged: usize,
    found: Option<Finding>,
}

impl Monitor for TermNeverDecreases {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        TERM_NEVER_DECREASES
    }

    fn observe(&mut self, event: &Event) {
        let node = event.node.as_deref().unwrap_or(UNNAMED);
        let before = self.tracker.datanodes.get(node).and_then(|t| t.term);
        let Some(Step::Set(term)) = self.tracker.apply(event) else {
            return;
        };
        let Some((was, set_at)) = before else {
            return;
        };
        self.judged += 1;
        if term >= was || self.found.is_some() {
            return;
        }
        self.found = Some(Finding {
            violation: violation(
                TERM_NEVER_DECREASES,
                format!(
                    "{node}: term went from {was} (set at step {set_at}) to {term} without a restart"
                ),
            ),
            step: event.step,
            evidence: self.tracker.trail.evidence(node, event.step, &[set_at]),
        });
    }

    fn wants(&self, component: &str, _name: &str) -> bool {
        TermTracker::reads(component)
    }

    fn judges(&self, component: &str, name: &str) -> bool {
        TermTracker::judges(component, name)
    }

    fn reset(&mut self) {
        self.tracker.reset();
        self.judged = 0;
        self.found = None;
    }

    fn violation_so_far(&self) -> Option<&Finding> {
        self.found.as_ref()
    }

    fn finish(&mut self) -> Verdict {
        match &self.found {
            Some(finding) => Verdict::Violated(finding.clone()),
            None => Verdict::held(self.judged, "datanode term set twice between restarts"),
        }
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[TERM_SET, TERM_SET_UNLOCKED, RESTARTED],
            to_break: &[TERM_SET, TERM_SET_UNLOCKED, RESTARTED],
        };
        READS
    }
}

/// After a datanode's restart, no command of a term below every believing leader's term
/// at the restart runs.
#[derive(Debug, Default)]
pub struct NoCommandOfDeposedLeader {
    /// Each SCM's term while it believes it leads.
    leaders: BTreeMap<String, (i64, usize)>,
    /// Each restarted datanode's floor: the lowest believing leader's term at its restart.
    floors: BTreeMap<String, Floor>,
    trail: Trail<String>,
    judged: usize,
    found: Option<Finding>,
}

#[derive(Debug, Clone)]
struct Floor {
    term: i64,
    restart_at: usize,
    leader_steps: Vec<usize>,
}

impl NoCommandOfDeposedLeader {
    fn leadership(&mut self, event: &Event) {
        let Some(scm) = event.node.as_deref() else {
            return;
        };
        match event.name.as_str() {
            "became leader" => {
                if let Some(term) = event.signed("term") {
                    self.leaders.insert(scm.to_owned(), (term, event.step));
                }
            }
            "stepped down" | "started" => {
                self.leaders.remove(scm);
            }
            _ => {}
        }
    }

    fn restarted(&mut self, node: String, step: usize) {
        self.trail.forget(&node);
        self.trail.note(&node, step);
        let floor = self.leaders.values().map(|&(term, _)| term).min();
        match floor {
            Some(term) => {
                let leader_steps = self.leaders.values().map(|&(_, s)| s).collect();
                self.floors.insert(
                    node,
                    Floor {
                        term,
                        restart_at: step,
                        leader_steps,
                    },
                );
            }
            None => {
                self.floors.remove(&node);
            }
        }
    }

    fn command_run(&mut self, event: &Event, node: &str) {
        self.trail.note(node, event.step);
        let outcome = event.text("outcome").unwrap_or("");
        let ran = outcome.starts_with("Executed") || outcome.starts_with("Failed");
        let (Some(floor), Some(term)) = (self.floors.get(node), event.number("term")) else {
            return;
        };
        let term = i64::try_from(term).unwrap_or(i64::MAX);
        if !ran {
            return;
        }
        self.judged += 1;
        if term >= floor.term || self.found.is_some() {
            return;
        }
        let mut extra = floor.leader_steps.clone();
        extra.push(floor.restart_at);
        self.found = Some(Finding {
            violation: violation(
                NO_COMMAND_OF_DEPOSED_LEADER,
                format!(
                    "{node}: command {} of term {term} ran although every leader had term >= {} at the restart (step {})",
                    event.text("command").unwrap_or("?"),
                    floor.term,
                    floor.restart_at
                ),
            ),
            step: event.step,
            evidence: self.trail.evidence(node, event.step, &extra),
        });
    }
}

impl Monitor for NoCommandOfDeposedLeader {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        NO_COMMAND_OF_DEPOSED_LEADER
    }

    fn observe(&mut self, event: &Event) {
        let node = event.node.as_deref().unwrap_or(UNNAMED);
        match (event.component.as_str(), event.name.as_str()) {
            (STATE_CONTEXT, "restarted: term and queue lost") => {
                self.restarted(node.to_owned(), event.step);
            }
            (STATE_CONTEXT, _) => self.trail.note(node, event.step),
            (DISPATCHER, "command run") => self.command_run(event, node),
            (component, _) if component.starts_with("scm") || component == "sim::scm_endpoint" => {
                self.leadership(event);
            }
            _ => {}
        }
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        let scm = component.starts_with("scm") || component == "sim::scm_endpoint";
        component == STATE_CONTEXT
            || (component == DISPATCHER && name == "command run")
            || (scm && matches!(name, "became leader" | "stepped down" | "started"))
    }

    fn judges(&self, component: &str, name: &str) -> bool {
        let restart = component == STATE_CONTEXT && name == "restarted: term and queue lost";
        restart || (component != STATE_CONTEXT && self.wants(component, name))
    }

    fn reset(&mut self) {
        *self = Self {
            trail: self.trail.recycled(),
            ..Self::default()
        };
    }

    fn violation_so_far(&self) -> Option<&Finding> {
        self.found.as_ref()
    }

    fn finish(&mut self) -> Verdict {
        match &self.found {
            Some(finding) => Verdict::Violated(finding.clone()),
            None => Verdict::held(
                self.judged,
                "command run after a datanode restart while an SCM believed it led",
            ),
        }
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[
                Needed::of(DISPATCHER, "command run"),
                Needed::of("scm", "stepped down"),
                Needed::of("scm", "started"),
                RESTARTED,
            ],
            to_break: &[Needed::of("scm", "became leader"), RESTARTED],
        };
        READS
    }
}
