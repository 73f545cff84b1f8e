//! The Ozone SCM's log (`ozone-USER-scm-HOST.log`), mapped onto the SCM's events: its
//! leadership as `SCMContext` records it (the SCM believes it leads, in which term, and
//! when it stops believing so), its readiness, its starts, and `ContainerManagerImpl`'s
//! allocations.
//!
//! Not in the log: the pending buckets, the storage reports' slots, the replicated log's
//! entries; a datanode's room is in no SCM line at all. So the allocation monitor never
//! judges an SCM log, and the SCMs' leadership serves the term monitors only merged with
//! the datanodes' logs. Nor, today, a container's pipeline datanodes, the container
//! reports processed, the containers' state changes, or a replication manager pass that
//! found nothing to do: `docs/upstream-logging.md` proposes a statement for each
//! ([`PROPOSED`]), which the replication factor's monitor needs.

use std::collections::VecDeque;

use super::coverage::{Basis, Coverage, Evidence, Shows};
use super::event::{At, Emitted};
use super::layout::{Level, Line};
use super::statement::{self, Captures, Statement, list_items, trailing_number};

const LEADERSHIP: &str = "scm::container_manager::leadership";
const MANAGER: &str = "scm::container_manager";
/// The events a scenario states; a settled replication manager pass stands for its
/// quiescence.
const SCENARIO: &str = "scenarios::cluster";

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
    /// Proposed (`docs/upstream-logging.md`), `ContainerManagerImpl`: a container
    /// allocated on a pipeline, with its datanodes.
    AllocatedOn,
    /// Proposed, `ContainerReportHandler`: a datanode's full container report processed.
    ContainerReportProcessed,
    /// Proposed, `IncrementalContainerReportHandler`: an incremental report processed.
    IncrementalReportProcessed,
    /// Proposed, `ContainerStateManagerImpl`: a container's state changed.
    StateChanged,
    /// Proposed, `ReplicationManager`: a pass, with what it found to do.
    PassDone,
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

/// The statements `docs/upstream-logging.md` proposes upstream add, as this format reads
/// them: none is in upstream's code today (the pass's is its existing INFO line with the
/// pass's findings added).
pub const PROPOSED: &[Statement<Id>] = &[
    Statement {
        id: Id::AllocatedOn,
        class: "ContainerManagerImpl",
        level: Level::Debug,
        template: "Allocated container {} on pipeline {} with datanodes {}.",
        yields: &[(MANAGER, "slots reserved")],
    },
    Statement {
        id: Id::ContainerReportProcessed,
        class: "ContainerReportHandler",
        level: Level::Debug,
        template: "Processed container report from datanode {} with containers {}.",
        yields: &[(MANAGER, "container report processed")],
    },
    Statement {
        id: Id::IncrementalReportProcessed,
        class: "IncrementalContainerReportHandler",
        level: Level::Debug,
        template: "Processed container report from datanode {} with containers {}.",
        yields: &[(MANAGER, "container report processed")],
    },
    Statement {
        id: Id::StateChanged,
        class: "ContainerStateManagerImpl",
        level: Level::Debug,
        template: "Container {} state changed from {} to {}.",
        yields: &[(MANAGER, "container state updated")],
    },
    Statement {
        id: Id::PassDone,
        class: "ReplicationManager",
        level: Level::Info,
        template: "Replication Monitor Thread took {} milliseconds for processing {} containers: {} under replicated, {} over replicated, {} pending replica operations.",
        yields: &[(SCENARIO, "cluster quiescent")],
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
    Shows {
        component: MANAGER,
        event: "slots reserved",
        only: None,
        basis: Basis::Proposed {
            today: &[],
            proposed: &[Id::AllocatedOn],
        },
        how: "a new container's line names its pipeline, not the pipeline's datanodes",
    },
    Shows {
        component: MANAGER,
        event: "container report processed",
        only: None,
        basis: Basis::Proposed {
            today: &[],
            proposed: &[Id::ContainerReportProcessed, Id::IncrementalReportProcessed],
        },
        how: "the report handlers log nothing of a report they processed",
    },
    Shows {
        component: MANAGER,
        event: "container state updated",
        only: None,
        basis: Basis::Proposed {
            today: &[],
            proposed: &[Id::StateChanged],
        },
        how: "ContainerStateManagerImpl logs no state change",
    },
    Shows {
        component: SCENARIO,
        event: "cluster quiescent",
        only: None,
        basis: Basis::Proposed {
            today: &[],
            proposed: &[Id::PassDone],
        },
        how: "a run's quiescence is no log line; a replication manager pass does not say what it found",
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
            evidence: Evidence::for_statements(STATEMENTS.iter().chain(PROPOSED)),
            leading: None,
        }
    }

    pub(crate) fn coverage(&self) -> Coverage {
        Coverage::compute(
            "ozone-scm",
            SHOWS,
            (STATEMENTS, PROPOSED),
            &self.evidence,
            &[],
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
            Id::AllocatedOn => {
                let datanodes = list_items(v.get(2));
                at.event(
                    MANAGER,
                    "slots reserved",
                    vec![
                        ("container", container_of(v.get(0))),
                        ("datanodes", datanodes.join(",")),
                        ("pipeline", v.get(1).trim().to_owned()),
                    ],
                )
            }
            Id::ContainerReportProcessed | Id::IncrementalReportProcessed => {
                let containers: Vec<String> = list_items(v.get(1))
                    .iter()
                    .map(|c| container_of(c))
                    .collect();
                let confirmed = if containers.is_empty() {
                    "-".to_owned()
                } else {
                    containers.join(",")
                };
                at.event(
                    MANAGER,
                    "container report processed",
                    vec![("confirmed", confirmed), ("datanode", host_of(v.get(0)))],
                )
            }
            Id::StateChanged => at.event(
                MANAGER,
                "container state updated",
                vec![
                    ("container", container_of(v.get(0))),
                    ("state", v.get(2).trim().to_owned()),
                ],
            ),
            Id::PassDone => {
                let settled = [v.get(2), v.get(3), v.get(4)]
                    .iter()
                    .all(|n| n.trim() == "0");
                if !settled {
                    return None;
                }
                let why = "a replication manager pass found nothing under or over replicated and nothing pending";
                at.event(SCENARIO, "cluster quiescent", vec![("why", why.to_owned())])
            }
        })
    }
}

/// A datanode as upstream writes it (`DatanodeDetails`: `uuid(host/ip)`): its host, the
/// name its own log's file carries; the text as written when it has no host.
fn host_of(details: &str) -> String {
    let details = details.trim();
    details
        .split_once('(')
        .and_then(|(_, rest)| rest.split(['/', ')']).next())
        .filter(|host| !host.is_empty())
        .unwrap_or(details)
        .to_owned()
}

/// The container a `ContainerInfo{id=#5, ...}` or a `ContainerID` (`#5`, `5`) names.
fn container_of(info: &str) -> String {
    text_after(info, "id=")
        .and_then(|id| trailing_number(&id))
        .or_else(|| trailing_number(info))
        .map_or_else(|| info.trim().to_owned(), |id| id.to_string())
}

/// The text after `key` up to the next `,` or `}`.
fn text_after(text: &str, key: &str) -> Option<String> {
    let (_, rest) = text.split_once(key)?;
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(rest[..end].trim().to_owned())
}
