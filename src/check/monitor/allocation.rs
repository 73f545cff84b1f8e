//! HDDS-16891's harm over the datanodes' container creations: **no datanode granted more
//! containers than it has slots**, seen where the scenarios see it, on the datanode: a
//! create refused for want of room (`create refused`) means the SCMs granted it more
//! containers than it has. Judged over the creations of datanodes that state their room
//! (`container created` or `create refused` with `slots` and `holds`); a log whose
//! datanodes never do is undecided.
//!
//! The same harm in a cluster of real datanodes (**no datanode granted more containers
//! than it has room for**, the cluster's own name): each datanode's latest `node report`
//! (`remaining`, `committed`, `spare`), at the end; the space it reserves for its OPEN
//! replicas (`committed` + `spare`) must fit in what is free. A datanode that never
//! reported is not judged.
//!
//! The state that prevents it (**serving leader reserves every granted unwritten
//! container**): an SCM's `containers read` states each OPEN container still unwritten on
//! a datanode of its pipeline (`unwritten`, `c1@dn2`); each later `pending allocations
//! read` of that SCM for a datanode (`pending`), while the SCM is the ready leader
//! (`leader ready`, not since `became leader` again, `stepped down` or `started`), must
//! hold every container unwritten on it. Judged where the SCM's state is read, not
//! between.

use std::collections::BTreeMap;

use super::judgement::{Finding, Monitor, Needed, Reads, Trail, Verdict};
use super::values::shown;
use crate::scenarios::Violation;
use crate::scenarios::allocation::SEED_KEY;
use crate::scenarios::allocation::invariants::{LEADER_RESERVES, NO_OVER_GRANT};
use crate::scenarios::cluster::NO_GRANT_PAST_ROOM;
use crate::story::Event;

/// The allocation monitors.
pub fn monitors() -> Vec<Box<dyn Monitor>> {
    vec![
        Box::new(NoDatanodeOverGranted::default()),
        Box::new(NoDatanodeGrantedPastItsRoom::default()),
        Box::new(LeaderReservesUnwritten::default()),
    ]
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
            .filter_map(|f| event.text(f))
            .flat_map(super::values::each_item);
        for datanode in named {
            self.trail.note(datanode, event.step);
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
        if !matches!(event.name.as_str(), "container created" | "create refused") {
            return;
        }
        let states_room = event.value("slots").is_some() && event.value("holds").is_some();
        let Some(datanode) = event.node.as_deref().filter(|_| states_room) else {
            return;
        };
        match event.name.as_str() {
            "container created" => {
                self.judged += 1;
                self.trail.note(datanode, event.step);
            }
            "create refused" => {
                self.judged += 1;
                self.trail.note(datanode, event.step);
                if self.found.is_some() {
                    return;
                }
                self.found = Some(Finding {
                    violation: Violation {
                        seed: SEED_KEY,
                        property: NO_OVER_GRANT,
                        detail: format!(
                            "{datanode} refused {} for lack of space (slots {}, holds {})",
                            shown(event, "container"),
                            shown(event, "slots"),
                            shown(event, "holds")
                        ),
                    },
                    step: event.step,
                    evidence: self.trail.evidence(datanode, event.step, &[]),
                });
            }
            _ => {}
        }
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        component.starts_with("scm::") || matches!(name, "container created" | "create refused")
    }

    fn judges(&self, component: &str, name: &str) -> bool {
        let _ = component;
        matches!(name, "container created" | "create refused")
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

/// Each datanode's latest node report fits what it reserves in what it has free.
#[derive(Debug, Default)]
pub struct NoDatanodeGrantedPastItsRoom {
    /// Per datanode: its latest report's step, free bytes and reserved bytes.
    latest: BTreeMap<String, (usize, u64, u64)>,
    trail: Trail<String>,
}

impl Monitor for NoDatanodeGrantedPastItsRoom {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        NO_GRANT_PAST_ROOM
    }

    fn observe(&mut self, event: &Event) {
        if event.name == "container created" {
            if let Some(datanode) = &event.node {
                self.trail.note(datanode, event.step);
            }
            return;
        }
        if event.name != "node report" {
            return;
        }
        let Some(datanode) = event.node.as_deref() else {
            return;
        };
        let value = |name| event.number(name);
        let (Some(remaining), Some(committed)) = (value("remaining"), value("committed")) else {
            return;
        };
        let reserved = committed.saturating_add(value("spare").unwrap_or(0));
        self.trail.note(datanode, event.step);
        let latest = (event.step, remaining, reserved);
        match self.latest.get_mut(datanode) {
            Some(kept) => *kept = latest,
            None => {
                self.latest.insert(datanode.to_owned(), latest);
            }
        }
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        let _ = component;
        matches!(name, "container created" | "node report")
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
        let over = self
            .latest
            .iter()
            .find(|(_, (_, remaining, reserved))| reserved > remaining);
        match over {
            Some((datanode, &(step, remaining, reserved))) => Verdict::Violated(Finding {
                violation: Violation {
                    seed: SEED_KEY,
                    property: NO_GRANT_PAST_ROOM,
                    detail: format!(
                        "{datanode} reserves {reserved} bytes for its open containers \
                         with {remaining} bytes free"
                    ),
                },
                step,
                evidence: self.trail.evidence(datanode, step, &[]),
            }),
            None => Verdict::held(self.latest.len(), "node report of a datanode"),
        }
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[Needed::of("datanode::", "node report")],
            to_break: &[Needed::of("datanode::", "node report")],
        };
        READS
    }
}

/// A ready leader holds a slot for every granted container not yet written.
#[derive(Debug, Default)]
pub struct LeaderReservesUnwritten {
    /// Per SCM: whether it is the ready leader.
    ready: BTreeMap<String, bool>,
    /// Per SCM: its latest `containers read`, as (container, datanode) pairs.
    unwritten: BTreeMap<String, Vec<(String, String)>>,
    judged: usize,
    trail: Trail<String>,
    found: Option<Finding>,
}

/// The items of a listed field (`c1,c2`; `-` for none).
fn listed<'a>(event: &'a Event, field: &str) -> Option<Vec<&'a str>> {
    let text = event.text(field)?;
    Some(
        super::values::items(text)
            .into_iter()
            .filter(|item| *item != "-")
            .collect(),
    )
}

impl LeaderReservesUnwritten {
    /// Judges a pending read of `scm` against its latest containers read.
    fn judge(&mut self, scm: &str, event: &Event) {
        let (Some(datanode), Some(pending)) = (event.text("datanode"), listed(event, "pending"))
        else {
            return;
        };
        let Some(unwritten) = self.unwritten.get(scm) else {
            return;
        };
        self.judged += 1;
        let missing = unwritten
            .iter()
            .find(|(container, on)| on == datanode && !pending.contains(&container.as_str()));
        let Some((container, _)) = missing.filter(|_| self.found.is_none()) else {
            return;
        };
        self.found = Some(Finding {
            violation: Violation {
                seed: SEED_KEY,
                property: LEADER_RESERVES,
                detail: format!(
                    "{scm} leads but holds no slot for unwritten {container} on {datanode} \
                     (pending {})",
                    shown(event, "pending")
                ),
            },
            step: event.step,
            evidence: self.trail.evidence(scm, event.step, &[]),
        });
    }
}

impl Monitor for LeaderReservesUnwritten {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        LEADER_RESERVES
    }

    fn observe(&mut self, event: &Event) {
        if !event.component.starts_with("scm::") {
            return;
        }
        let Some(scm) = event.node.as_deref() else {
            return;
        };
        self.trail.note(scm, event.step);
        match event.name.as_str() {
            "became leader" | "stepped down" | "started" => {
                self.ready.insert(scm.to_owned(), false);
            }
            "leader ready" => {
                self.ready.insert(scm.to_owned(), true);
            }
            "containers read" => {
                let pairs = listed(event, "unwritten")
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|pair| pair.split_once('@'))
                    .map(|(c, d)| (c.to_owned(), d.to_owned()))
                    .collect();
                self.unwritten.insert(scm.to_owned(), pairs);
            }
            "pending allocations read" if self.ready.get(scm) == Some(&true) => {
                self.judge(scm, event);
            }
            _ => {}
        }
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        let _ = name;
        component.starts_with("scm::")
    }

    fn judges(&self, component: &str, name: &str) -> bool {
        component.starts_with("scm::")
            && matches!(
                name,
                "became leader"
                    | "stepped down"
                    | "started"
                    | "leader ready"
                    | "containers read"
                    | "pending allocations read"
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
            None => Verdict::held(self.judged, "pending allocations read of a ready leader"),
        }
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[
                Needed::of("scm::", "containers read"),
                Needed::of("scm::", "pending allocations read"),
                Needed::of("scm::", "leader ready"),
            ],
            to_break: &[
                Needed::of("scm::", "containers read"),
                Needed::of("scm::", "became leader"),
                Needed::of("scm::", "stepped down"),
            ],
        };
        READS
    }
}
