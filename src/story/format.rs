//! The log formats a run can be read from: this crate's event log, or an upstream
//! process's own log, behind one reader.

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use super::log::{EventLogReader, LogError, LogRecord};
use super::upstream::{Coverage, ReadStats, UpstreamFormat, UpstreamReader};

/// A log's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogFormat {
    /// This crate's event log (NDJSON, `docs/event-log.md`).
    Ndjson,
    /// An upstream process's own log.
    Upstream(UpstreamFormat),
}

impl LogFormat {
    /// Every format.
    pub const ALL: [LogFormat; 4] = [
        LogFormat::Ndjson,
        LogFormat::Upstream(UpstreamFormat::OzoneDatanode),
        LogFormat::Upstream(UpstreamFormat::OzoneScm),
        LogFormat::Upstream(UpstreamFormat::HdfsNamenode),
    ];

    /// Its name on the command line (`ndjson`, `ozone-datanode`, …).
    pub fn name(self) -> &'static str {
        match self {
            LogFormat::Ndjson => "ndjson",
            LogFormat::Upstream(format) => format.name(),
        }
    }

    /// The format named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

impl fmt::Display for LogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A reader of a log of any format: the records of the event log's shape.
#[derive(Debug)]
pub enum AnyLogReader<R> {
    /// An event log.
    Ndjson(EventLogReader<R>),
    /// An upstream log.
    Upstream(UpstreamReader<R>),
}

impl AnyLogReader<BufReader<File>> {
    /// A reader of the file at `path` in `format`; `node` names the process of an upstream
    /// log (an event log names its own).
    pub fn open(format: LogFormat, node: &str, path: &Path) -> std::io::Result<Self> {
        Ok(Self::new(format, node, BufReader::new(File::open(path)?)))
    }
}

impl<R: BufRead> AnyLogReader<R> {
    /// A reader of the log `reader` yields.
    pub fn new(format: LogFormat, node: &str, reader: R) -> Self {
        match format {
            LogFormat::Ndjson => AnyLogReader::Ndjson(EventLogReader::new(reader)),
            LogFormat::Upstream(format) => {
                AnyLogReader::Upstream(UpstreamReader::new(format, node, reader))
            }
        }
    }

    /// What an upstream log shows of each event (`None` for an event log: everything).
    pub fn coverage(&self) -> Option<Coverage> {
        match self {
            AnyLogReader::Ndjson(_) => None,
            AnyLogReader::Upstream(reader) => Some(reader.coverage()),
        }
    }

    /// What an upstream log's reading found (`None` for an event log).
    pub fn stats(&self) -> Option<ReadStats> {
        match self {
            AnyLogReader::Ndjson(_) => None,
            AnyLogReader::Upstream(reader) => Some(reader.stats()),
        }
    }
}

impl<R: BufRead> Iterator for AnyLogReader<R> {
    type Item = Result<LogRecord, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            AnyLogReader::Ndjson(reader) => reader.next(),
            AnyLogReader::Upstream(reader) => reader.next(),
        }
    }
}
