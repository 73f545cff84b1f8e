//! HDDS-16811's replica health over the scanner's events (HDDS-7300 too).
//!
//! - **no replica marked UNHEALTHY by the race**: no scan marks a replica UNHEALTHY
//!   (`container scanned` with `unhealthy=true`). Every scenario that judges the property
//!   makes the replica's blocks whole and its files present before the races begin, so a
//!   scan failure is the race's: a block committed without its file (HDDS-16811's MC3),
//!   or a block the deleting round was removing looked up again with no lock
//!   (HDDS-7300). Judged over the scans of the run.

use super::judgement::{Finding, Monitor, Needed, Reads, Trail, Verdict};
use crate::scenarios::Violation;
use crate::scenarios::container::SEED_KEY;
use crate::scenarios::container::invariants::REPLICA_HEALTHY;
use crate::story::Event;

const SCANNED: Needed = Needed::of("datanode::container", "container scanned");

/// The replica-health monitors.
pub fn monitors() -> Vec<Box<dyn Monitor>> {
    vec![Box::new(ReplicaHealthy::default())]
}

/// No scan marks a replica UNHEALTHY.
#[derive(Debug, Default)]
pub struct ReplicaHealthy {
    trail: Trail<(String, String)>,
    scans: usize,
    unhealthy: Option<Finding>,
}

impl Monitor for ReplicaHealthy {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        REPLICA_HEALTHY
    }

    fn observe(&mut self, event: &Event) {
        if event.name != "container scanned" || self.unhealthy.is_some() {
            return;
        }
        let node = event.node.clone().unwrap_or_default();
        let container = event
            .number("container")
            .map_or_else(String::new, |c| format!("c{c}"));
        let key = (node, container);
        self.trail.note(&key, event.step);
        self.scans += 1;
        if event.flag("unhealthy") == Some(true) {
            let (node, container) = &key;
            let errors = event.text("errors").unwrap_or("[]");
            self.unhealthy = Some(Finding {
                violation: Violation {
                    seed: SEED_KEY,
                    property: REPLICA_HEALTHY,
                    detail: format!("{node} marked {container} UNHEALTHY: scan found {errors}"),
                },
                step: event.step,
                evidence: self.trail.evidence(&key, event.step, &[]),
            });
        }
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        component.starts_with("datanode::container") && name == "container scanned"
    }

    fn reset(&mut self) {
        *self = Self {
            trail: self.trail.recycled(),
            ..Self::default()
        };
    }

    fn violation_so_far(&self) -> Option<&Finding> {
        self.unhealthy.as_ref()
    }

    fn finish(&mut self) -> Verdict {
        match &self.unhealthy {
            Some(finding) => Verdict::Violated(finding.clone()),
            None => Verdict::held(self.scans, "container scan"),
        }
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[SCANNED],
            to_break: &[SCANNED],
        };
        READS
    }
}
