//! The monitors over recorded logs, as `cargo soak check-log` runs them: an event log
//! (`docs/event-log.md`), or upstream's own logs (`story::upstream`), one file or several
//! processes' files merged into one run by their timestamps. One pass feeds every record
//! to a [`MonitorSet`] and keeps nothing but the monitors' own state (per datanode,
//! replica block or NameNode block, with at most a few dozen steps of evidence each), so
//! memory grows with what the run touched, not with the log's length; a second pass, only
//! for a violation, reads back the events it names as evidence, to print them as a step
//! table. Over upstream logs, a verdict the logs cannot support (they do not show every
//! event it rests on) is undecided ([`super::coverage`]).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::MonitorSet;
use super::coverage::judge_with_coverage;
use super::judgement::{Finding, Judgement};
use crate::story::upstream::{Coverage, ReadStats, node_from_file_name};
use crate::story::{AnyLogReader, Event, EventLogReader, LogError, LogFormat, LogRecord, Story};

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
    /// An event log cannot be merged with other logs: it is a whole run already.
    #[error("{path}: an event log is a whole run; only upstream logs are merged")]
    NotMergeable {
        /// The file.
        path: PathBuf,
    },
}

/// A log to read: its format, its file, and the process an upstream log is of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSource {
    /// The format.
    pub format: LogFormat,
    /// The file.
    pub path: PathBuf,
    /// The process (an upstream log's events get it as their node).
    pub node: String,
}

impl LogSource {
    /// The file at `path` in `format`, of the process its name names
    /// ([`node_from_file_name`]).
    pub fn new(format: LogFormat, path: &Path) -> Self {
        Self {
            format,
            path: path.to_owned(),
            node: node_from_file_name(path),
        }
    }

    /// The same, of process `node`.
    pub fn with_node(self, node: &str) -> Self {
        Self {
            node: node.to_owned(),
            ..self
        }
    }
}

/// What checking a log found.
#[derive(Debug, Clone)]
pub struct LogCheck {
    /// Events read.
    pub events: usize,
    /// Every monitor's verdict.
    pub judgements: Vec<Judgement>,
    /// For upstream logs, the lines read, and how many matched a statement (summed over
    /// the files of a merged run).
    pub lines: Option<ReadStats>,
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
        lines: None,
    })
}

/// Runs every monitor over the event log `reader` yields (read line by line into one
/// record).
pub fn check_reader(reader: impl BufRead) -> Result<LogCheck, LogError> {
    let mut reader = EventLogReader::new(reader);
    let mut set = MonitorSet::all();
    let mut record = LogRecord {
        event: Event::default(),
        time_ms: None,
        line: 0,
    };
    while reader.read_into(&mut record)? {
        set.observe(&record.event);
    }
    Ok(finish(&mut set, &[], None))
}

/// Runs every monitor over the log `reader` yields, in `format` (of process `node`, for
/// an upstream log), with the verdicts the log can support.
pub fn check_reader_as(
    format: LogFormat,
    node: &str,
    reader: impl BufRead,
) -> Result<LogCheck, LogError> {
    let mut records = AnyLogReader::new(format, node, reader);
    let mut set = MonitorSet::all();
    for record in records.by_ref() {
        set.observe(&record?.event);
    }
    let coverages: Vec<Coverage> = records.coverage().into_iter().collect();
    Ok(finish(&mut set, &coverages, records.stats()))
}

/// Runs every monitor over the event log file at `path`.
pub fn check_log(path: &Path) -> Result<LogCheck, CheckLogError> {
    check_run(&[LogSource::new(LogFormat::Ndjson, path)])
}

/// Runs every monitor over one run: one log, or several upstream logs merged by their
/// timestamps (a tie keeps the order the sources are given in; the events are numbered
/// afresh in the merged order). The processes' clocks must agree for the order to be
/// the run's.
pub fn check_run(sources: &[LogSource]) -> Result<LogCheck, CheckLogError> {
    LogChecker::default().check_run(sources)
}

/// A checker of many runs, one after the other, with one set of monitors and one record
/// read into for all (what `check-log` uses over thousands of small logs: a run costs its
/// events, not a fresh set of monitors and an allocation per line).
///
/// ```no_run
/// use hadoop_ref::check::monitor::offline::{LogChecker, LogSource};
/// use hadoop_ref::story::LogFormat;
///
/// let mut checker = LogChecker::default();
/// for path in ["a.ndjson", "b.ndjson"] {
///     let check = checker.check_run(&[LogSource::new(LogFormat::Ndjson, path.as_ref())])?;
///     println!("{path}: {} events", check.events);
/// }
/// # Ok::<(), hadoop_ref::check::monitor::offline::CheckLogError>(())
/// ```
#[derive(Debug)]
pub struct LogChecker {
    set: MonitorSet,
    record: LogRecord,
}

impl Default for LogChecker {
    fn default() -> Self {
        Self {
            set: MonitorSet::all(),
            record: LogRecord {
                event: Event::default(),
                time_ms: None,
                line: 0,
            },
        }
    }
}

impl LogChecker {
    /// [`check_run`], with this checker's monitors, made new for the run.
    pub fn check_run(&mut self, sources: &[LogSource]) -> Result<LogCheck, CheckLogError> {
        self.set.reset_every();
        if let [source] = sources
            && source.format == LogFormat::Ndjson
        {
            return self.check_event_log(source);
        }
        let mut run = Run::open(sources)?;
        while let Some(record) = run.next_record()? {
            self.set.observe(&record.event);
        }
        let (coverages, stats) = run.coverages_and_stats();
        Ok(finish(&mut self.set, &coverages, stats))
    }

    /// One event log, read line by line into the checker's record.
    fn check_event_log(&mut self, source: &LogSource) -> Result<LogCheck, CheckLogError> {
        let file = File::open(&source.path).map_err(|error| CheckLogError::Open {
            path: source.path.clone(),
            source: error,
        })?;
        let mut reader = EventLogReader::new(BufReader::new(file));
        let read = |reader: &mut EventLogReader<_>, record: &mut LogRecord| {
            reader
                .read_into(record)
                .map_err(|error| CheckLogError::Log {
                    path: source.path.clone(),
                    source: error,
                })
        };
        while read(&mut reader, &mut self.record)? {
            self.set.observe(&self.record.event);
        }
        Ok(finish(&mut self.set, &[], None))
    }
}

fn finish(set: &mut MonitorSet, coverages: &[Coverage], lines: Option<ReadStats>) -> LogCheck {
    let events = set.events();
    let reads = set.reads();
    let judgements = set.finish();
    let judgements = if lines.is_some() {
        judge_with_coverage(judgements, &reads, coverages)
    } else {
        judgements
    };
    LogCheck {
        events,
        judgements,
        lines,
    }
}

/// The events of the event log file at `path` that `finding` names as its evidence, as a
/// story (their steps are the log's, with gaps).
pub fn evidence_story(path: &Path, finding: &Finding) -> Result<Story, CheckLogError> {
    evidence_of_run(&[LogSource::new(LogFormat::Ndjson, path)], finding)
}

/// The events of the run read from `sources` (as [`check_run`] reads it) that `finding`
/// names as its evidence.
pub fn evidence_of_run(sources: &[LogSource], finding: &Finding) -> Result<Story, CheckLogError> {
    let wanted: BTreeSet<usize> = finding.evidence.iter().copied().collect();
    let mut events = Vec::new();
    let mut run = Run::open(sources)?;
    while let Some(record) = run.next_record()? {
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

/// One open log of a run, and its next record.
struct Source {
    path: PathBuf,
    reader: AnyLogReader<BufReader<File>>,
    next: Option<LogRecord>,
}

/// The records of a run, one log or several merged.
struct Run {
    sources: Vec<Source>,
    merged: bool,
    seq: usize,
}

impl Run {
    fn open(sources: &[LogSource]) -> Result<Self, CheckLogError> {
        let merged = sources.len() > 1;
        let mut open = Vec::with_capacity(sources.len());
        for source in sources {
            if merged && source.format == LogFormat::Ndjson {
                return Err(CheckLogError::NotMergeable {
                    path: source.path.clone(),
                });
            }
            let reader =
                AnyLogReader::open(source.format, &source.node, &source.path).map_err(|error| {
                    CheckLogError::Open {
                        path: source.path.clone(),
                        source: error,
                    }
                })?;
            let mut source = Source {
                path: source.path.clone(),
                reader,
                next: None,
            };
            source.advance()?;
            open.push(source);
        }
        Ok(Self {
            sources: open,
            merged,
            seq: 0,
        })
    }

    /// The next record of the run: the earliest of the sources' next ones.
    fn next_record(&mut self) -> Result<Option<LogRecord>, CheckLogError> {
        let earliest = self
            .sources
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.next.as_ref().map(|r| (r.time_ms.unwrap_or(0), i)))
            .min();
        let Some((_, index)) = earliest else {
            return Ok(None);
        };
        let source = &mut self.sources[index];
        let Some(mut record) = source.next.take() else {
            return Ok(None);
        };
        source.advance()?;
        if self.merged {
            self.seq += 1;
            record.event.step = self.seq;
        }
        Ok(Some(record))
    }

    /// The upstream logs' coverages, and their lines summed (`None` for an event log).
    fn coverages_and_stats(&self) -> (Vec<Coverage>, Option<ReadStats>) {
        let mut coverages = Vec::new();
        let mut total: Option<ReadStats> = None;
        for source in &self.sources {
            coverages.extend(source.reader.coverage());
            if let Some(stats) = source.reader.stats() {
                let sum = total.get_or_insert_with(ReadStats::default);
                sum.lines += stats.lines;
                sum.log_lines += stats.log_lines;
                sum.matched += stats.matched;
            }
        }
        (coverages, total)
    }
}

impl Source {
    fn advance(&mut self) -> Result<(), CheckLogError> {
        self.next = self
            .reader
            .next()
            .transpose()
            .map_err(|source| CheckLogError::Log {
                path: self.path.clone(),
                source,
            })?;
        Ok(())
    }
}
