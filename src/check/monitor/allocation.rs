//! HDDS-16891's harm over the datanodes' container creations: **no datanode granted more
//! containers than it has slots**, seen where the scenarios see it, on the datanode: a
//! create refused for want of room (`create refused`) means the SCMs granted it more
//! containers than it has. Judged over the creations of datanodes that state their room
//! (`container created` or `create refused` with `slots` and `holds`); a log whose
//! datanodes never do is undecided.

use super::judgement::{Finding, Monitor, Needed, Reads, Trail, Verdict};
use crate::scenarios::Violation;
use crate::scenarios::allocation::SEED_KEY;
use crate::scenarios::allocation::invariants::NO_OVER_GRANT;
use crate::story::Event;

/// The allocation monitors.
pub fn monitors() -> Vec<Box<dyn Monitor>> {
    vec![Box::new(NoDatanodeOverGranted::default())]
}

/// No datanode refuses a create for want of room.
#[derive(Debug, Default)]
pub struct NoDatanodeOverGranted {
    judged: usize,
    trail: Trail<String>,
    found: Option<Finding>,
}

impl NoDatanodeOverGranted {
    /// Notes the SCM-side events about `datanode` (grants, reservations, reports).
    fn note_scm(&mut self, event: &Event) {
        if !event.component.starts_with("scm::") {
            return;
        }
        let named = ["datanode", "datanodes"]
            .iter()
            .filter_map(|f| event.field(f))
            .flat_map(super::values::items)
            .map(str::to_owned)
            .collect::<Vec<_>>();
        for datanode in named {
            self.trail.note(&datanode, event.step);
        }
    }
}

impl Monitor for NoDatanodeOverGranted {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        NO_OVER_GRANT
    }

    fn observe(&mut self, event: &Event) {
        self.note_scm(event);
        let states_room = event.field("slots").is_some() && event.field("holds").is_some();
        let Some(datanode) = event.node.clone().filter(|_| states_room) else {
            return;
        };
        match event.name.as_str() {
            "container created" => {
                self.judged += 1;
                self.trail.note(&datanode, event.step);
            }
            "create refused" => {
                self.judged += 1;
                self.trail.note(&datanode, event.step);
                if self.found.is_some() {
                    return;
                }
                self.found = Some(Finding {
                    violation: Violation {
                        seed: SEED_KEY,
                        property: NO_OVER_GRANT,
                        detail: format!(
                            "{datanode} refused {} for lack of space (slots {}, holds {})",
                            event.field("container").unwrap_or("?"),
                            event.field("slots").unwrap_or("?"),
                            event.field("holds").unwrap_or("?")
                        ),
                    },
                    step: event.step,
                    evidence: self.trail.evidence(&datanode, event.step, &[]),
                });
            }
            _ => {}
        }
    }

    fn violation_so_far(&self) -> Option<&Finding> {
        self.found.as_ref()
    }

    fn finish(&mut self) -> Verdict {
        match &self.found {
            Some(finding) => Verdict::Violated(finding.clone()),
            None => Verdict::held(
                self.judged,
                "container creation on a datanode that states its room",
            ),
        }
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[
                Needed::of("", "create refused"),
                Needed::of("", "container created"),
            ],
            to_break: &[],
        };
        READS
    }
}
