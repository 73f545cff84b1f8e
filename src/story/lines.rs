//! Bounded line reading, shared by the event log's reader and the readers of upstream's
//! log files: a line is read up to a byte limit (never whole when it is longer), its
//! newline and a `\r` before it dropped, and counted, so that every error names its line.

use std::io::{self, BufRead, Read};

/// Why a line could not be read.
#[derive(Debug)]
pub(crate) enum LineError {
    /// Reading failed.
    Io {
        /// The line being read.
        line: usize,
        /// The error.
        source: io::Error,
    },
    /// The line is longer than the limit.
    TooLong {
        /// The line.
        line: usize,
        /// The limit.
        limit: usize,
    },
}

/// Reads `reader` one line at a time, each at most `limit` bytes.
#[derive(Debug)]
pub(crate) struct BoundedLines<R> {
    reader: R,
    limit: usize,
    line: usize,
    buf: Vec<u8>,
}

impl<R: BufRead> BoundedLines<R> {
    /// Lines of `reader`, each at most `limit` bytes (newline excluded).
    pub(crate) fn new(reader: R, limit: usize) -> Self {
        Self {
            reader,
            limit,
            line: 0,
            buf: Vec::new(),
        }
    }

    /// The next line's number (from 1) and bytes, without its newline; `None` at the end.
    /// A line longer than the limit is an error, and nothing past the limit is read into
    /// memory.
    pub(crate) fn next_line(&mut self) -> Result<Option<(usize, &[u8])>, LineError> {
        self.buf.clear();
        self.line += 1;
        let cap = u64::try_from(self.limit.saturating_add(1)).unwrap_or(u64::MAX);
        let read = (&mut self.reader)
            .take(cap)
            .read_until(b'\n', &mut self.buf)
            .map_err(|source| LineError::Io {
                line: self.line,
                source,
            })?;
        if read == 0 {
            return Ok(None);
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        } else if self.buf.len() > self.limit {
            return Err(self.too_long());
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        if self.buf.len() > self.limit {
            return Err(self.too_long());
        }
        Ok(Some((self.line, &self.buf)))
    }

    fn too_long(&self) -> LineError {
        LineError::TooLong {
            line: self.line,
            limit: self.limit,
        }
    }
}
