//! The HDFS NameNode's log (`hadoop-USER-namenode-HOST.log`), mapped onto the NameNode's
//! events: its HA state (`FSNamesystem` starting standby or active services, the
//! catch-up's end), the replica reports `BlockManager` judges (received, queued for
//! later, judged again from the queue, stored, ignored) and the corrupt marks and
//! removals of the `BlockStateChange` log, and the edits `FSEditLogLoader` replays.
//!
//! A report's outcome is logged apart from its receipt: the parser keeps each received
//! report (block and datanode) until the line that says what became of it, and a report
//! no line judged is an event of its own (`report processed`, verdict `nothing logged`)
//! once a newer report of the same replica arrives, or at the end. Whether the NameNode
//! postpones reports (standby, and a failover's catch-up) comes from its HA lines; a
//! corrupt mark while that is unknown (a log that starts mid-run) leaves the mark's
//! `postponing` unsaid, and the log partial for it.
//!
//! Not in the log today: an active NameNode's own block changes (a client's commit,
//! complete, append, pipeline update are logged by file, not by block and genstamp), so
//! the block states come from a standby's replayed edits only (FSEditLogLoader at TRACE);
//! nor the safe-mode counts. `docs/upstream-logging.md` proposes a statement for each
//! ([`PROPOSED`]): the active's edits logged as the standby's replay writes them, and the
//! consistency check's counts.

mod edits;
mod reports;
mod statements;

use std::collections::VecDeque;

use super::coverage::{Coverage, Evidence};
use super::event::{At, Emitted};
use super::layout::Line;
use super::statement::{self, Captures};

use statements::{COMPLETION, FAILOVER, REPLAY, REPORTS, SAFE_MODE};
pub use statements::{Id, PROPOSED, SHOWS, STATEMENTS};

/// The HA state as the log tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ha {
    /// Not said yet (the log began after the process started).
    Unknown,
    /// Started, no HA services yet: not postponing.
    Starting,
    /// Standby: postponing.
    Standby,
    /// Active services starting, the catch-up running: still postponing.
    CatchingUp,
    /// Active: not postponing.
    Active,
}

/// The NameNode log's parser.
#[derive(Debug)]
pub struct Parser {
    evidence: Evidence,
    ha: Ha,
    reports: reports::Reports,
    /// Whether a report, mark or edit came while the NameNode was not known standby.
    outside_standby: bool,
    /// Whether a mark came while the HA state was unknown.
    mark_unknown_ha: bool,
}

impl Parser {
    pub(crate) fn new() -> Self {
        Self {
            evidence: Evidence::for_statements(STATEMENTS.iter().chain(PROPOSED)),
            ha: Ha::Unknown,
            reports: reports::Reports::default(),
            outside_standby: false,
            mark_unknown_ha: false,
        }
    }

    pub(crate) fn coverage(&self) -> Coverage {
        let mut partial = Vec::new();
        // The active's own edits show its block changes, when it logs them (proposed).
        let edits_logged = PROPOSED
            .iter()
            .filter(|s| s.id == Id::EditLogged)
            .all(|s| self.evidence.logged_proposed(s));
        if self.outside_standby && !edits_logged {
            partial.extend([
                (REPLAY, "edit applied"),
                (COMPLETION, "block completed"),
                ("namenode::namesystem::pipeline", "block reopened"),
            ]);
        }
        if self.mark_unknown_ha {
            partial.push((REPORTS, "replica marked corrupt"));
        }
        Coverage::compute(
            "hdfs-namenode",
            SHOWS,
            (STATEMENTS, PROPOSED),
            &self.evidence,
            &partial,
        )
    }

    pub(crate) fn finish(&mut self, out: &mut VecDeque<Emitted>) {
        self.reports.flush_all(out);
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
        self.apply(statement.id, &values, at, out);
        true
    }

    fn postponing(&self) -> bool {
        matches!(self.ha, Ha::Standby | Ha::CatchingUp)
    }

    /// Notes that a report, mark or edit came in the current HA state.
    fn note_state(&mut self, mark: bool) {
        if matches!(self.ha, Ha::Unknown | Ha::Active) {
            self.outside_standby = true;
        }
        if mark && self.ha == Ha::Unknown {
            self.mark_unknown_ha = true;
        }
    }

    fn apply(&mut self, id: Id, v: &Captures<'_>, at: At<'_>, out: &mut VecDeque<Emitted>) {
        match id {
            Id::Startup => {
                self.ha = Ha::Starting;
                self.reports.restart(at, out);
            }
            Id::StandbyServices => {
                self.ha = Ha::Standby;
                out.push_back(at.event(FAILOVER, "transition to standby", vec![]));
            }
            Id::ActiveServices => {
                self.ha = if self.postponing() {
                    Ha::CatchingUp
                } else {
                    Ha::Active
                };
                let why = "services for the active state starting".to_owned();
                out.push_back(at.event(FAILOVER, "failover: state active", vec![("why", why)]));
            }
            Id::MarkingStale => {
                self.ha = Ha::Active;
                let stale = vec![("stale_datanodes", "all".to_owned())];
                out.push_back(at.event(FAILOVER, "transition to active", stale));
            }
            Id::DrainingQueued => {
                self.ha = Ha::Active;
                let fields = vec![
                    ("after", "failover".to_owned()),
                    ("count", v.get(0).to_owned()),
                ];
                out.push_back(at.event(FAILOVER, "queued reports drained", fields));
            }
            Id::Reprocessing => self.ha = Ha::Active,
            Id::Replaying => {
                self.note_state(false);
                edits::replayed(v.get(0), at, out);
            }
            // The active's own edit: the same text, the same events as its replay.
            Id::EditLogged => edits::replayed(v.get(0), at, out),
            Id::SafeModeCheck => {
                let value = |i: usize| v.get(i).trim().to_owned();
                let fields = vec![
                    ("block_total", value(0)),
                    ("block_safe", value(1)),
                    ("recount_total", value(2)),
                    ("recount_safe", value(3)),
                    ("corrupt", value(4)),
                ];
                out.push_back(at.event(SAFE_MODE, "safe mode consistency check", fields));
            }
            _ => {
                let postponing = self.postponing();
                self.note_state(matches!(id, Id::CorruptAdded | Id::CorruptAgain));
                self.reports.apply(id, v, at, postponing, out);
            }
        }
    }
}
