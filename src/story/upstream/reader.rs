//! The reader of one upstream log file: bounded lines, the layout, the format's parser,
//! and the records it yields in the event log's shape (node from the file, `seq` in line
//! order, `time_ms` from the line's timestamp).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use super::coverage::Coverage;
use super::event::{At, Emitted};
use super::format::UpstreamFormat;
use super::layout::{self, Line};
use super::{hdfs_namenode, ozone_datanode, ozone_scm};
use crate::story::event::Event;
use crate::story::lines::BoundedLines;
use crate::story::log::{LogError, LogRecord};

/// The longest line the readers of upstream logs accept, in bytes (newline excluded): an
/// edit's text on a NameNode lists every block of its file.
pub const MAX_UPSTREAM_LINE_BYTES: usize = 1024 * 1024;

/// What reading a log found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Lines read.
    pub lines: usize,
    /// Lines of an accepted layout.
    pub log_lines: usize,
    /// Lines that matched a statement the format maps.
    pub matched: usize,
}

impl ReadStats {
    /// Lines skipped: not of the layout, or of no statement the format maps.
    pub fn skipped(&self) -> usize {
        self.lines - self.matched
    }
}

/// A format's parser, fed the log's lines in order.
#[derive(Debug)]
pub(crate) enum Parser {
    OzoneDatanode(ozone_datanode::Parser),
    OzoneScm(ozone_scm::Parser),
    HdfsNamenode(hdfs_namenode::Parser),
}

impl Parser {
    fn new(format: UpstreamFormat) -> Self {
        match format {
            UpstreamFormat::OzoneDatanode => Parser::OzoneDatanode(ozone_datanode::Parser::new()),
            UpstreamFormat::OzoneScm => Parser::OzoneScm(ozone_scm::Parser::new()),
            UpstreamFormat::HdfsNamenode => Parser::HdfsNamenode(hdfs_namenode::Parser::new()),
        }
    }

    /// Takes one log line; whether it matched a statement.
    fn line(&mut self, line: &Line<'_>, at: At<'_>, out: &mut VecDeque<Emitted>) -> bool {
        match self {
            Parser::OzoneDatanode(p) => p.line(line, at, out),
            Parser::OzoneScm(p) => p.line(line, at, out),
            Parser::HdfsNamenode(p) => p.line(line, at, out),
        }
    }

    fn finish(&mut self, out: &mut VecDeque<Emitted>) {
        if let Parser::HdfsNamenode(p) = self {
            p.finish(out);
        }
    }

    fn coverage(&self) -> Coverage {
        match self {
            Parser::OzoneDatanode(p) => p.coverage(),
            Parser::OzoneScm(p) => p.coverage(),
            Parser::HdfsNamenode(p) => p.coverage(),
        }
    }
}

/// Reads one process's log of an upstream format: an iterator of records, as the event
/// log's reader yields them, that ends at the first error (which it yields). A line of
/// no statement the format maps is skipped and counted ([`UpstreamReader::stats`]).
#[derive(Debug)]
pub struct UpstreamReader<R> {
    lines: BoundedLines<R>,
    parser: Parser,
    node: String,
    queue: VecDeque<Emitted>,
    seq: usize,
    stats: ReadStats,
    done: bool,
    failed: bool,
}

impl UpstreamReader<BufReader<File>> {
    /// A reader of the log file at `path`, of process `node`.
    pub fn open(format: UpstreamFormat, node: &str, path: &Path) -> std::io::Result<Self> {
        Ok(Self::new(format, node, BufReader::new(File::open(path)?)))
    }
}

impl<R: BufRead> UpstreamReader<R> {
    /// A reader of the log `reader` yields, written by process `node` in `format`.
    pub fn new(format: UpstreamFormat, node: &str, reader: R) -> Self {
        Self {
            lines: BoundedLines::new(reader, MAX_UPSTREAM_LINE_BYTES),
            parser: Parser::new(format),
            node: node.to_owned(),
            queue: VecDeque::new(),
            seq: 0,
            stats: ReadStats::default(),
            done: false,
            failed: false,
        }
    }

    /// What was read so far.
    pub fn stats(&self) -> ReadStats {
        self.stats
    }

    /// What this log shows of each event (final once the reader is exhausted).
    pub fn coverage(&self) -> Coverage {
        self.parser.coverage()
    }

    /// Reads lines until the parser has an event, or the end.
    fn fill(&mut self) -> Result<(), LogError> {
        while self.queue.is_empty() && !self.done {
            let Some((number, bytes)) = self.lines.next_line()? else {
                self.parser.finish(&mut self.queue);
                self.done = true;
                break;
            };
            self.stats.lines += 1;
            let text =
                std::str::from_utf8(bytes).map_err(|_| LogError::NotUtf8 { line: number })?;
            let Some(line) = layout::parse(text) else {
                continue;
            };
            self.stats.log_lines += 1;
            let at = At {
                line: number,
                time_ms: line.time_ms,
                thread: line.thread,
            };
            if self.parser.line(&line, at, &mut self.queue) {
                self.stats.matched += 1;
            }
        }
        Ok(())
    }

    fn record(&mut self, emitted: Emitted) -> LogRecord {
        self.seq += 1;
        LogRecord {
            event: Event {
                step: self.seq,
                thread: emitted.thread,
                node: Some(self.node.clone()),
                component: emitted.component.to_owned(),
                name: emitted.name.to_owned(),
                fields: emitted.fields,
            },
            time_ms: Some(emitted.time_ms),
            line: emitted.line,
        }
    }
}

impl<R: BufRead> Iterator for UpstreamReader<R> {
    type Item = Result<LogRecord, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if let Err(error) = self.fill() {
            self.failed = true;
            return Some(Err(error));
        }
        let emitted = self.queue.pop_front()?;
        Some(Ok(self.record(emitted)))
    }
}
