//! What a log of an upstream process can show of the events, so that a monitor lacking an
//! event says undecided instead of ok.
//!
//! Each format declares, per event, how upstream logs it ([`Basis`]): every occurrence
//! writes a line of given statements, only some occurrences do, upstream has no such
//! step, or nothing is logged. Whether a statement's lines are in a given log depends on
//! the level its logger was set to: a statement at WARN or above is taken as logged (no
//! shipped configuration raises a logger above WARN); one below is taken as logged only
//! when the log holds a line of that logger at that level or finer (the [`Evidence`]),
//! since a level left at INFO leaves no trace but the missing lines. A parser may also
//! find, while reading, that some occurrences went unseen (a corrupt mark while the
//! NameNode's HA state is not known) and mark the event partial in that log.
//!
//! Some events upstream does not log at all today; `docs/upstream-logging.md` proposes
//! the statement that would log each, and every format reads its proposed statements
//! (`PROPOSED`) beside the real ones. A proposed statement counts as logged only in a log
//! that holds a line of one of its format's proposed statements (the process runs a build
//! that has them: the proposals of one process are taken to land together), and then by
//! the same rule of levels as a real statement. A log of an unpatched upstream holds no
//! such line, so there the events only proposals would show stay unlogged.

use super::layout::{Level, Line};
use super::statement::Statement;

/// How much of an event a log shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shown {
    /// None of its occurrences.
    Nothing,
    /// Some of its occurrences, not all.
    Some,
    /// Every occurrence (or upstream has no such step).
    Every,
}

impl Shown {
    /// `every`, `some`, `none`.
    pub fn word(self) -> &'static str {
        match self {
            Shown::Every => "every",
            Shown::Some => "some",
            Shown::Nothing => "none",
        }
    }
}

/// How upstream logs an event.
#[derive(Debug, Clone, Copy)]
pub enum Basis<I: 'static> {
    /// Every occurrence writes a line of these statements (all must be logged).
    Logged(&'static [I]),
    /// Some occurrences write a line of these statements; others write none.
    Partly(&'static [I]),
    /// Upstream has no such step: nothing is missing.
    NotInUpstream,
    /// Upstream writes no line for it.
    NotLogged,
    /// Upstream writes a line for some occurrences today (`today`, possibly none), and
    /// for every occurrence once it has the `proposed` statements
    /// (`docs/upstream-logging.md`): every occurrence is shown when all of both are
    /// logged, some when only today's are.
    Proposed {
        /// The statements upstream has today that log some occurrences.
        today: &'static [I],
        /// The proposed statements that would log the rest.
        proposed: &'static [I],
    },
}

/// One event a format knows about, and how upstream logs it.
#[derive(Debug, Clone, Copy)]
pub struct Shows<I: 'static> {
    /// The event's component.
    pub component: &'static str,
    /// The event.
    pub event: &'static str,
    /// Only the occurrences whose `command` names this kind (`DeleteContainer`), when set.
    pub only: Option<&'static str>,
    /// How upstream logs it.
    pub basis: Basis<I>,
    /// Why, in a few words (for the docs and the verdicts).
    pub how: &'static str,
}

/// The finest level seen per logger class, and over all lines.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    classes: Vec<(&'static str, Level)>,
    any: Option<Level>,
    /// Whether the log holds a line of a proposed statement.
    patched: bool,
}

impl Evidence {
    /// Evidence for the loggers of `statements` (a format's real and proposed ones).
    pub fn for_statements<'s, I: 'static>(
        statements: impl IntoIterator<Item = &'s Statement<I>>,
    ) -> Self {
        let mut classes: Vec<(&'static str, Level)> = Vec::new();
        for s in statements.into_iter().filter(|s| !s.class.is_empty()) {
            if !classes.iter().any(|(c, _)| *c == s.class) {
                classes.push((s.class, Level::Fatal));
            }
        }
        // Fatal stands for "no line yet": it is finer than nothing below it.
        Self {
            classes,
            any: None,
            patched: false,
        }
    }

    /// Notes that a line matched one of the format's proposed statements: the process
    /// runs a build that has them.
    pub fn note_proposed(&mut self) {
        self.patched = true;
    }

    /// Whether lines of the proposed `statement` would be in this log: the log holds a
    /// line of a proposed statement (a log of an unpatched upstream holds none, whatever
    /// its levels), and `statement`'s level is let through ([`Evidence::logged`]).
    pub fn logged_proposed<I>(&self, statement: &Statement<I>) -> bool {
        self.patched && self.logged(statement)
    }

    /// Notes a line.
    pub fn note(&mut self, line: &Line<'_>) {
        self.any = Some(self.any.map_or(line.level, |l| l.min(line.level)));
        let class = line.class();
        if let Some((_, finest)) = self.classes.iter_mut().find(|(c, _)| *c == class) {
            *finest = (*finest).min(line.level);
        }
    }

    /// Whether lines of `statement` would be in this log: its level is WARN or above, or
    /// its logger wrote a line at its level or finer.
    pub fn logged<I>(&self, statement: &Statement<I>) -> bool {
        if statement.level >= Level::Warn {
            return true;
        }
        let finest = if statement.class.is_empty() {
            self.any
        } else {
            self.classes
                .iter()
                .find(|(c, _)| *c == statement.class)
                .map(|(_, l)| *l)
        };
        finest.is_some_and(|l| l <= statement.level)
    }
}

/// One event's coverage in one log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Covered {
    /// The event's component.
    pub component: &'static str,
    /// The event.
    pub event: &'static str,
    /// Only occurrences whose `command` names this kind, when set.
    pub only: Option<&'static str>,
    /// How much of it the log shows.
    pub shown: Shown,
    /// Why.
    pub how: &'static str,
}

/// What one log of an upstream format shows of every event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// The format's name (`ozone-datanode`).
    pub format: &'static str,
    /// Per event.
    pub entries: Vec<Covered>,
}

impl Coverage {
    /// Computes a log's coverage from its format's table, the levels it showed, and the
    /// events its parser found partial (component, event: every kind of it). `statements` are upstream's,
    /// `proposed` the format's proposed ones.
    pub fn compute<I: Copy + PartialEq>(
        format: &'static str,
        shows: &[Shows<I>],
        (statements, proposed): (&[Statement<I>], &[Statement<I>]),
        evidence: &Evidence,
        partial: &[(&'static str, &'static str)],
    ) -> Self {
        let logged = |id: &I| match statements.iter().find(|s| s.id == *id) {
            Some(s) => evidence.logged(s),
            None => proposed
                .iter()
                .find(|s| s.id == *id)
                .is_some_and(|s| evidence.logged_proposed(s)),
        };
        let entries = shows
            .iter()
            .map(|s| {
                let mut shown = match s.basis {
                    Basis::NotInUpstream => Shown::Every,
                    Basis::NotLogged => Shown::Nothing,
                    Basis::Logged(ids) if ids.iter().all(logged) => Shown::Every,
                    Basis::Logged(ids) | Basis::Partly(ids) if ids.iter().any(logged) => {
                        Shown::Some
                    }
                    Basis::Logged(_) | Basis::Partly(_) => Shown::Nothing,
                    Basis::Proposed { today, proposed }
                        if today.iter().chain(proposed).all(logged) =>
                    {
                        Shown::Every
                    }
                    Basis::Proposed { today, .. } if today.iter().any(logged) => Shown::Some,
                    Basis::Proposed { .. } => Shown::Nothing,
                };
                // A parser finds an event partial as a whole (a line it could not place);
                // an entry for one command kind rests on its own lines.
                if s.only.is_none() && partial.contains(&(s.component, s.event)) {
                    shown = shown.min(Shown::Some);
                }
                Covered {
                    component: s.component,
                    event: s.event,
                    only: s.only,
                    shown,
                    how: s.how,
                }
            })
            .collect();
        Self { format, entries }
    }

    /// How much of the event `event` of a component starting with `component` the log
    /// shows (of the occurrences whose command is `only`, when set), and why.
    pub fn shown(
        &self,
        component: &str,
        event: &str,
        only: Option<&str>,
    ) -> (Shown, Option<&'static str>) {
        // An entry for the very kind asked about says more than one for every kind.
        let of = |kind: Option<&str>| {
            self.entries
                .iter()
                .filter(|c| c.event == event && c.component.starts_with(component))
                .filter(|c| c.only == kind)
                .map(|c| (c.shown, Some(c.how)))
                .max_by_key(|(shown, _)| *shown)
        };
        only.and_then(|kind| of(Some(kind)))
            .or_else(|| of(None))
            .unwrap_or((Shown::Nothing, None))
    }
}
