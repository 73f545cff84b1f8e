//! HDDS-16811's properties of a replica's data (with HDDS-16808's checksum refresh), per
//! replica (the events' `node` and `container`) or replica block (and `block`).
//!
//! - **no block of a live key lost**: a block a repair committed whole (`commit decided`
//!   with `decision=commit`, not `partial`) is a block of a live key on that replica; a
//!   later partial commit of the same block (`partial=true`: the pull stopped early)
//!   rewrites its metadata with fewer chunks than it had, and unless a whole commit or a
//!   deletion of it (or of the replica) follows, the replica ends the run short of the
//!   key's data. Judged at the end, as the scenarios judge it at quiescence.
//! - **data checksum in memory, persisted and in the tree file agree**: the replica's
//!   data checksum (the value of its last `checksum refreshed`) equals the root of its
//!   last `tree written` (emitted under the tree's writer lock, so the log orders tree
//!   writes as they happened). A replica whose checksum the log never refreshed, or whose
//!   last tree has no root, is not judged: its value comes from before the log.

use std::collections::BTreeMap;

use super::judgement::{Finding, Monitor, Needed, Reads, Trail, Verdict};
use super::values::is_delete_container;
use crate::scenarios::Violation;
use crate::scenarios::container::SEED_KEY;
use crate::scenarios::container::invariants::{DATA_CHECKSUM_FOLLOWS_TREE, LIVE_BLOCKS_PRESENT};
use crate::story::Event;

const COMMITTED: Needed = Needed::of("datanode::container", "commit decided");
const DELETED: Needed = Needed::of("datanode::container", "block deleted");
const PEER_DELETED: Needed = Needed::of("datanode::container", "peer deletion applied");
const REPLICA_DELETED: Needed =
    Needed::only("datanode::dispatcher", "command run", "DeleteContainer");
const TREE_WRITTEN: Needed = Needed::of("datanode::container", "tree written");
const REFRESHED: Needed = Needed::of("datanode::container", "checksum refreshed");
const CREATED: Needed = Needed::of("datanode::container", "container created");

/// The replica-data monitors.
pub fn monitors() -> Vec<Box<dyn Monitor>> {
    vec![
        Box::new(LiveBlocksPresent::default()),
        Box::new(ChecksumFollowsTree::default()),
    ]
}

/// A replica: datanode, container.
type ReplicaKey = (String, u64);

/// A block of one replica: datanode, container, block.
type BlockKey = (String, u64, u64);

fn violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: SEED_KEY,
        property,
        detail,
    }
}

/// The replica an event concerns, if it is a replica event of a datanode.
fn replica_of(event: &Event) -> Option<ReplicaKey> {
    if !event.component.starts_with("datanode::container") {
        return None;
    }
    Some((event.node.clone()?, event.number("container")?))
}

/// The replica a `DeleteContainer` command that ran removed, or a replica created anew:
/// either way, what the log said of it before is void.
fn replica_reset(event: &Event) -> Option<ReplicaKey> {
    if event.component == "datanode::dispatcher" && event.name == "command run" {
        let command = event.text("command")?;
        let ran = event.text("outcome")? == "Executed";
        return (ran && is_delete_container(command))
            .then(|| Some((event.node.clone()?, event.number("container")?)))
            .flatten();
    }
    if event.name == "container created" {
        return replica_of(event);
    }
    None
}

/// Whether an event of `component` named `name` may be a replica's reset
/// ([`replica_reset`]).
fn wants_replica_reset(component: &str, name: &str) -> bool {
    (component == "datanode::dispatcher" && name == "command run")
        || (component.starts_with("datanode::container") && name == "container created")
}

/// What a commit or a deletion did to a replica block's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metadata {
    /// Committed whole by a repair.
    Whole,
    /// Rewritten by a partial commit after a whole one: short since this step.
    CutShort(usize),
}

/// No block a repair committed whole ends the run cut short by a partial commit.
#[derive(Debug, Default)]
pub struct LiveBlocksPresent {
    blocks: BTreeMap<BlockKey, Metadata>,
    trail: Trail<BlockKey>,
    judged: usize,
}

impl LiveBlocksPresent {
    fn block_event(&mut self, event: &Event) -> Option<()> {
        let (node, container) = replica_of(event)?;
        let deleted = matches!(
            event.name.as_str(),
            "block deleted" | "peer deletion applied"
        );
        let commit = event.name == "commit decided" && event.text("decision") == Some("commit");
        if !deleted && !commit {
            return None;
        }
        let key = (node, container, event.number("block")?);
        self.trail.note(&key, event.step);
        if deleted {
            self.blocks.remove(&key);
        } else if event.flag("partial") == Some(true) {
            if let Some(state @ Metadata::Whole) = self.blocks.get_mut(&key) {
                *state = Metadata::CutShort(event.step);
            }
        } else {
            self.judged += 1;
            self.blocks.insert(key, Metadata::Whole);
        }
        Some(())
    }
}

impl Monitor for LiveBlocksPresent {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        LIVE_BLOCKS_PRESENT
    }

    fn observe(&mut self, event: &Event) {
        if let Some((node, container)) = replica_reset(event) {
            self.blocks
                .retain(|(n, c, _), _| !(n == &node && *c == container));
            return;
        }
        self.block_event(event);
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        wants_replica_reset(component, name)
            || (component.starts_with("datanode::container")
                && matches!(
                    name,
                    "block deleted" | "peer deletion applied" | "commit decided"
                ))
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
        let short = self
            .blocks
            .iter()
            .filter_map(|(key, state)| match state {
                Metadata::CutShort(step) => Some((key, *step)),
                Metadata::Whole => None,
            })
            .min_by_key(|&(_, step)| step);
        match short {
            Some(((node, container, block), step)) => Verdict::Violated(Finding {
                violation: violation(
                    LIVE_BLOCKS_PRESENT,
                    format!(
                        "{node} block {block} of c{container}: committed whole by a repair, then \
                         rewritten by a partial commit at step {step}, and short at the end"
                    ),
                ),
                step,
                evidence: self
                    .trail
                    .evidence(&(node.clone(), *container, *block), step, &[]),
            }),
            None => Verdict::held(self.judged, "whole repair commit of a block"),
        }
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[COMMITTED],
            to_break: &[COMMITTED, DELETED, PEER_DELETED, REPLICA_DELETED, CREATED],
        };
        READS
    }
}

/// A replica's last tree root and last refreshed checksum, with their steps.
#[derive(Debug, Clone, Default)]
struct Checksums {
    tree: Option<(String, usize)>,
    value: Option<(String, usize)>,
}

impl Checksums {
    /// The step since which the two disagree, if both are known and they do.
    fn disagree_since(&self) -> Option<usize> {
        let (tree, tree_step) = self.tree.as_ref()?;
        let (value, value_step) = self.value.as_ref()?;
        (tree != value).then_some(*tree_step.max(value_step))
    }
}

/// The replica's data checksum ends the run on its tree file's root.
#[derive(Debug, Default)]
pub struct ChecksumFollowsTree {
    replicas: BTreeMap<ReplicaKey, Checksums>,
    trail: Trail<ReplicaKey>,
}

impl Monitor for ChecksumFollowsTree {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        DATA_CHECKSUM_FOLLOWS_TREE
    }

    fn observe(&mut self, event: &Event) {
        if let Some(key) = replica_reset(event) {
            self.replicas.remove(&key);
            return;
        }
        let (field, tree) = match event.name.as_str() {
            "tree written" => ("root", true),
            "checksum refreshed" => ("to", false),
            _ => return,
        };
        let Some(key) = replica_of(event) else {
            return;
        };
        let Some(value) = event.value(field) else {
            return;
        };
        self.trail.note(&key, event.step);
        let known = (value.as_text() != Some("none")).then(|| (value.to_string(), event.step));
        let checksums = self.replicas.entry(key).or_default();
        if tree {
            checksums.tree = known;
        } else {
            checksums.value = known;
        }
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        wants_replica_reset(component, name)
            || (component.starts_with("datanode::container")
                && matches!(name, "tree written" | "checksum refreshed"))
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
        let judged = self
            .replicas
            .values()
            .filter(|c| c.tree.is_some() && c.value.is_some())
            .count();
        let stale = self
            .replicas
            .iter()
            .filter_map(|(key, checksums)| Some((key, checksums, checksums.disagree_since()?)))
            .min_by_key(|&(_, _, since)| since);
        match stale {
            Some(((node, container), checksums, since)) => {
                let text = |v: &Option<(String, usize)>| {
                    v.as_ref().map_or("", |(t, _)| t.as_str()).to_owned()
                };
                Verdict::Violated(Finding {
                    violation: violation(
                        DATA_CHECKSUM_FOLLOWS_TREE,
                        format!(
                            "{node} c{container}: data checksum {} in memory and persisted, tree \
                             file root {} at the end (since step {since})",
                            text(&checksums.value),
                            text(&checksums.tree)
                        ),
                    ),
                    step: since,
                    evidence: self.trail.evidence(&(node.clone(), *container), since, &[]),
                })
            }
            None => Verdict::held(judged, "checksum refreshed after a tree written"),
        }
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[TREE_WRITTEN, REFRESHED],
            to_break: &[TREE_WRITTEN, REFRESHED, REPLICA_DELETED, CREATED],
        };
        READS
    }
}
