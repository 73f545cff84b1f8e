//! The seeds' invariants as online monitors over protocol events: each decides one named
//! property of a scenario (the same seed key and property name its invariant function
//! reports) from the events of a run alone, so it can judge a run of this crate inline
//! (a [`MonitorSet`] is an [`EventSink`] of the story's recorder) or any implementation's
//! recorded event log offline ([`offline::check_log`], `cargo soak check-log`).
//!
//! A monitor sees events one at a time, in the log's order, and keeps only what its
//! property needs (per datanode, replica block or NameNode block); at the end of the log
//! ([`Monitor::finish`]) it gives a [`Verdict`]: **ok** once it judged at least one case
//! and found none broken, **violated** with the step the violation became true and the
//! steps of the events that led to it, or **undecided** when the log lacks the events
//! the property is judged by. Never ok for want of evidence.
//!
//! The monitors, by seed (each module says what exactly it reads):
//!
//! | seed | property | module |
//! |---|---|---|
//! | HDDS-17268 | no command below a term already taken | [`term_fencing`] |
//! | HDDS-17268 | term covers every term heard | [`term_fencing`] |
//! | HDDS-17268 | no command of a leader deposed before the restart | [`term_fencing`] |
//! | HDDS-16811 | a block whose deletion was executed is not live | [`container`] |
//! | HDDS-16811 | block metadata only with its file | [`container`] |
//! | HDDS-16891 | no datanode granted more containers than it has slots | [`allocation`] |
//! | HDFS-2742 | standby is passive | [`standby`] |
//! | HDFS-2742 | no false corruption | [`standby`] |

pub mod allocation;
pub mod container;
pub mod offline;
pub mod standby;
pub mod term_fencing;
mod values;

use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use crate::scenarios::Violation;
use crate::story::{Event, EventSink, Story};

pub use values::{command_container, items, number, parse_id, term_value};

/// What a monitor concluded about its property over a whole run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The property held over every case the monitor could judge.
    Ok {
        /// How many cases it judged (dispatches, deletions, corrupt marks, …).
        judged: usize,
    },
    /// The property was broken.
    Violated(Finding),
    /// The log lacks the events the property is judged by.
    Undecided {
        /// What was missing.
        missing: &'static str,
    },
}

impl Verdict {
    /// The verdict's word: `ok`, `VIOLATED` or `undecided`.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Ok { .. } => "ok",
            Verdict::Violated(_) => "VIOLATED",
            Verdict::Undecided { .. } => "undecided",
        }
    }

    /// `Ok { judged }` when `judged > 0`, else undecided for want of `missing`.
    pub fn held(judged: usize, missing: &'static str) -> Self {
        if judged > 0 {
            Verdict::Ok { judged }
        } else {
            Verdict::Undecided { missing }
        }
    }
}

/// A violation a monitor found: which property, where, and the events that led to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The violation, named as the scenario's invariant names it.
    pub violation: Violation,
    /// The step (the log's `seq`) at which the property became false.
    pub step: usize,
    /// The steps of the events that led to it, ascending, `step` included.
    pub evidence: Vec<usize>,
}

/// One named property judged over events.
pub trait Monitor: Send {
    /// The seed key the property comes from.
    fn seed(&self) -> &'static str;
    /// The property's name, as the scenario's invariant reports it.
    fn property(&self) -> &'static str;
    /// Takes one event, in the log's order.
    fn observe(&mut self, event: &Event);
    /// The first violation found so far, for a property judged as events arrive; `None`
    /// for one judged at the end of the run only.
    fn violation_so_far(&self) -> Option<&Finding>;
    /// The verdict at the end of the run (the system quiescent, as a scenario checks its
    /// invariants).
    fn finish(&mut self) -> Verdict;
}

/// One monitor's verdict, with its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// The seed key.
    pub seed: &'static str,
    /// The property.
    pub property: &'static str,
    /// The verdict.
    pub verdict: Verdict,
}

impl fmt::Display for Judgement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<9}  {}: {}",
            self.verdict.word(),
            self.seed,
            self.property
        )?;
        match &self.verdict {
            Verdict::Ok { judged } => write!(f, " ({judged} judged)"),
            Verdict::Violated(finding) => write!(f, " (step {})", finding.step),
            Verdict::Undecided { missing } => write!(f, " (no {missing})"),
        }
    }
}

/// Every monitor, fed the same events: an [`EventSink`] to install on a recorder.
pub struct MonitorSet {
    monitors: Vec<Box<dyn Monitor>>,
    events: usize,
}

impl fmt::Debug for MonitorSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MonitorSet")
            .field("monitors", &self.monitors.len())
            .field("events", &self.events)
            .finish()
    }
}

impl Default for MonitorSet {
    fn default() -> Self {
        Self::all()
    }
}

impl MonitorSet {
    /// Every monitor of every seed, fresh.
    pub fn all() -> Self {
        let mut monitors: Vec<Box<dyn Monitor>> = Vec::new();
        monitors.extend(term_fencing::monitors());
        monitors.extend(container::monitors());
        monitors.extend(allocation::monitors());
        monitors.extend(standby::monitors());
        Self {
            monitors,
            events: 0,
        }
    }

    /// Takes one event.
    pub fn observe(&mut self, event: &Event) {
        self.events += 1;
        for monitor in &mut self.monitors {
            monitor.observe(event);
        }
    }

    /// Events taken so far.
    pub fn events(&self) -> usize {
        self.events
    }

    /// The first violation any monitor found so far (online).
    pub fn violation_so_far(&self) -> Option<&Finding> {
        self.monitors
            .iter()
            .filter_map(|m| m.violation_so_far())
            .min_by_key(|f| f.step)
    }

    /// Every monitor's verdict at the end of the run, in the set's order.
    pub fn finish(&mut self) -> Vec<Judgement> {
        self.monitors
            .iter_mut()
            .map(|monitor| Judgement {
                seed: monitor.seed(),
                property: monitor.property(),
                verdict: monitor.finish(),
            })
            .collect()
    }
}

impl EventSink for MonitorSet {
    fn event(&mut self, event: &Event) {
        self.observe(event);
    }
}

/// Every monitor's verdict over `story` (a recorded execution, whole: a story that left
/// events out is judged over what it kept).
pub fn check_story(story: &Story) -> Vec<Judgement> {
    let mut set = MonitorSet::all();
    for event in &story.events {
        set.observe(event);
    }
    set.finish()
}

/// The first violation among `judgements`, by step.
pub fn first_violation(judgements: &[Judgement]) -> Option<&Finding> {
    judgements
        .iter()
        .filter_map(|j| match &j.verdict {
            Verdict::Violated(finding) => Some(finding),
            _ => None,
        })
        .min_by_key(|f| f.step)
}

/// The steps of the latest events about each subject (a datanode, a block), bounded: the
/// evidence a monitor shows with a violation.
#[derive(Debug, Clone)]
pub struct Trail<K> {
    steps: BTreeMap<K, VecDeque<usize>>,
}

impl<K> Default for Trail<K> {
    fn default() -> Self {
        Self {
            steps: BTreeMap::new(),
        }
    }
}

/// Steps kept per subject.
const TRAIL_LEN: usize = 48;

impl<K: Ord + Clone> Trail<K> {
    /// Notes that the event at `step` concerns `subject`.
    pub fn note(&mut self, subject: &K, step: usize) {
        let steps = self.steps.entry(subject.clone()).or_default();
        if steps.back() != Some(&step) {
            if steps.len() == TRAIL_LEN {
                steps.pop_front();
            }
            steps.push_back(step);
        }
    }

    /// The steps noted for `subject` up to `step`, with `step` itself and `extra`, ascending.
    pub fn evidence(&self, subject: &K, step: usize, extra: &[usize]) -> Vec<usize> {
        let mut steps: Vec<usize> = self
            .steps
            .get(subject)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&s| s <= step)
            .chain(std::iter::once(step))
            .chain(extra.iter().copied())
            .collect();
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// Forgets `subject`.
    pub fn forget(&mut self, subject: &K) {
        self.steps.remove(subject);
    }
}
