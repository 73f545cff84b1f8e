//! The Ozone datanode's log (`ozone-USER-datanode-HOST.log`) and its container log
//! (`dn-container-HOST.log`), mapped onto the datanode's events: stale commands dropped by
//! `StateContext`, commands skipped or run by `DeleteContainerCommandHandler` and
//! `ReplicationSupervisor`, block deletions of `BlockDeletingTask`, the repair steps of
//! `KeyValueHandler.reconcileContainer`, replicas deleted (container log), and the
//! process's start (its `STARTUP_MSG` banner).
//!
//! Also read: a replica created (the container log), a checksum tree written
//! (`ContainerChecksumTreeManager`) and a data checksum changed (`KeyValueHandler`).
//!
//! Not in the log today: a command handed out (`getNextCommand` logs nothing), the term's
//! updates, a heartbeat's term, a command queued with its term; a close-container or
//! delete-blocks command's run. So over an unpatched datanode's log the term monitors
//! judge only through the SCMs' leadership (a log merged with the SCMs' logs) and never
//! say ok. `docs/upstream-logging.md` proposes a statement for each; the parser reads
//! them ([`PROPOSED`]), and a log that holds them decides the term monitors.

use std::collections::{BTreeMap, VecDeque};

mod statements;

use super::coverage::{Coverage, Evidence};
use super::event::{At, Emitted};
use super::layout::Line;
use super::statement::{self, Captures, number_after, trailing_number};

use statements::{
    CHECKSUM_TREE, COMMIT, DELETION, DISPATCHER, RECONCILE, REPLICA, REPLICA_SET, SCANNER,
    STATE_CONTEXT,
};
pub use statements::{Id, PROPOSED, SHOWS, STATEMENTS};

/// The datanode log's parser.
#[derive(Debug)]
pub struct Parser {
    evidence: Evidence,
    /// Each deleting task's container, by thread.
    deleting: BTreeMap<String, String>,
    starts: u64,
    partial: Vec<(&'static str, &'static str)>,
}

impl Parser {
    pub(crate) fn new() -> Self {
        Self {
            evidence: Evidence::for_statements(STATEMENTS.iter().chain(PROPOSED)),
            deleting: BTreeMap::new(),
            starts: 0,
            partial: Vec::new(),
        }
    }

    pub(crate) fn coverage(&self) -> Coverage {
        Coverage::compute(
            "ozone-datanode",
            SHOWS,
            (STATEMENTS, PROPOSED),
            &self.evidence,
            &self.partial,
        )
    }

    pub(crate) fn line(
        &mut self,
        line: &Line<'_>,
        at: At<'_>,
        out: &mut VecDeque<Emitted>,
    ) -> bool {
        self.evidence.note(line);
        let found = statement::find(STATEMENTS, line).or_else(|| {
            let (proposed, values) = statement::find(PROPOSED, line)?;
            self.evidence.note_proposed();
            Some((proposed, values))
        });
        let Some((statement, values)) = found else {
            return false;
        };
        if let Some(event) = self.event(statement.id, &values, at) {
            out.push_back(event);
        }
        true
    }

    fn event(&mut self, id: Id, v: &Captures<'_>, at: At<'_>) -> Option<Emitted> {
        match id {
            Id::Startup => {
                self.starts += 1;
                self.deleting.clear();
                let incarnation = vec![("incarnation", (self.starts - 1).to_string())];
                Some(at.event(STATE_CONTEXT, "restarted: term and queue lost", incarnation))
            }
            Id::StaleDropped => Some(at.event(
                STATE_CONTEXT,
                "command dropped as stale",
                vec![
                    ("command", v.get(0).to_owned()),
                    ("term", v.get(1).to_owned()),
                    ("current", v.get(2).to_owned()),
                ],
            )),
            Id::QueueFull => Some(at.event(STATE_CONTEXT, "command refused: queue full", vec![])),
            Id::DeletingContainer | Id::DeletingContainerV3 => {
                let container = number_after(v.get(0), " #")?;
                let thread = at.thread.to_owned();
                self.deleting.insert(thread, container.to_string());
                None
            }
            Id::DeletingBlock => Some(self.block_deleted(v, at)),
            Id::ReconcileBegins
            | Id::ChunkIngested
            | Id::BlockReconciled
            | Id::BlockPartial
            | Id::ReconcileDone => Some(repair(id, v, at)),
            Id::DeleteStaleTerm
            | Id::DeleteExpired
            | Id::TaskStaleTerm
            | Id::TaskExpired
            | Id::TaskDone
            | Id::TaskFailed
            | Id::ForceDeleted
            | Id::EmptyDeleted => {
                let event = command_run(id, v, at);
                if matches!(id, Id::TaskDone | Id::TaskFailed) && !has_field(&event, "term") {
                    // A task whose command's text carries no term (a reconcile command's,
                    // today) cannot be judged against the terms: not every run is shown.
                    self.mark_partial(DISPATCHER, "command run");
                }
                Some(event)
            }
            Id::ContainerOpened => Some(at.event(
                REPLICA_SET,
                "container created",
                vec![("container", v.get(0).trim().to_owned())],
            )),
            Id::ScanCompleted | Id::ScanCorruption => {
                let unhealthy = id == Id::ScanCorruption;
                Some(at.event(
                    SCANNER,
                    "container scanned",
                    vec![
                        ("container", v.get(0).trim().to_owned()),
                        ("unhealthy", unhealthy.to_string()),
                    ],
                ))
            }
            Id::TreeWritten => Some(at.event(
                CHECKSUM_TREE,
                "tree written",
                vec![
                    ("container", v.get(0).trim().to_owned()),
                    ("root", v.get(1).trim().to_owned()),
                ],
            )),
            Id::ChecksumUpdated | Id::ChecksumFirst => Some(at.event(
                REPLICA,
                "checksum refreshed",
                vec![
                    ("container", v.get(0).trim().to_owned()),
                    ("from", v.get(1).trim().to_owned()),
                    ("to", v.get(2).trim().to_owned()),
                ],
            )),
            Id::TermInitialized => Some(term_set(v.get(0), "init", at)),
            Id::TermUpdated => Some(term_set(v.get(1), "update", at)),
            Id::HeartbeatTermBeforeInit => {
                let name = if v.get(1).trim() == "ignored" {
                    "heartbeat term ignored before init"
                } else {
                    "heartbeat term recorded for init"
                };
                let term = vec![("term", v.get(0).trim().to_owned())];
                Some(at.event(STATE_CONTEXT, name, term))
            }
            Id::CommandAdded => Some(command_event("command queued", v.get(0), at)),
            Id::CommandHandedOut => Some(command_event("command dispatched", v.get(0), at)),
            Id::CloseProcessed | Id::DeleteBlocksProcessed | Id::DeleteContainerProcessed => {
                Some(processed(v, at))
            }
            Id::BlockFileMissing => Some(at.event(
                COMMIT,
                "block file not found",
                vec![
                    ("block", v.get(0).trim().to_owned()),
                    ("committed", (v.get(3).trim() == "committed").to_string()),
                    ("container", v.get(1).trim().to_owned()),
                    ("peer", v.get(2).trim().to_owned()),
                ],
            )),
        }
    }

    /// A block deleted by the deleting task of this thread, whose container its line
    /// before named.
    fn block_deleted(&mut self, v: &Captures<'_>, at: At<'_>) -> Emitted {
        let block =
            trailing_number(v.get(0)).map_or_else(|| v.get(0).to_owned(), |b| b.to_string());
        let mut fields = vec![("block", block)];
        match self.deleting.get(at.thread) {
            Some(container) => fields.insert(0, ("container", container.clone())),
            None => self.mark_partial(DELETION, "block deleted"),
        }
        at.event(DELETION, "block deleted", fields)
    }

    fn mark_partial(&mut self, component: &'static str, event: &'static str) {
        if !self.partial.contains(&(component, event)) {
            self.partial.push((component, event));
        }
    }
}

/// Whether `event` has the field `name`.
fn has_field(event: &Emitted, name: &str) -> bool {
    event.fields.iter().any(|(field, _)| field == name)
}

/// The datanode's term set to `term` (proposed statements).
fn term_set(term: &str, why: &str, at: At<'_>) -> Emitted {
    let fields = vec![("term", term.trim().to_owned()), ("why", why.to_owned())];
    at.event(STATE_CONTEXT, "term set", fields)
}

/// A command queued or handed out (proposed statements): the command as upstream writes
/// it, and the term its text carries.
fn command_event(name: &'static str, command: &str, at: At<'_>) -> Emitted {
    let mut fields = vec![("command", command.trim().to_owned())];
    fields.extend(number_after(command, "term: ").map(|t| ("term", t.to_string())));
    at.event(STATE_CONTEXT, name, fields)
}

/// A command a handler processed (proposed statement): its text, its term, and the
/// outcome (`done`, or `failed:` and why).
fn processed(v: &Captures<'_>, at: At<'_>) -> Emitted {
    let command = v.get(0).trim();
    let outcome = match v.get(1).trim() {
        "done" => "Executed".to_owned(),
        other => format!(
            "Failed({})",
            other.strip_prefix("failed:").unwrap_or(other).trim()
        ),
    };
    let mut fields = vec![("command", command.to_owned())];
    fields.extend(number_after(command, "term: ").map(|t| ("term", t.to_string())));
    fields.push(("outcome", outcome));
    at.event(DISPATCHER, "command run", fields)
}

/// A command skipped or run by its handler.
fn command_run(id: Id, v: &Captures<'_>, at: At<'_>) -> Emitted {
    let (command, term, outcome) = match id {
        Id::DeleteStaleTerm => (
            delete_command(v.get(0)),
            v.get(1).parse().ok(),
            stale(v.get(2)),
        ),
        Id::DeleteExpired => (delete_command(v.get(0)), None, expired(v.get(1))),
        Id::TaskStaleTerm => (
            task_command(v.get(0)),
            v.get(1).parse().ok(),
            stale(v.get(2)),
        ),
        Id::TaskExpired => (
            task_command(v.get(0)),
            task_term(v.get(0)),
            "SkippedExpired".to_owned(),
        ),
        Id::TaskDone => (
            task_command(v.get(0)),
            task_term(v.get(0)),
            "Executed".to_owned(),
        ),
        Id::TaskFailed => (
            task_command(v.get(0)),
            task_term(v.get(0)),
            "Failed(task failed)".to_owned(),
        ),
        _ => {
            let force = id == Id::ForceDeleted;
            let command = format!("{}, force: {force}", delete_command(v.get(0)));
            (command, None, "Executed".to_owned())
        }
    };
    let mut fields = vec![("command", command)];
    fields.extend(term.map(|t: u64| ("term", t.to_string())));
    fields.push(("outcome", outcome));
    at.event(DISPATCHER, "command run", fields)
}

/// A step of a reconciliation.
fn repair(id: Id, v: &Captures<'_>, at: At<'_>) -> Emitted {
    let text = |i: usize| v.get(i).to_owned();
    match id {
        Id::ReconcileBegins => at.event(
            RECONCILE,
            "reconciliation started",
            vec![("container", text(0)), ("peers", text(1))],
        ),
        Id::ChunkIngested => at.event(
            RECONCILE,
            "chunk pulled",
            vec![
                ("block", text(1)),
                ("container", text(2)),
                ("offset", text(0)),
                ("peer", text(3)),
            ],
        ),
        Id::BlockReconciled => at.event(
            COMMIT,
            "commit decided",
            vec![
                ("block", text(1)),
                ("container", text(2)),
                ("decision", "commit".to_owned()),
                ("why", "every chunk repaired".to_owned()),
            ],
        ),
        Id::BlockPartial => {
            // A block whose pull got no chunk keeps its metadata unwritten.
            let got: u64 = v.get(3).parse().unwrap_or(0);
            let decision = if got > 0 { "commit" } else { "abort" };
            at.event(
                COMMIT,
                "commit decided",
                vec![
                    ("block", text(0)),
                    ("container", text(1)),
                    ("decision", decision.to_owned()),
                    ("partial", "true".to_owned()),
                    ("why", format!("{}/{} chunks pulled", v.get(3), v.get(4))),
                ],
            )
        }
        _ => at.event(
            RECONCILE,
            "reconciliation finished",
            vec![("container", text(0))],
        ),
    }
}

/// A delete-container command as upstream names it, for the container `id`.
fn delete_command(id: &str) -> String {
    format!("deleteContainerCommand: containerID: {}", id.trim())
}

/// A replication task's command: its text without the task's status word.
fn task_command(task: &str) -> String {
    let task = task.trim();
    let command = match task.split_once(' ') {
        Some((status, rest)) if status.chars().all(|c| c.is_ascii_uppercase() || c == '_') => rest,
        _ => task,
    };
    command.to_owned()
}

/// The term a task's command text carries (`term: 3`), when it does.
fn task_term(task: &str) -> Option<u64> {
    number_after(task, "term: ")
}

fn stale(current: &str) -> String {
    format!("SkippedStaleTerm {{ current: {} }}", current.trim())
}

fn expired(now_ms: &str) -> String {
    format!("SkippedExpired {{ now_ms: {} }}", now_ms.trim())
}
