//! HDFS-2742's properties over a NameNode's report and edit events, per NameNode (the
//! events' `node`).
//!
//! - **standby is passive**: no `replica marked corrupt` while the NameNode postpones
//!   judging reports (`postponing=true`, its standby state and a failover's catch-up).
//!   Judged at each report the NameNode judges.
//! - **no false corruption**: at the end of the run, no replica stays flagged corrupt
//!   (`replica marked corrupt`, not undone by `corrupt mark removed`, `location
//!   removed`, `replica invalidated`, a DELETED report or `datanode removed`) whose
//!   datanode's latest report of the block is healthy against the block's final state: a
//!   FINALIZED replica with the genstamp of the COMPLETE block (`block completed`, not
//!   followed by `block reopened`). The
//!   latest report is the last one the NameNode received (`report queued`, `report
//!   processed` or `replica marked corrupt` from an incremental or full report, not from
//!   its queue); a full report queued whole counts from when it was queued. The events
//!   carry no lengths, so a report with the block's final genstamp is taken to have its
//!   length; a block whose file was appended to, truncated, concatenated or deleted after
//!   its completion (the edits name the file only) is not judged.
//! - **safe-mode recount**: at each `safe mode consistency check` (the NameNode, in safe
//!   mode, states its incremental `block_total` and `block_safe` beside a recount over
//!   its namespace, `recount_total` and `recount_safe`; upstream's
//!   `BlockManagerSafeMode.doConsistencyCheck` makes a weaker check, under assertions
//!   only), the two agree while no replica is flagged corrupt (`corrupt=0`; HDFS's own
//!   counters drift once one is).

use std::collections::BTreeMap;

use super::judgement::{Finding, Monitor, Needed, NodeTrail, Reads, Trail, Verdict};
use super::values::shown;
use crate::scenarios::Violation;
use crate::scenarios::standby::{
    NO_FALSE_CORRUPTION, SAFE_MODE_RECOUNT, SEED_KEY, STANDBY_IS_PASSIVE,
};
use crate::story::Event;

const MARKED: Needed = Needed::of("namenode::", "replica marked corrupt");
const PROCESSED: Needed = Needed::of("namenode::", "report processed");
const QUEUED: Needed = Needed::of("namenode::", "report queued");
const EDIT: Needed = Needed::of("namenode::", "edit applied");

/// The NameNode's events [`NoFalseCorruption`]'s verdict reads: its blocks' stored
/// states, the reports it received, and its corrupt flags set and cleared.
const FLAG_AND_REPORT_EVENTS: [&str; 10] = [
    "edit applied",
    "block reopened",
    "block completed",
    "report queued",
    "report processed",
    "replica marked corrupt",
    "corrupt mark removed",
    "location removed",
    "replica invalidated",
    "datanode removed",
];

/// The standby monitors.
pub fn monitors() -> Vec<Box<dyn Monitor>> {
    vec![
        Box::new(StandbyIsPassive::default()),
        Box::new(NoFalseCorruption::default()),
        Box::new(SafeModeRecount::default()),
    ]
}

/// A NameNode and a block (`None` for the NameNode's own events).
type Subject<'a> = (&'a str, Option<u64>);

/// The NameNode and block an event of the NameNode concerns.
fn subject(event: &Event) -> Option<Subject<'_>> {
    if !event.component.starts_with("namenode::") {
        return None;
    }
    let node = event.node.as_deref()?;
    Some((node, event.number("block")))
}

/// Whether `event` is the NameNode judging one replica report.
fn judges_a_report(event: &Event) -> bool {
    matches!(
        event.name.as_str(),
        "report processed" | "replica marked corrupt"
    )
}

/// The evidence of `subject`: its block's events and its NameNode's.
fn evidence(trail: &NodeTrail, subject: Subject<'_>, step: usize, extra: &[usize]) -> Vec<usize> {
    let own = trail.evidence(subject.0, None, step, extra);
    trail.evidence(subject.0, subject.1, step, &own)
}

fn violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: SEED_KEY,
        property,
        detail,
    }
}

/// No replica is marked corrupt while the NameNode postpones.
#[derive(Debug, Default)]
pub struct StandbyIsPassive {
    judged: usize,
    trail: NodeTrail,
    found: Option<Finding>,
}

impl Monitor for StandbyIsPassive {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        STANDBY_IS_PASSIVE
    }

    fn observe(&mut self, event: &Event) {
        let Some(subject) = subject(event) else {
            return;
        };
        self.trail.note(subject.0, subject.1, event.step);
        if !judges_a_report(event) {
            return;
        }
        self.judged += 1;
        let postponing = event.flag("postponing") == Some(true);
        if event.name != "replica marked corrupt" || !postponing || self.found.is_some() {
            return;
        }
        self.found = Some(Finding {
            violation: violation(
                STANDBY_IS_PASSIVE,
                format!(
                    "{} marked {}'s replica of {} corrupt while postponing ({})",
                    subject.0,
                    shown(event, "datanode"),
                    event
                        .number("block")
                        .map_or_else(|| shown(event, "block"), |b| format!("blk_{b}")),
                    shown(event, "why")
                ),
            ),
            step: event.step,
            evidence: evidence(&self.trail, subject, event.step, &[]),
        });
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        let _ = name;
        component.starts_with("namenode::")
    }

    fn judges(&self, component: &str, name: &str) -> bool {
        component.starts_with("namenode::")
            && matches!(name, "report processed" | "replica marked corrupt")
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
            None => Verdict::held(self.judged, "replica report judged by a NameNode"),
        }
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[MARKED],
            to_break: &[],
        };
        READS
    }
}

/// A replica report as received: genstamp, state, and the step it was received at.
#[derive(Debug, Clone)]
struct Received {
    gs: u64,
    state: String,
    at: usize,
}

/// A block as a NameNode stores it: genstamp, COMPLETE or not, and since which step.
#[derive(Debug, Clone, Copy)]
struct Stored {
    gs: u64,
    complete: bool,
    at: usize,
}

/// One NameNode's view, as far as its events tell.
#[derive(Debug, Default)]
struct NameNodeView {
    blocks: BTreeMap<u64, Stored>,
    /// The latest report of each (block, datanode).
    latest: BTreeMap<(u64, String), Received>,
    /// Each standing corrupt flag of (block, datanode): the step it was set at.
    flagged: BTreeMap<(u64, String), usize>,
    /// Each datanode's full report queued whole (legacy): when it was received.
    whole_report: BTreeMap<String, usize>,
    /// The last edit on a file (append, delete), which may change its blocks unnamed.
    last_file_edit: usize,
}

impl NameNodeView {
    fn edit(&mut self, event: &Event, block: Option<u64>) {
        let gs = event.number("gs");
        match (event.text("op"), block, gs) {
            (Some("OP_ADD_BLOCK" | "OP_UPDATE_BLOCKS" | "OP_CLOSE"), Some(block), Some(gs)) => {
                self.blocks.insert(
                    block,
                    Stored {
                        gs,
                        complete: false,
                        at: event.step,
                    },
                );
            }
            (Some("OP_APPEND" | "OP_DELETE" | "OP_TRUNCATE" | "OP_CONCAT_DELETE"), _, _) => {
                self.last_file_edit = event.step;
            }
            _ => {}
        }
    }

    fn receive(&mut self, event: &Event, block: u64, datanode: &str) {
        let origin = event.text("report").unwrap_or("");
        if origin == "queued" {
            return;
        }
        let (Some(gs), Some(state)) = (event.number("gs"), event.text("state")) else {
            return;
        };
        let at = match self.whole_report.get(datanode) {
            Some(&queued_at) if origin == "full" => queued_at,
            _ => event.step,
        };
        let key = (block, datanode.to_owned());
        if self.latest.get(&key).is_none_or(|r| r.at <= at) {
            self.latest.insert(
                key,
                Received {
                    gs,
                    state: state.to_owned(),
                    at,
                },
            );
        }
    }
}

/// No replica stays flagged corrupt whose latest report is healthy.
#[derive(Debug, Default)]
pub struct NoFalseCorruption {
    namenodes: BTreeMap<String, NameNodeView>,
    judged: usize,
    trail: NodeTrail,
}

impl NoFalseCorruption {
    fn apply(&mut self, event: &Event, subject: Subject<'_>) {
        if !self.namenodes.contains_key(subject.0) {
            self.namenodes
                .insert(subject.0.to_owned(), NameNodeView::default());
        }
        let Some(view) = self.namenodes.get_mut(subject.0) else {
            return;
        };
        let datanode = event.text("datanode");
        match (event.name.as_str(), subject.1, datanode) {
            ("edit applied", block, _) => view.edit(event, block),
            ("block reopened", Some(block), _) => {
                if let Some(gs) = event.number("gs") {
                    let at = event.step;
                    view.blocks.insert(
                        block,
                        Stored {
                            gs,
                            complete: false,
                            at,
                        },
                    );
                }
            }
            ("block completed", Some(block), _) => {
                if let Some(gs) = event.number("gs") {
                    let at = event.step;
                    view.blocks.insert(
                        block,
                        Stored {
                            gs,
                            complete: true,
                            at,
                        },
                    );
                }
            }
            ("report queued", None, Some(dn)) if event.text("report") == Some("full") => {
                view.whole_report.insert(dn.to_owned(), event.step);
            }
            ("report queued" | "report processed", Some(block), Some(dn)) => {
                view.receive(event, block, dn);
                if event.text("state") == Some("DELETED") {
                    view.flagged.remove(&(block, dn.to_owned()));
                }
            }
            ("replica marked corrupt", Some(block), Some(dn)) => {
                view.receive(event, block, dn);
                view.flagged.insert((block, dn.to_owned()), event.step);
            }
            (
                "corrupt mark removed" | "location removed" | "replica invalidated",
                Some(block),
                Some(dn),
            ) => {
                view.flagged.remove(&(block, dn.to_owned()));
            }
            ("datanode removed", _, Some(dn)) => view.flagged.retain(|(_, d), _| *d != dn),
            _ => {}
        }
    }

    /// The first standing flag whose latest report is healthy: (NameNode, block,
    /// datanode, flagged at, received at, completed at).
    fn first_false_flag(&self) -> Option<(String, u64, String, usize, Received, Stored)> {
        let mut found: Option<(String, u64, String, usize, Received, Stored)> = None;
        for (nn, view) in &self.namenodes {
            for ((block, dn), &flagged_at) in &view.flagged {
                let (Some(stored), Some(latest)) = (
                    view.blocks.get(block),
                    view.latest.get(&(*block, dn.clone())),
                ) else {
                    continue;
                };
                let judged = stored.complete && stored.at > view.last_file_edit;
                let healthy = latest.state == "FINALIZED" && latest.gs == stored.gs;
                if judged && healthy && found.as_ref().is_none_or(|f| flagged_at < f.3) {
                    found = Some((
                        nn.clone(),
                        *block,
                        dn.clone(),
                        flagged_at,
                        latest.clone(),
                        *stored,
                    ));
                }
            }
        }
        found
    }
}

impl Monitor for NoFalseCorruption {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        NO_FALSE_CORRUPTION
    }

    fn observe(&mut self, event: &Event) {
        let Some(subject) = subject(event) else {
            return;
        };
        self.trail.note(subject.0, subject.1, event.step);
        if judges_a_report(event) {
            self.judged += 1;
        }
        self.apply(event, subject);
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        let _ = name;
        component.starts_with("namenode::")
    }

    fn judges(&self, component: &str, name: &str) -> bool {
        component.starts_with("namenode::") && FLAG_AND_REPORT_EVENTS.contains(&name)
    }

    fn reset(&mut self) {
        *self = Self {
            trail: self.trail.recycled(),
            ..Self::default()
        };
    }

    fn violation_so_far(&self) -> Option<&Finding> {
        None
    }

    fn finish(&mut self) -> Verdict {
        let Some((nn, block, dn, flagged_at, latest, stored)) = self.first_false_flag() else {
            return Verdict::held(self.judged, "replica report judged by a NameNode");
        };
        let subject = (nn.as_str(), Some(block));
        // False once the flag, the healthy report and the completion are all in.
        let step = flagged_at.max(latest.at).max(stored.at);
        Verdict::Violated(Finding {
            violation: violation(
                NO_FALSE_CORRUPTION,
                format!(
                    "{nn} flags {dn}'s replica of blk_{block} corrupt (step {flagged_at}), but its latest report (step {}) is FINALIZED with genstamp {}, the COMPLETE block's (step {})",
                    latest.at, latest.gs, stored.at
                ),
            ),
            step,
            evidence: evidence(
                &self.trail,
                subject,
                step,
                &[flagged_at, latest.at, stored.at],
            ),
        })
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[
                MARKED,
                PROCESSED,
                QUEUED,
                Needed::of("namenode::", "block completed"),
                EDIT,
            ],
            to_break: &[
                Needed::of("namenode::", "corrupt mark removed"),
                Needed::of("namenode::", "location removed"),
                Needed::of("namenode::", "replica invalidated"),
                Needed::of("namenode::", "datanode removed"),
                PROCESSED,
                QUEUED,
                EDIT,
                Needed::of("namenode::", "block reopened"),
            ],
        };
        READS
    }
}

/// In safe mode, the incremental counts equal their recount while nothing is flagged.
#[derive(Debug, Default)]
pub struct SafeModeRecount {
    judged: usize,
    trail: Trail<String>,
    found: Option<Finding>,
}

impl Monitor for SafeModeRecount {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        SAFE_MODE_RECOUNT
    }

    fn observe(&mut self, event: &Event) {
        if !event.component.starts_with("namenode::") {
            return;
        }
        let Some(node) = event.node.as_deref() else {
            return;
        };
        if event.name != "safe mode consistency check" {
            if matches!(
                event.name.as_str(),
                "safe mode counts changed" | "block completed" | "block reopened"
            ) {
                self.trail.note(node, event.step);
            }
            return;
        }
        let value = |name| event.number(name);
        let counts = (value("block_total"), value("block_safe"));
        let recount = (value("recount_total"), value("recount_safe"));
        let (Some(total), Some(safe)) = counts else {
            return;
        };
        let (Some(recount_total), Some(recount_safe)) = recount else {
            return;
        };
        if value("corrupt") != Some(0) {
            return;
        }
        self.judged += 1;
        self.trail.note(node, event.step);
        if self.found.is_some() || (total, safe) == (recount_total, recount_safe) {
            return;
        }
        self.found = Some(Finding {
            violation: Violation {
                seed: SEED_KEY,
                property: SAFE_MODE_RECOUNT,
                detail: format!(
                    "{node}: incremental (total, safe) = ({total}, {safe}), recount = \
                     ({recount_total}, {recount_safe})"
                ),
            },
            step: event.step,
            evidence: self.trail.evidence(node, event.step, &[]),
        });
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        component.starts_with("namenode::")
            && matches!(
                name,
                "safe mode consistency check"
                    | "safe mode counts changed"
                    | "block completed"
                    | "block reopened"
            )
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
            None => Verdict::held(self.judged, "safe mode consistency check"),
        }
    }

    fn reads(&self) -> Reads {
        const CHECK: Needed = Needed::of("namenode::", "safe mode consistency check");
        const READS: Reads = Reads {
            to_hold: &[CHECK],
            to_break: &[],
        };
        READS
    }
}
