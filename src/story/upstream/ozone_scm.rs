//! The Ozone SCM's log (`ozone-USER-scm-HOST.log`), mapped onto the SCM's events: its
//! leadership as `SCMContext` records it (the SCM believes it leads, in which term, and
//! when it stops believing so), its readiness, its starts, and `ContainerManagerImpl`'s
//! allocations.
//!
//! Not in the log: the pending buckets, the storage reports' slots, the replicated log's
//! entries; a datanode's room is in no SCM line at all. So the allocation monitor never
//! judges an SCM log, and the SCMs' leadership serves the term monitors only merged with
//! the datanodes' logs.

use std::collections::VecDeque;

use super::coverage::{Basis, Coverage, Evidence, Shows};
use super::event::{At, Emitted};
use super::layout::{Level, Line};
use super::statement::{self, Captures, Statement, trailing_number};

const LEADERSHIP: &str = "scm::container_manager::leadership";
const MANAGER: &str = "scm::container_manager";

/// The statements this format maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Id {
    /// The process's start banner.
    Startup,
    /// `SCMContext`: leadership and term updated.
    LeaderAndTerm,
    /// `SCMContext`: leader readiness updated.
    LeaderReady,
    /// `ContainerManagerImpl`: a container allocated.
    Allocated,
    /// `ContainerManagerImpl`: a pipeline without room.
    NoRoom,
    /// `ContainerManagerImpl`: an allocation failed.
    AllocationFailed,
}

/// Every statement mapped, with its class, level and format.
pub const STATEMENTS: &[Statement<Id>] = &[
    Statement {
        id: Id::Startup,
        class: "",
        level: Level::Info,
        template: "STARTUP_MSG:{}",
        yields: &[(MANAGER, "started")],
    },
    Statement {
        id: Id::LeaderAndTerm,
        class: "SCMContext",
        level: Level::Info,
        template: "update <isLeader,term> from <{},{}> to <{},{}>",
        yields: &[(LEADERSHIP, "became leader"), (LEADERSHIP, "stepped down")],
    },
    Statement {
        id: Id::LeaderReady,
        class: "SCMContext",
        level: Level::Info,
        template: "update <isLeaderReady> from <{}> to <{}>",
        yields: &[(LEADERSHIP, "leader ready")],
    },
    Statement {
        id: Id::Allocated,
        class: "ContainerManagerImpl",
        level: Level::Trace,
        template: "New container allocated: {}",
        yields: &[(MANAGER, "allocation granted")],
    },
    Statement {
        id: Id::NoRoom,
        class: "ContainerManagerImpl",
        level: Level::Debug,
        template: "Cannot allocate a new container because pipeline {} does not have enough space.",
        yields: &[(MANAGER, "allocation refused")],
    },
    Statement {
        id: Id::AllocationFailed,
        class: "ContainerManagerImpl",
        level: Level::Warn,
        template: "Container allocation failed on pipeline={}",
        yields: &[(MANAGER, "allocation refused")],
    },
];

/// How the SCM's log shows each event the monitors read.
pub const SHOWS: &[Shows<Id>] = &[
    Shows {
        component: MANAGER,
        event: "started",
        only: None,
        basis: Basis::Logged(&[Id::Startup]),
        how: "every start writes its STARTUP_MSG banner",
    },
    Shows {
        component: LEADERSHIP,
        event: "became leader",
        only: None,
        basis: Basis::Logged(&[Id::LeaderAndTerm]),
        how: "SCMContext INFO on every leadership change",
    },
    Shows {
        component: LEADERSHIP,
        event: "stepped down",
        only: None,
        basis: Basis::Logged(&[Id::LeaderAndTerm]),
        how: "SCMContext INFO on every leadership change",
    },
    Shows {
        component: LEADERSHIP,
        event: "leader ready",
        only: None,
        basis: Basis::Logged(&[Id::LeaderReady]),
        how: "SCMContext INFO",
    },
    Shows {
        component: MANAGER,
        event: "allocation granted",
        only: None,
        basis: Basis::Logged(&[Id::Allocated]),
        how: "ContainerManagerImpl TRACE",
    },
    Shows {
        component: MANAGER,
        event: "allocation refused",
        only: None,
        basis: Basis::Partly(&[Id::NoRoom, Id::AllocationFailed]),
        how: "a pipeline without room (DEBUG) or a failed submit (WARN); safe mode and leadership refusals are not logged there",
    },
];

/// The SCM log's parser.
#[derive(Debug)]
pub struct Parser {
    evidence: Evidence,
    /// The term of the leadership the SCM believes in, if it does.
    leading: Option<String>,
}

impl Parser {
    pub(crate) fn new() -> Self {
        Self {
            evidence: Evidence::for_statements(STATEMENTS),
            leading: None,
        }
    }

    pub(crate) fn coverage(&self) -> Coverage {
        Coverage::compute("ozone-scm", SHOWS, STATEMENTS, &self.evidence, &[])
    }

    pub(crate) fn line(
        &mut self,
        line: &Line<'_>,
        at: At<'_>,
        out: &mut VecDeque<Emitted>,
    ) -> bool {
        self.evidence.note(line);
        let Some((statement, values)) = statement::find(STATEMENTS, line) else {
            return false;
        };
        if let Some(event) = self.event(statement.id, &values, at) {
            out.push_back(event);
        }
        true
    }

    fn event(&mut self, id: Id, v: &Captures<'_>, at: At<'_>) -> Option<Emitted> {
        Some(match id {
            Id::Startup => {
                self.leading = None;
                at.event(MANAGER, "started", vec![])
            }
            Id::LeaderAndTerm => {
                let (was, now, term) = (v.get(0) == "true", v.get(2) == "true", v.get(3));
                if now {
                    self.leading = Some(term.to_owned());
                    at.event(LEADERSHIP, "became leader", vec![("term", term.to_owned())])
                } else if was {
                    self.leading = None;
                    at.event(
                        LEADERSHIP,
                        "stepped down",
                        vec![("term", v.get(1).to_owned())],
                    )
                } else {
                    return None;
                }
            }
            Id::LeaderReady => {
                let term = self.leading.clone().filter(|_| v.get(1) == "true")?;
                at.event(LEADERSHIP, "leader ready", vec![("term", term)])
            }
            Id::Allocated => {
                let info = v.get(0);
                let mut fields = vec![("container", container_of(info))];
                fields.extend(text_after(info, "pipelineID=").map(|p| ("pipeline", p)));
                fields.extend(self.leading.clone().map(|t| ("term", t)));
                at.event(MANAGER, "allocation granted", fields)
            }
            Id::NoRoom | Id::AllocationFailed => {
                let why = if id == Id::NoRoom {
                    "no room"
                } else {
                    "submit failed"
                };
                let pipeline = text_after(v.get(0), "Id: ").unwrap_or_else(|| v.get(0).to_owned());
                at.event(
                    MANAGER,
                    "allocation refused",
                    vec![("pipeline", pipeline), ("why", why.to_owned())],
                )
            }
        })
    }
}

/// The container a `ContainerInfo{id=#5, ...}` names.
fn container_of(info: &str) -> String {
    text_after(info, "id=")
        .and_then(|id| trailing_number(&id))
        .map_or_else(|| info.to_owned(), |id| id.to_string())
}

/// The text after `key` up to the next `,` or `}`.
fn text_after(text: &str, key: &str) -> Option<String> {
    let (_, rest) = text.split_once(key)?;
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(rest[..end].trim().to_owned())
}
