//! The monitors over a recorded event log (`docs/event-log.md`), as `cargo soak
//! check-log` runs them: one pass feeds every line to a [`MonitorSet`] and keeps nothing
//! but the monitors' own state (per datanode, replica block or NameNode block, with at
//! most a few dozen steps of evidence each), so memory grows with what the run touched,
//! not with the log's length; a second pass, only for a violation, reads back the events
//! it names as evidence, to print them as a step table.

use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::MonitorSet;
use super::judgement::{Finding, Judgement};
use crate::story::{Event, EventLogReader, LogError, LogRecord, Story};

/// Why a log file could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum CheckLogError {
    /// The file cannot be opened.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A line of the file is not an event of the log's format.
    #[error("{path}: {source}")]
    Log {
        /// The file.
        path: PathBuf,
        /// The error, with its line number.
        source: LogError,
    },
}

/// What checking a log found.
#[derive(Debug, Clone)]
pub struct LogCheck {
    /// Events read.
    pub events: usize,
    /// Every monitor's verdict.
    pub judgements: Vec<Judgement>,
}

/// Runs every monitor over `records`, in order; the first malformed line is the error.
pub fn check_records(
    records: impl IntoIterator<Item = Result<LogRecord, LogError>>,
) -> Result<LogCheck, LogError> {
    let mut set = MonitorSet::all();
    for record in records {
        set.observe(&record?.event);
    }
    Ok(LogCheck {
        events: set.events(),
        judgements: set.finish(),
    })
}

/// Runs every monitor over the log `reader` yields.
pub fn check_reader(reader: impl BufRead) -> Result<LogCheck, LogError> {
    check_records(EventLogReader::new(reader))
}

/// Runs every monitor over the log file at `path`.
pub fn check_log(path: &Path) -> Result<LogCheck, CheckLogError> {
    let reader = open(path)?;
    check_records(reader).map_err(|source| CheckLogError::Log {
        path: path.to_owned(),
        source,
    })
}

/// The events of the log file at `path` that `finding` names as its evidence, as a story
/// (their steps are the log's, with gaps).
pub fn evidence_story(path: &Path, finding: &Finding) -> Result<Story, CheckLogError> {
    let wanted: BTreeSet<usize> = finding.evidence.iter().copied().collect();
    let mut events = Vec::new();
    for record in open(path)? {
        let record = record.map_err(|source| CheckLogError::Log {
            path: path.to_owned(),
            source,
        })?;
        if record.event.step > finding.step && events.len() == wanted.len() {
            break;
        }
        if wanted.contains(&record.event.step) {
            events.push(record.event);
        }
    }
    Ok(Story {
        events,
        left_out: 0,
    })
}

/// The events of `story` that `finding` names as its evidence.
pub fn evidence_in(story: &Story, finding: &Finding) -> Story {
    let wanted: BTreeSet<usize> = finding.evidence.iter().copied().collect();
    Story {
        events: story
            .events
            .iter()
            .filter(|e: &&Event| wanted.contains(&e.step))
            .cloned()
            .collect(),
        left_out: 0,
    }
}

fn open(path: &Path) -> Result<EventLogReader<std::io::BufReader<std::fs::File>>, CheckLogError> {
    EventLogReader::open(path).map_err(|source| CheckLogError::Open {
        path: path.to_owned(),
        source,
    })
}
