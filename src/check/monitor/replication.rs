//! The cluster's replication factor over the events of SCMs and datanodes (HDDS-17268 with
//! HDDS-16449's double delete of an over-replicated container's replicas).
//!
//! - **no container left below its replication factor**: once the run is quiescent
//!   (`cluster quiescent`, which a scenario states when it healed and settled), every
//!   container the SCM did not delete keeps at least as many replicas as its pipeline has
//!   datanodes (`slots reserved`, its `datanodes`). A datanode holds a replica from its
//!   `container created`, or from a container report naming it (`container report
//!   processed`, `confirmed` or `unknown`), until a `DeleteContainer` command runs there
//!   (`command run`, `Executed`). A container the SCM moved to DELETING or DELETED, or
//!   whose pipeline the log never showed, is not judged.

use std::collections::{BTreeMap, BTreeSet};

use super::judgement::{Finding, Monitor, Needed, Reads, Trail, Verdict};
use super::values::{is_delete_container, items, listed_ids};
use crate::scenarios::Violation;
use crate::scenarios::cluster::{BELOW_REPLICATION_FACTOR, REPLICATION_SEED};
use crate::story::Event;

const RESERVED: Needed = Needed::of("scm::container_manager", "slots reserved");
const CREATED: Needed = Needed::of("datanode::container", "container created");
const REPORTED: Needed = Needed::of("scm::container_manager", "container report processed");
const REPLICA_DELETED: Needed =
    Needed::only("datanode::dispatcher", "command run", "DeleteContainer");
const QUIESCENT: Needed = Needed::of("scenarios::", "cluster quiescent");

/// The replication monitors.
pub fn monitors() -> Vec<Box<dyn Monitor>> {
    vec![Box::new(KeepsReplicationFactor::default())]
}

/// No container ends a quiescent run with fewer replicas than its pipeline's datanodes.
#[derive(Debug, Default)]
pub struct KeepsReplicationFactor {
    /// Each container's factor: its pipeline's datanodes.
    factor: BTreeMap<u64, usize>,
    /// Each container's holders.
    holders: BTreeMap<u64, BTreeSet<String>>,
    /// Containers the SCM deletes.
    deleted: BTreeSet<u64>,
    trail: Trail<u64>,
    judged: usize,
    below: Option<Finding>,
}

impl KeepsReplicationFactor {
    fn hold(&mut self, container: u64, datanode: &str, held: bool, step: usize) {
        self.trail.note(&container, step);
        let holders = self.holders.entry(container).or_default();
        if held {
            if !holders.contains(datanode) {
                holders.insert(datanode.to_owned());
            }
        } else {
            holders.remove(datanode);
        }
    }

    fn scm_event(&mut self, event: &Event) -> Option<()> {
        match event.name.as_str() {
            "slots reserved" => {
                let container = event.number("container")?;
                let datanodes = items(event.text("datanodes")?).len();
                self.trail.note(&container, event.step);
                self.factor.insert(container, datanodes);
            }
            "container report processed" => {
                let datanode = event.text("datanode")?;
                let named = ["confirmed", "unknown"]
                    .into_iter()
                    .flat_map(|field| listed_ids(event, field));
                for container in named {
                    self.hold(container, datanode, true, event.step);
                }
            }
            "container state updated" => {
                let state = event.text("state")?;
                if state.eq_ignore_ascii_case("DELETING") || state.eq_ignore_ascii_case("DELETED") {
                    self.deleted.insert(event.number("container")?);
                }
            }
            _ => {}
        }
        Some(())
    }

    fn datanode_event(&mut self, event: &Event) -> Option<()> {
        let datanode = event.node.as_deref()?;
        if event.name == "container created" {
            let container = event.number("container")?;
            self.hold(container, datanode, true, event.step);
        } else if event.name == "command run" {
            let command = event.text("command")?;
            if event.text("outcome")? == "Executed" && is_delete_container(command) {
                self.hold(event.number("container")?, datanode, false, event.step);
            }
        }
        Some(())
    }

    fn judge(&mut self, step: usize) {
        for (&container, &factor) in &self.factor {
            if self.deleted.contains(&container) {
                continue;
            }
            self.judged += 1;
            let holders = self.holders.get(&container).cloned().unwrap_or_default();
            if holders.len() >= factor || self.below.is_some() {
                continue;
            }
            self.below = Some(Finding {
                violation: Violation {
                    seed: REPLICATION_SEED,
                    property: BELOW_REPLICATION_FACTOR,
                    detail: format!(
                        "c{container} has {} replica(s) (on {holders:?}) once the run is \
                         quiescent, its pipeline has {factor} datanodes",
                        holders.len()
                    ),
                },
                step,
                evidence: self.trail.evidence(&container, step, &[]),
            });
        }
    }
}

impl Monitor for KeepsReplicationFactor {
    fn seed(&self) -> &'static str {
        REPLICATION_SEED
    }

    fn property(&self) -> &'static str {
        BELOW_REPLICATION_FACTOR
    }

    fn observe(&mut self, event: &Event) {
        let component = event.component.as_str();
        if component.starts_with("scm::container_manager") {
            self.scm_event(event);
        } else if component.starts_with("datanode::") {
            self.datanode_event(event);
        } else if component.starts_with("scenarios::") && event.name == "cluster quiescent" {
            self.judge(event.step);
        }
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        let scm = matches!(
            name,
            "slots reserved" | "container report processed" | "container state updated"
        );
        (component.starts_with("scm::container_manager") && scm)
            || (component.starts_with("datanode::")
                && matches!(name, "container created" | "command run"))
            || (component.starts_with("scenarios::") && name == "cluster quiescent")
    }

    fn reset(&mut self) {
        *self = Self {
            trail: self.trail.recycled(),
            ..Self::default()
        };
    }

    fn violation_so_far(&self) -> Option<&Finding> {
        self.below.as_ref()
    }

    fn finish(&mut self) -> Verdict {
        match &self.below {
            Some(finding) => Verdict::Violated(finding.clone()),
            None => Verdict::held(self.judged, "container judged at a quiescent cluster"),
        }
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[QUIESCENT, RESERVED, REPLICA_DELETED],
            to_break: &[QUIESCENT, RESERVED, CREATED, REPORTED],
        };
        READS
    }
}
