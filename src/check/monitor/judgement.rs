//! What a monitor is and what it concludes: the [`Monitor`] trait, its [`Verdict`] (with
//! the [`Finding`] of a violation), the events it [reads](Reads), and the [`Trail`] of
//! steps a monitor keeps as the evidence it shows with a violation.

use std::borrow::{Borrow, Cow};
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use crate::scenarios::Violation;
use crate::story::Event;

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
        missing: Cow<'static, str>,
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
            Verdict::Undecided {
                missing: Cow::Borrowed(missing),
            }
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

/// An event a monitor reads: its component (a prefix: `scm` stands for every SCM
/// component) and its name, and, for `command run`, the command kind when only that kind
/// matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needed {
    /// The component, or the start of it.
    pub component: &'static str,
    /// The event.
    pub event: &'static str,
    /// Only the occurrences whose `command` names this kind, when set.
    pub only: Option<&'static str>,
}

impl Needed {
    /// Every occurrence of `event` of a component starting with `component`.
    pub const fn of(component: &'static str, event: &'static str) -> Self {
        Self {
            component,
            event,
            only: None,
        }
    }

    /// The occurrences of `event` whose command is of kind `only`.
    pub const fn only(component: &'static str, event: &'static str, only: &'static str) -> Self {
        Self {
            component,
            event,
            only: Some(only),
        }
    }
}

/// The events a monitor's verdict rests on, by what a missing one would do: a log that
/// does not show every occurrence of an event `to_hold` names cannot be judged ok (a case
/// that breaks the property could be among those unseen); one that does not show every
/// occurrence of an event `to_break` names cannot be judged violated (what would clear
/// the case could be unseen). A log of this crate shows every event; a log of an upstream
/// process does not (`story::upstream::Coverage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reads {
    /// Events without which an ok could be wrong.
    pub to_hold: &'static [Needed],
    /// Events without which a violation could be wrong.
    pub to_break: &'static [Needed],
}

/// One named property judged over events.
pub trait Monitor: Send {
    /// The seed key the property comes from.
    fn seed(&self) -> &'static str;
    /// The property's name, as the scenario's invariant reports it.
    fn property(&self) -> &'static str;
    /// Takes one event, in the log's order. What the monitor concludes rests on the
    /// events' steps, nodes, components, names and fields, never on their threads: a
    /// [`JudgedOnce`](super::memo::JudgedOnce) gives two executions whose events differ only
    /// in their threads the same verdicts.
    fn observe(&mut self, event: &Event);
    /// Whether [`Monitor::observe`] does anything with the events of `component` named
    /// `name`: a [`MonitorSet`](super::MonitorSet) hands a monitor only those. At least
    /// every event the monitor's state or its evidence follows; the same answer for the
    /// same arguments, always.
    fn wants(&self, component: &str, name: &str) -> bool;
    /// Whether the monitor's verdict reads the events of `component` named `name`: those
    /// [`Monitor::wants`] only for the evidence it shows with a violation (a NameNode's
    /// other events beside a block's reports, say) are not. A set that only counts
    /// violations ([`MonitorSet::verdicts_only`](super::MonitorSet::verdicts_only)) hands
    /// a monitor only these, and gets the same verdicts with less evidence. Every event it
    /// judges, it wants.
    fn judges(&self, component: &str, name: &str) -> bool {
        self.wants(component, name)
    }
    /// Forgets every event observed: the monitor as new, for another run (it may keep
    /// the room it made, so long as it judges as a new one).
    fn reset(&mut self);
    /// The first violation found so far, for a property judged as events arrive; `None`
    /// for one judged at the end of the run only.
    fn violation_so_far(&self) -> Option<&Finding>;
    /// The verdict at the end of the run (the system quiescent, as a scenario checks its
    /// invariants).
    fn finish(&mut self) -> Verdict;
    /// The events the verdict rests on.
    fn reads(&self) -> Reads;
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

/// Steps a subject's trail has room for from the start (most runs note a subject a few
/// times: one allocation, not one per doubling).
const TRAIL_START: usize = 8;

impl<K: Ord + Clone> Trail<K> {
    /// Notes that the event at `step` concerns `subject` (a key or what it borrows as:
    /// `&str` for a `String` key, so a subject already noted costs no allocation).
    pub fn note<Q>(&mut self, subject: &Q, step: usize)
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        match self.steps.get_mut(subject) {
            Some(steps) => {
                if steps.back() != Some(&step) {
                    if steps.len() == TRAIL_LEN {
                        steps.pop_front();
                    }
                    steps.push_back(step);
                }
            }
            None => {
                let mut steps = VecDeque::with_capacity(TRAIL_START);
                steps.push_back(step);
                self.steps.insert(subject.to_owned(), steps);
            }
        }
    }

    /// The steps noted for `subject` up to `step`, with `step` itself and `extra`, ascending.
    pub fn evidence<Q>(&self, subject: &Q, step: usize, extra: &[usize]) -> Vec<usize>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
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

    /// Forgets every step, keeping each subject's room for the next run's (a subject
    /// with no step is as one never noted).
    ///
    /// ```
    /// use hadoop_ref::check::monitor::Trail;
    ///
    /// let mut trail: Trail<String> = Trail::default();
    /// trail.note("dn1", 3);
    /// assert_eq!(trail.evidence("dn1", 5, &[]), [3, 5]);
    /// trail.clear();
    /// assert_eq!(trail.evidence("dn1", 5, &[]), [5]);
    /// ```
    pub fn clear(&mut self) {
        for steps in self.steps.values_mut() {
            steps.clear();
        }
    }

    /// Takes this trail, [cleared](Self::clear), leaving an empty one: a monitor's reset
    /// keeps the steps' buffers for the next run.
    pub fn recycled(&mut self) -> Self {
        let mut trail = std::mem::take(self);
        trail.clear();
        trail
    }

    /// Forgets `subject`.
    pub fn forget<Q>(&mut self, subject: &Q)
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.steps.remove(subject);
    }
}

/// A [`Trail`] of a node's own events and of its blocks' (a NameNode's, say), keyed by
/// the node's name, and for a block's events a NUL and the block's eight bytes as
/// characters, written in a buffer the trail keeps: noting a subject already noted
/// allocates nothing.
#[derive(Debug, Clone, Default)]
pub(super) struct NodeTrail {
    trail: Trail<String>,
    key: String,
}

impl NodeTrail {
    /// Notes that the event at `step` concerns `block` of `node` (`None`: the node).
    pub(super) fn note(&mut self, node: &str, block: Option<u64>, step: usize) {
        write_key(&mut self.key, node, block);
        self.trail.note(self.key.as_str(), step);
    }

    /// [`Trail::clear`].
    pub(super) fn clear(&mut self) {
        self.trail.clear();
    }

    /// [`Trail::recycled`].
    pub(super) fn recycled(&mut self) -> Self {
        let mut trail = std::mem::take(self);
        trail.clear();
        trail
    }

    /// [`Trail::evidence`] of `block` of `node`.
    pub(super) fn evidence(
        &self,
        node: &str,
        block: Option<u64>,
        step: usize,
        extra: &[usize],
    ) -> Vec<usize> {
        let mut key = String::new();
        write_key(&mut key, node, block);
        self.trail.evidence(key.as_str(), step, extra)
    }
}

/// Writes the key of `block` of `node` in `key`.
fn write_key(key: &mut String, node: &str, block: Option<u64>) {
    key.clear();
    key.push_str(node);
    if let Some(block) = block {
        key.push('\0');
        key.extend(block.to_le_bytes().map(char::from));
    }
}
