//! The standby's end-state properties over a NameNode's report events: one of HDFS-2742's
//! (a report the standby could not place must not be lost) and HDFS-17905's liveness.
//!
//! - **location completeness**: at the end of the run, on each NameNode that is active
//!   (its last `transition to active` not followed by `transition to standby`), no
//!   datanode whose latest report of a block was a FINALIZED replica with the genstamp the
//!   block was later completed at (`block completed`, after the report, not followed by
//!   `block reopened`) had that report left out of the locations: dropped as of an unknown
//!   block (`report processed` with `verdict=unknown block`) or flagged corrupt against
//!   the block's state of the moment (`replica marked corrupt`). It holds the replica,
//!   said so, and is no location. The datanode's later report of the block, its deletion
//!   of the replica (`replica deleted`), its removal (`datanode removed`), a location of
//!   it at the report's genstamp removed or invalidated, or its corrupt mark removed,
//!   leaves the case unjudged. Only those losses are judged: the events show a reported
//!   replica made a location (`verdict=ok`) or queued (it waits for its drain), not the
//!   locations themselves.
//! - **the standby's queue empties** (liveness): once the run is quiescent (`cluster
//!   quiescent`, which a scenario states when its heal phase is over: every file deleted,
//!   every edit tailed, every report landed), no NameNode's queue of postponed reports
//!   holds an entry (`pending messages read`, which a NameNode states whenever its state
//!   is read with entries queued: upstream's `PendingDataNodeMessageCount`).

use std::collections::BTreeMap;

use super::judgement::{Finding, Monitor, Needed, NodeTrail, Reads, Verdict};
use crate::scenarios::Violation;
use crate::scenarios::standby::{
    LEAK_SEED_KEY, LOCATION_COMPLETENESS, SEED_KEY, STANDBY_QUEUE_EMPTIES,
};
use crate::story::Event;

const PROCESSED: Needed = Needed::of("namenode::", "report processed");
const QUEUED: Needed = Needed::of("namenode::", "report queued");
const COMPLETED: Needed = Needed::of("namenode::", "block completed");
const TO_ACTIVE: Needed = Needed::of("namenode::", "transition to active");
const REPLICA_DELETED: Needed = Needed::of("sim::hdfs_datanode", "replica deleted");
const QUIESCENT: Needed = Needed::of("scenarios::", "cluster quiescent");
const QUEUE_READ: Needed = Needed::of("namenode::", "pending messages read");

/// The standby's end-state monitors.
pub fn monitors() -> Vec<Box<dyn Monitor>> {
    vec![
        Box::new(LocationCompleteness::default()),
        Box::new(StandbyQueueEmpties::default()),
    ]
}

/// A NameNode, a block, a datanode.
type ReportKey = (String, u64, String);

/// What became of a datanode's latest report of a block, on one NameNode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// A FINALIZED replica at this genstamp, at this step, that the NameNode did not make
    /// a location: dropped as of an unknown block, or flagged corrupt.
    Unplaced(u64, usize),
    /// Anything else: stored, queued, judged corrupt, removed, deleted.
    Other,
}

/// The NameNode's events [`LocationCompleteness`]'s verdict reads: its state, its
/// blocks' completion, the reports it received and the locations it dropped.
const LOCATION_EVENTS: [&str; 11] = [
    "transition to active",
    "transition to standby",
    "datanode removed",
    "block completed",
    "block reopened",
    "report processed",
    "report queued",
    "replica marked corrupt",
    "location removed",
    "replica invalidated",
    "corrupt mark removed",
];

/// No FINALIZED replica reported at its block's final genstamp is left out of an active
/// NameNode's locations for want of the block when it was reported.
#[derive(Debug, Default)]
pub struct LocationCompleteness {
    reports: BTreeMap<ReportKey, Fate>,
    /// Each NameNode's blocks: the genstamp and step of their completion.
    completed: BTreeMap<(String, u64), (u64, usize)>,
    active: BTreeMap<String, bool>,
    trail: NodeTrail,
}

impl LocationCompleteness {
    fn namenode_event(&mut self, event: &Event, nn: &str) -> Option<()> {
        match event.name.as_str() {
            "transition to active" => {
                self.active.insert(nn.to_owned(), true);
                return Some(());
            }
            "transition to standby" => {
                self.active.insert(nn.to_owned(), false);
                return Some(());
            }
            "datanode removed" => {
                let dn = event.text("datanode")?;
                for (key, fate) in &mut self.reports {
                    if key.0 == nn && key.2 == dn {
                        *fate = Fate::Other;
                    }
                }
                return Some(());
            }
            _ => {}
        }
        let block = event.number("block")?;
        self.trail.note(nn, Some(block), event.step);
        match event.name.as_str() {
            "block completed" => {
                let gs = event.number("gs")?;
                self.completed
                    .insert((nn.to_owned(), block), (gs, event.step));
            }
            "block reopened" => {
                self.completed.remove(&(nn.to_owned(), block));
            }
            "report processed" | "report queued" | "replica marked corrupt" => {
                let dn = event.text("datanode")?.to_owned();
                let finalized = event.text("state") == Some("FINALIZED");
                let unplaced = match event.name.as_str() {
                    "report processed" => event.text("verdict") == Some("unknown block"),
                    name => name == "replica marked corrupt",
                };
                let fate = match (finalized && unplaced, event.number("gs")) {
                    (true, Some(gs)) => Fate::Unplaced(gs, event.step),
                    _ => Fate::Other,
                };
                self.reports.insert((nn.to_owned(), block, dn), fate);
            }
            "location removed" | "replica invalidated" | "corrupt mark removed" => {
                // A location at another genstamp than the report's is another replica's.
                let dn = event.text("datanode")?.to_owned();
                let gs = event.number("gs");
                if let Some(fate) = self.reports.get_mut(&(nn.to_owned(), block, dn)) {
                    if !matches!((*fate, gs), (Fate::Unplaced(kept, _), Some(gs)) if kept != gs) {
                        *fate = Fate::Other;
                    }
                }
            }
            _ => {}
        }
        Some(())
    }

    fn replica_deleted(&mut self, event: &Event) -> Option<()> {
        let dn = event.node.as_deref()?;
        let block = event.number("block")?;
        for (key, fate) in &mut self.reports {
            if key.1 == block && key.2 == dn {
                *fate = Fate::Other;
            }
        }
        Some(())
    }

    /// The first lost report: its key, its step, and its block's completion step.
    fn lost(&self) -> Option<(&ReportKey, usize, usize)> {
        self.reports
            .iter()
            .filter_map(|(key, fate)| {
                let Fate::Unplaced(gs, step) = *fate else {
                    return None;
                };
                let &(final_gs, completed_at) = self.completed.get(&(key.0.clone(), key.1))?;
                let active = self.active.get(&key.0).copied().unwrap_or(false);
                (active && final_gs == gs && completed_at > step).then_some((
                    key,
                    step,
                    completed_at,
                ))
            })
            .min_by_key(|&(_, _, completed_at)| completed_at)
    }
}

impl Monitor for LocationCompleteness {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        LOCATION_COMPLETENESS
    }

    fn observe(&mut self, event: &Event) {
        if event.component.starts_with("sim::hdfs_datanode") && event.name == "replica deleted" {
            self.replica_deleted(event);
        } else if event.component.starts_with("namenode::") {
            let nn = event.node.as_deref().unwrap_or_default();
            self.namenode_event(event, nn);
        }
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        (component.starts_with("sim::hdfs_datanode") && name == "replica deleted")
            || component.starts_with("namenode::")
    }

    fn judges(&self, component: &str, name: &str) -> bool {
        (component.starts_with("sim::hdfs_datanode") && name == "replica deleted")
            || (component.starts_with("namenode::") && LOCATION_EVENTS.contains(&name))
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
        match self.lost() {
            Some(((nn, block, dn), dropped_at, completed_at)) => Verdict::Violated(Finding {
                violation: Violation {
                    seed: SEED_KEY,
                    property: LOCATION_COMPLETENESS,
                    detail: format!(
                        "{nn} (active at the end): {dn} reported blk_{block} FINALIZED at step \
                         {dropped_at}, left out of the locations (an unknown block, or flagged \
                         corrupt); the block completed at that genstamp at step \
                         {completed_at}, and {dn} is no location of it"
                    ),
                },
                step: completed_at,
                evidence: self
                    .trail
                    .evidence(nn, Some(*block), completed_at, &[dropped_at]),
            }),
            None => {
                let judged = self
                    .reports
                    .keys()
                    .filter(|(nn, block, _)| {
                        self.active.get(nn).copied().unwrap_or(false)
                            && self.completed.contains_key(&(nn.clone(), *block))
                    })
                    .count();
                Verdict::held(judged, "report of a completed block on an active NameNode")
            }
        }
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[PROCESSED, COMPLETED, TO_ACTIVE],
            to_break: &[PROCESSED, QUEUED, COMPLETED, TO_ACTIVE, REPLICA_DELETED],
        };
        READS
    }
}

/// Once the run is quiescent, no NameNode holds a postponed report.
#[derive(Debug, Default)]
pub struct StandbyQueueEmpties {
    quiescent_at: Option<usize>,
    judged: usize,
    leak: Option<Finding>,
}

impl Monitor for StandbyQueueEmpties {
    fn seed(&self) -> &'static str {
        LEAK_SEED_KEY
    }

    fn property(&self) -> &'static str {
        STANDBY_QUEUE_EMPTIES
    }

    fn observe(&mut self, event: &Event) {
        if event.name == "cluster quiescent" && event.component.starts_with("scenarios::") {
            self.quiescent_at = Some(event.step);
            self.judged += 1;
            return;
        }
        if event.name != "pending messages read" || !event.component.starts_with("namenode::") {
            return;
        }
        let (Some(quiescent_at), None) = (self.quiescent_at, &self.leak) else {
            return;
        };
        let queued = event.number("queued").unwrap_or(0);
        if queued == 0 {
            return;
        }
        let nn = event.node.as_deref().unwrap_or("a NameNode");
        let blocks = event.text("blocks").unwrap_or("?");
        self.leak = Some(Finding {
            violation: Violation {
                seed: LEAK_SEED_KEY,
                property: STANDBY_QUEUE_EMPTIES,
                detail: format!(
                    "{nn} still holds {queued} queued report(s) (blocks {blocks}) after the run \
                     was quiescent at step {quiescent_at}"
                ),
            },
            step: event.step,
            evidence: vec![quiescent_at, event.step],
        });
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        (component.starts_with("scenarios::") && name == "cluster quiescent")
            || (component.starts_with("namenode::") && name == "pending messages read")
    }

    fn reset(&mut self) {
        *self = Self::default();
    }

    fn violation_so_far(&self) -> Option<&Finding> {
        self.leak.as_ref()
    }

    fn finish(&mut self) -> Verdict {
        match &self.leak {
            Some(finding) => Verdict::Violated(finding.clone()),
            None => Verdict::held(self.judged, "cluster quiescent"),
        }
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[QUIESCENT, QUEUE_READ],
            to_break: &[QUIESCENT, QUEUE_READ],
        };
        READS
    }
}
