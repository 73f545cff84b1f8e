//! HDDS-16811's properties over a replica's block events, per replica block (the events'
//! `node`, `container` and `block`).
//!
//! - **a block whose deletion was executed is not live**: once a replica executed a
//!   block's deletion (`block deleted`, `peer deletion applied`), no repair commits the
//!   block's metadata again (`commit decided` with `decision=commit`), unless another
//!   deletion of it, or of the whole replica (`command run` of a `DeleteContainer` that
//!   ran), follows. Judged at the end of the run, as the scenarios judge it at quiescence.
//!   The cluster scenarios' **every deleted block deleted everywhere** is judged the same
//!   way over every replica of the run: a block one replica deleted and a repair made
//!   live again is a deleted block live somewhere (what the events cannot show, a replica
//!   that never received the deletion, stays unjudged).
//! - **block metadata only with its file**: no block ends the run with metadata whose
//!   file is gone. Metadata comes with a commit and goes with a deletion; a file comes
//!   with a pulled chunk (`chunk pulled`) and goes with a deletion, with `pulled chunks
//!   removed` down to nothing (`kept=0`, `cut=true`), or when the commit finds it gone
//!   (`block file not found` with `committed=true`). A block the log never wrote or
//!   removed keeps what it had before the log began (not judged).

use std::collections::BTreeMap;

use super::judgement::{Finding, Monitor, Needed, Reads, Trail, Verdict};
use super::values::is_delete_container;
use crate::scenarios::Violation;
use crate::scenarios::cluster::{DELETED_EVERYWHERE, SEED_KEY as CLUSTER_SEED_KEY};
use crate::scenarios::container::SEED_KEY;
use crate::scenarios::container::invariants::{DELETED_BLOCK_NOT_LIVE, METADATA_WITH_FILE};
use crate::story::Event;

const DELETED: Needed = Needed::of("datanode::container", "block deleted");
const PEER_DELETED: Needed = Needed::of("datanode::container", "peer deletion applied");
const COMMITTED: Needed = Needed::of("datanode::container", "commit decided");
const REPLICA_DELETED: Needed =
    Needed::only("datanode::dispatcher", "command run", "DeleteContainer");

/// The container monitors.
pub fn monitors() -> Vec<Box<dyn Monitor>> {
    vec![
        Box::new(DeletedBlockNotLive::new(SEED_KEY, DELETED_BLOCK_NOT_LIVE)),
        Box::new(DeletedBlockNotLive::new(
            CLUSTER_SEED_KEY,
            DELETED_EVERYWHERE,
        )),
        Box::new(MetadataOnlyWithFile::default()),
    ]
}

/// A block of one replica: datanode, container, block.
type BlockKey = (String, u64, u64);

/// What an event did to a replica's block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockStep {
    /// A deletion ran: metadata and file gone.
    Deleted,
    /// A repair committed the block's metadata.
    Committed,
    /// A repair wrote a chunk to the block's file.
    ChunkPulled,
    /// The block's file lost what the repair pulled.
    FileGone,
    /// The commit found the file gone after committing the metadata.
    CommittedWithoutFile,
}

/// The block an event concerns and what it did, if it is a block event.
fn block_step(event: &Event) -> Option<(BlockKey, BlockStep)> {
    let component = event.component.as_str();
    if !component.starts_with("datanode::container") {
        return None;
    }
    let step = match (event.name.as_str(), event.text("decision")) {
        ("block deleted" | "peer deletion applied", _) => BlockStep::Deleted,
        ("commit decided", Some("commit")) => BlockStep::Committed,
        ("chunk pulled", _) => BlockStep::ChunkPulled,
        ("pulled chunks removed", _)
            if event.number("kept") == Some(0) && event.flag("cut") == Some(true) =>
        {
            BlockStep::FileGone
        }
        ("block file not found", _) if event.flag("committed") == Some(true) => {
            BlockStep::CommittedWithoutFile
        }
        _ => return None,
    };
    let key = (
        event.node.clone()?,
        event.number("container")?,
        event.number("block")?,
    );
    Some((key, step))
}

/// Whether an event of `component` named `name` may be a block event ([`block_step`]) or
/// a replica's deletion ([`replica_deleted`]).
fn wants_block_event(component: &str, name: &str) -> bool {
    (component == "datanode::dispatcher" && name == "command run")
        || (component.starts_with("datanode::container")
            && matches!(
                name,
                "block deleted"
                    | "peer deletion applied"
                    | "commit decided"
                    | "chunk pulled"
                    | "pulled chunks removed"
                    | "block file not found"
            ))
}

/// The replica a `DeleteContainer` command that ran removed: (datanode, container).
fn replica_deleted(event: &Event) -> Option<(String, u64)> {
    if event.component != "datanode::dispatcher" || event.name != "command run" {
        return None;
    }
    let command = event.text("command")?;
    let ran = event.text("outcome")? == "Executed";
    (ran && is_delete_container(command))
        .then(|| Some((event.node.clone()?, event.number("container")?)))
        .flatten()
}

fn violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: SEED_KEY,
        property,
        detail,
    }
}

/// No block is live after its deletion ran on the replica (judged at the end).
#[derive(Debug)]
pub struct DeletedBlockNotLive {
    /// Each deleted block: the step of its last deletion, and of the commit that made it
    /// live again since, if any.
    deleted: BTreeMap<BlockKey, (usize, Option<usize>)>,
    trail: Trail<BlockKey>,
    seed: &'static str,
    property: &'static str,
}

impl DeletedBlockNotLive {
    /// The monitor, reporting its violations as `property` of `seed`.
    pub fn new(seed: &'static str, property: &'static str) -> Self {
        Self {
            deleted: BTreeMap::new(),
            trail: Trail::default(),
            seed,
            property,
        }
    }
}

impl Monitor for DeletedBlockNotLive {
    fn seed(&self) -> &'static str {
        self.seed
    }

    fn property(&self) -> &'static str {
        self.property
    }

    fn observe(&mut self, event: &Event) {
        if let Some((node, container)) = replica_deleted(event) {
            self.deleted
                .retain(|(n, c, _), _| !(n == &node && *c == container));
            return;
        }
        let Some((key, step)) = block_step(event) else {
            return;
        };
        self.trail.note(&key, event.step);
        match step {
            BlockStep::Deleted => {
                self.deleted.insert(key, (event.step, None));
            }
            BlockStep::Committed | BlockStep::CommittedWithoutFile => {
                if let Some((_, restored @ None)) = self.deleted.get_mut(&key) {
                    *restored = Some(event.step);
                }
            }
            BlockStep::ChunkPulled | BlockStep::FileGone => {}
        }
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        wants_block_event(component, name)
    }

    fn reset(&mut self) {
        *self = Self {
            trail: self.trail.recycled(),
            ..Self::new(self.seed, self.property)
        };
    }

    fn violation_so_far(&self) -> Option<&Finding> {
        None
    }

    fn finish(&mut self) -> Verdict {
        let restored = self
            .deleted
            .iter()
            .filter_map(|(key, &(deleted_at, restored))| Some((key, deleted_at, restored?)))
            .min_by_key(|&(_, _, restored_at)| restored_at);
        match restored {
            Some(((node, container, block), deleted_at, restored_at)) => {
                Verdict::Violated(Finding {
                    violation: Violation {
                        seed: self.seed,
                        property: self.property,
                        detail: format!(
                            "{node} block {block} of c{container}: deleted at step {deleted_at}, committed again by a repair at step {restored_at}, and live at the end"
                        ),
                    },
                    step: restored_at,
                    evidence: self.trail.evidence(
                        &(node.clone(), *container, *block),
                        restored_at,
                        &[deleted_at],
                    ),
                })
            }
            None => Verdict::held(self.deleted.len(), "block deletion executed on a replica"),
        }
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[DELETED, PEER_DELETED, COMMITTED],
            to_break: &[DELETED, PEER_DELETED, REPLICA_DELETED],
        };
        READS
    }
}

/// Whether a block has metadata, and whether its file holds what was pulled, as far as
/// the log says.
#[derive(Debug, Clone, Copy, Default)]
struct BlockState {
    metadata: bool,
    file_gone: bool,
    /// Since when the block has metadata without its file.
    broken_since: Option<usize>,
}

/// No block ends the run with metadata and no file.
#[derive(Debug, Default)]
pub struct MetadataOnlyWithFile {
    blocks: BTreeMap<BlockKey, BlockState>,
    trail: Trail<BlockKey>,
    judged: usize,
}

impl Monitor for MetadataOnlyWithFile {
    fn seed(&self) -> &'static str {
        SEED_KEY
    }

    fn property(&self) -> &'static str {
        METADATA_WITH_FILE
    }

    fn observe(&mut self, event: &Event) {
        if let Some((node, container)) = replica_deleted(event) {
            self.blocks
                .retain(|(n, c, _), _| !(n == &node && *c == container));
            return;
        }
        let Some((key, step)) = block_step(event) else {
            return;
        };
        self.trail.note(&key, event.step);
        let block = self.blocks.entry(key).or_default();
        match step {
            BlockStep::Deleted => {
                block.metadata = false;
                block.file_gone = true;
            }
            BlockStep::Committed => {
                block.metadata = true;
                self.judged += 1;
            }
            BlockStep::ChunkPulled => block.file_gone = false,
            BlockStep::FileGone => block.file_gone = true,
            BlockStep::CommittedWithoutFile => {
                block.metadata = true;
                block.file_gone = true;
            }
        }
        let broken = block.metadata && block.file_gone;
        block.broken_since = match (broken, block.broken_since) {
            (false, _) => None,
            (true, None) => Some(event.step),
            (true, since) => since,
        };
    }

    fn wants(&self, component: &str, name: &str) -> bool {
        wants_block_event(component, name)
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
        let broken = self
            .blocks
            .iter()
            .filter_map(|(key, state)| Some((key, state.broken_since?)))
            .min_by_key(|&(_, since)| since);
        match broken {
            Some(((node, container, block), since)) => Verdict::Violated(Finding {
                violation: violation(
                    METADATA_WITH_FILE,
                    format!(
                        "{node} block {block} of c{container}: metadata committed without its file (since step {since}) at the end"
                    ),
                ),
                step: since,
                evidence: self
                    .trail
                    .evidence(&(node.clone(), *container, *block), since, &[]),
            }),
            None => Verdict::held(self.judged, "repair commit of a block"),
        }
    }

    fn reads(&self) -> Reads {
        const READS: Reads = Reads {
            to_hold: &[
                COMMITTED,
                Needed::of("datanode::container", "block file not found"),
                Needed::of("datanode::container", "pulled chunks removed"),
                DELETED,
                PEER_DELETED,
            ],
            to_break: &[
                Needed::of("datanode::container", "chunk pulled"),
                DELETED,
                PEER_DELETED,
                REPLICA_DELETED,
            ],
        };
        READS
    }
}
