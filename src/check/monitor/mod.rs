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
//! A set hands each event only to the monitors that read its kind ([`Monitor::wants`],
//! asked once per component and event name), and starts another run by resetting only
//! the monitors that took an event ([`MonitorSet::reset`]): run inline over every
//! execution of a checker, the monitors cost little beside the execution itself.
//!
//! Each monitor also says which events its verdict rests on ([`Reads`]): over a log of an
//! upstream process, which shows only some events ([`coverage`]), an ok or a violation
//! the log cannot support becomes undecided.
//!
//! The monitors, by seed (each module says what exactly it reads):
//!
//! | seed | property | module |
//! |---|---|---|
//! | HDDS-17268 | no command below a term already taken | [`term_fencing`] |
//! | HDDS-17268 | term covers every term heard | [`term_fencing`] |
//! | HDDS-17268 | term never decreases | [`term_fencing`] |
//! | HDDS-17268 | no command of a leader deposed before the restart | [`term_fencing`] |
//! | HDDS-16811 | a block whose deletion was executed is not live | [`container`] |
//! | HDDS-16811+HDDS-17268+HDDS-16891 | every deleted block deleted everywhere | [`container`] |
//! | HDDS-16811 | block metadata only with its file | [`container`] |
//! | HDDS-16811 | no block of a live key lost | [`replica_data`] |
//! | HDDS-16811 | no replica marked UNHEALTHY by the race (HDDS-7300 too) | [`replica_health`] |
//! | HDDS-16811 | data checksum in memory, persisted and in the tree file agree (HDDS-16808) | [`replica_data`] |
//! | HDDS-16891 | no datanode granted more containers than it has slots | [`allocation`] |
//! | HDDS-16891 | no datanode granted more containers than it has room for (cluster) | [`allocation`] |
//! | HDDS-16891 | serving leader reserves every granted unwritten container | [`allocation`] |
//! | HDDS-17268 | no container left below its replication factor | [`replication`] |
//! | HDFS-2742 | standby is passive | [`standby`] |
//! | HDFS-2742 | no false corruption | [`standby`] |
//! | HDFS-2742 | safe-mode recount | [`standby`] |
//! | HDFS-2742 | location completeness | [`standby_end`] |
//! | HDFS-17905 | the standby's queue empties | [`standby_end`] |

pub mod allocation;
pub mod container;
pub mod coverage;
mod judgement;
pub mod memo;
pub mod offline;
pub mod replica_data;
pub mod replica_health;
pub mod replication;
mod route;
pub mod standby;
pub mod standby_end;
pub mod term_fencing;
mod values;

use std::fmt;

use crate::story::{Event, EventSink, Story};

pub use judgement::{Finding, Judgement, Monitor, Needed, Reads, Trail, Verdict};
pub use values::{items, parse_id};

/// Every monitor, fed the same events (each monitor only those it [wants](Monitor::wants)):
/// an [`EventSink`] to install on a recorder.
///
/// ```
/// use hadoop_ref::check::monitor::{MonitorSet, Verdict};
/// use hadoop_ref::story::Event;
///
/// let mut set = MonitorSet::all();
/// for run in 0..2 {
///     set.observe(&Event {
///         step: 1,
///         node: Some("dn1".into()),
///         component: "datanode::state_context".into(),
///         name: "term set".into(),
///         fields: vec![("term".into(), 4u64.into())],
///         ..Event::default()
///     });
///     let judgements = set.finish();
///     let covers = judgements
///         .iter()
///         .find(|j| j.property == "term covers every term heard")
///         .unwrap();
///     assert_eq!(covers.verdict, Verdict::Ok { judged: 1 }, "run {run}");
///     set.reset();
/// }
/// assert_eq!(set.events(), 0);
/// ```
pub struct MonitorSet {
    monitors: Vec<Box<dyn Monitor>>,
    /// Whether each monitor takes only the events its verdict reads
    /// ([`Monitor::judges`]), not those it wants for its evidence too.
    verdicts_only: bool,
    /// Which monitors took an event since the last reset.
    touched: Vec<bool>,
    routes: route::Routes,
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
        monitors.extend(replica_data::monitors());
        monitors.extend(replica_health::monitors());
        monitors.extend(allocation::monitors());
        monitors.extend(replication::monitors());
        monitors.extend(standby::monitors());
        monitors.extend(standby_end::monitors());
        Self {
            touched: vec![false; monitors.len()],
            monitors,
            verdicts_only: false,
            routes: route::Routes::default(),
            events: 0,
        }
    }

    /// Every monitor of every seed, fresh, taking only the events its verdict reads
    /// ([`Monitor::judges`]): the same verdicts as [`MonitorSet::all`], with a violation's
    /// evidence cut to the events its verdict read. For a run that counts violations (the
    /// soak's inline monitors), where the events a monitor wants for its evidence alone
    /// would be recorded for nothing; a violation's whole story comes from replaying its
    /// execution under [`MonitorSet::all`].
    pub fn verdicts_only() -> Self {
        Self {
            verdicts_only: true,
            ..Self::all()
        }
    }

    /// Takes one event: hands it to the monitors that read its kind.
    pub fn observe(&mut self, event: &Event) {
        let route = self.routes.index(
            &event.component,
            &event.name,
            &self.monitors,
            self.verdicts_only,
        );
        self.observe_routed(route, event);
    }

    /// Takes one event whose kind's route is `route` ([`EventSink::route`], asked once per
    /// call site by a recorder): hands it to that route's monitors, with no lookup.
    fn observe_routed(&mut self, route: usize, event: &Event) {
        self.events += 1;
        for &at in self.routes.at(route) {
            self.monitors[at].observe(event);
            self.touched[at] = true;
        }
    }

    /// Every monitor as new, for another run (what a fresh [`MonitorSet::all`] is,
    /// without making one: only the monitors that took an event are reset).
    pub fn reset(&mut self) {
        for (monitor, touched) in self.monitors.iter_mut().zip(&mut self.touched) {
            if std::mem::take(touched) {
                monitor.reset();
            }
        }
        self.events = 0;
    }

    /// Every monitor as new, whether or not it took an event (after [`MonitorSet::finish`],
    /// which may leave a verdict in a monitor that took none): a set reused for run after
    /// run of a checker of logs.
    pub fn reset_every(&mut self) {
        self.touched.fill(true);
        self.reset();
    }

    /// The verdicts [`MonitorSet::finish`] would give that are violations, in the set's
    /// order, asked only of the monitors that took an event since the last reset (one
    /// that took none has found nothing): what a run that counts violations needs.
    pub fn violations(&mut self) -> Vec<Judgement> {
        self.monitors
            .iter_mut()
            .zip(&self.touched)
            .filter(|(_, touched)| **touched)
            .filter_map(|(monitor, _)| match monitor.finish() {
                verdict @ Verdict::Violated(_) => Some(Judgement {
                    seed: monitor.seed(),
                    property: monitor.property(),
                    verdict,
                }),
                _ => None,
            })
            .collect()
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

    /// The events each monitor's verdict rests on, in the set's order.
    pub fn reads(&self) -> Vec<Reads> {
        self.monitors.iter().map(|m| m.reads()).collect()
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

    fn wants(&mut self, component: &str, name: &str) -> bool {
        self.route(component, name).is_some()
    }

    fn route(&mut self, component: &str, name: &str) -> Option<u32> {
        let route = self
            .routes
            .index(component, name, &self.monitors, self.verdicts_only);
        let taken = !self.routes.at(route).is_empty();
        u32::try_from(route).ok().filter(|_| taken)
    }

    fn routed(&mut self, route: u32, event: &Event) {
        match usize::try_from(route) {
            Ok(route) => self.observe_routed(route, event),
            Err(_) => self.observe(event),
        }
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
