//! The protocol event log: the story's events as NDJSON, one event a line, so that a run
//! of any implementation that emits the same events can be checked offline
//! (`docs/event-log.md` documents every event and field).
//!
//! A line of schema version [`SCHEMA_VERSION`]:
//!
//! ```text
//! {"v":2,"seq":7,"time_ms":1712,"node":"dn1","thread":"endpoint scm1","component":"datanode::state_context","event":"term set","fields":{"term":3,"why":"heartbeat"}}
//! ```
//!
//! `v`, `seq` (from 1, increasing), `thread`, `component` and `event` are required;
//! `time_ms`, `node` (absent or `null` when the event names none) and `fields` (an object
//! of scalars, in the order emitted, typed as recorded: integers, booleans, strings) are
//! optional. Keys the version does not know are ignored. A line of version
//! [`OLDEST_SCHEMA_VERSION`] (every value a string) is read into typed values. The reader
//! refuses a line longer than [`MAX_LINE_BYTES`], another version, a `seq` that does not
//! increase, or anything that is not such an object, with the line's number; it never
//! panics.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use super::event::Event;
use super::json::{self, Value};
use super::lines::{BoundedLines, LineError};
use super::recorder::{EventSink, Recorder};
use super::value::FieldValue;
use crate::unmodelled::Shared;

/// The schema version this crate writes: 2, field values typed (integers and flags as
/// JSON numbers and booleans; a command's kind and container in fields of their own).
pub const SCHEMA_VERSION: u64 = 2;

/// The oldest schema version this crate reads: 1, every field value a string as the
/// component formatted it (read back into values, [`FieldValue::read`]).
pub const OLDEST_SCHEMA_VERSION: u64 = 1;

/// The longest line the reader accepts, in bytes (newline excluded).
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Appends `event` as one log line (without its newline) to `out`.
pub fn encode_line(event: &Event, time_ms: Option<u64>, out: &mut String) {
    use std::fmt::Write as _;
    // Writing to a String cannot fail.
    let _ = write!(out, "{{\"v\":{SCHEMA_VERSION},\"seq\":{}", event.step);
    if let Some(time) = time_ms {
        let _ = write!(out, ",\"time_ms\":{time}");
    }
    if let Some(node) = &event.node {
        out.push_str(",\"node\":");
        json::push_string(out, node);
    }
    for (key, text) in [
        ("thread", &event.thread),
        ("component", &event.component),
        ("event", &event.name),
    ] {
        let _ = write!(out, ",\"{key}\":");
        json::push_string(out, text);
    }
    out.push_str(",\"fields\":{");
    for (i, (name, value)) in event.fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json::push_string(out, name);
        out.push(':');
        push_value(out, value);
    }
    out.push_str("}}");
}

/// Appends a field's value as JSON: an integer as a number, a flag as a boolean, text as
/// a string.
fn push_value(out: &mut String, value: &FieldValue) {
    match value {
        FieldValue::U64(n) => super::value::push_u64(out, *n),
        FieldValue::I64(n) => {
            if *n < 0 {
                out.push('-');
            }
            super::value::push_u64(out, n.unsigned_abs());
        }
        FieldValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        FieldValue::Text(text) => json::push_string(out, text),
    }
}

/// Writes events as NDJSON to a writer: an [`EventSink`] for a [`Recorder`], a subscriber
/// of its own ([`EventLogWriter::recorder`]) that a production process installs
/// (`tracing::subscriber::set_global_default`) to log its Datanodes, SCMs, NameNodes or a
/// `MiniOzoneCluster`, or a `tracing_subscriber::Layer` beside the process's other layers.
///
/// Clones share the writer. A write error is kept (the first one) and reported by
/// [`EventLogWriter::flush`]; later events are dropped.
#[derive(Clone)]
pub struct EventLogWriter {
    inner: Shared<WriterState>,
}

struct WriterState {
    out: Box<dyn Write + Send>,
    time: Option<Box<dyn Fn() -> u64 + Send>>,
    line: String,
    lines: u64,
    error: Option<io::Error>,
}

impl fmt::Debug for EventLogWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventLogWriter")
            .field("lines", &self.lines())
            .finish_non_exhaustive()
    }
}

impl EventLogWriter {
    /// A log written to `out`.
    pub fn new(out: impl Write + Send + 'static) -> Self {
        Self {
            inner: Shared::new(WriterState {
                out: Box::new(out),
                time: None,
                line: String::new(),
                lines: 0,
                error: None,
            }),
        }
    }

    /// A log written to a new file at `path` (buffered; [`flush`](Self::flush) at the end).
    pub fn create(path: &Path) -> io::Result<Self> {
        Ok(Self::new(BufWriter::new(File::create(path)?)))
    }

    /// Stamps every line with `time_ms` read from `now_ms` (a `Clock`'s `now_ms`).
    pub fn with_time(self, now_ms: impl Fn() -> u64 + Send + 'static) -> Self {
        self.inner.with(|state| state.time = Some(Box::new(now_ms)));
        self
    }

    /// A subscriber that writes every event of this crate to this log and keeps none in
    /// memory: install it as the default subscriber of the process, or around a closure
    /// with [`Recorder::install`].
    pub fn recorder(&self) -> Recorder {
        Recorder::streaming(self.clone())
    }

    /// Lines written so far.
    pub fn lines(&self) -> u64 {
        self.inner.with(|state| state.lines)
    }

    /// Flushes the writer; the first write error, if any happened.
    pub fn flush(&self) -> io::Result<()> {
        self.inner.with(|state| {
            if let Some(error) = state.error.take() {
                return Err(error);
            }
            state.out.flush()
        })
    }
}

impl WriterState {
    fn write(&mut self, event: &Event) {
        if self.error.is_some() {
            return;
        }
        let time = self.time.as_ref().map(|now| now());
        self.line.clear();
        encode_line(event, time, &mut self.line);
        self.line.push('\n');
        match self.out.write_all(self.line.as_bytes()) {
            Ok(()) => self.lines += 1,
            Err(error) => self.error = Some(error),
        }
    }
}

impl EventSink for EventLogWriter {
    fn event(&mut self, event: &Event) {
        self.inner.with(|state| state.write(event));
    }
}

/// The log as a `tracing_subscriber` layer, beside the layers a process already has
/// (`tracing_subscriber::registry().with(fmt::layer()).with(log.clone())`): it writes
/// this crate's events and numbers them itself, in the order they reach it.
impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for EventLogWriter {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _context: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let Some(mut event) = super::recorder::event_of(event) else {
            return;
        };
        self.inner.with(|state| {
            event.step = usize::try_from(state.lines + 1).unwrap_or(usize::MAX);
            state.write(&event);
        });
    }
}

/// One line of a log, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// The event; its `step` is the line's `seq`.
    pub event: Event,
    /// The line's `time_ms`, when it has one.
    pub time_ms: Option<u64>,
    /// The line's number in the file, from 1.
    pub line: usize,
}

/// Why a log cannot be read, with the number of the line (from 1) where it went wrong.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// Reading failed.
    #[error("line {line}: cannot read: {source}")]
    Io {
        /// The line being read.
        line: usize,
        /// The error.
        source: io::Error,
    },
    /// The line is longer than [`MAX_LINE_BYTES`].
    #[error("line {line}: longer than {limit} bytes")]
    LineTooLong {
        /// The line.
        line: usize,
        /// The limit.
        limit: usize,
    },
    /// The line is not UTF-8.
    #[error("line {line}: not UTF-8")]
    NotUtf8 {
        /// The line.
        line: usize,
    },
    /// The line is not a JSON object of the log's shape.
    #[error("line {line}, byte {at}: not an event: {reason}")]
    Malformed {
        /// The line.
        line: usize,
        /// The byte offset in the line.
        at: usize,
        /// What is wrong.
        reason: String,
    },
    /// A required key is missing, or has the wrong type.
    #[error("line {line}: key `{key}` {problem}")]
    BadKey {
        /// The line.
        line: usize,
        /// The key.
        key: &'static str,
        /// `is missing`, `must be a string`, ….
        problem: &'static str,
    },
    /// The line is of another schema version.
    #[error(
        "line {line}: schema version {version}; this reader reads versions {OLDEST_SCHEMA_VERSION} to {SCHEMA_VERSION}"
    )]
    UnsupportedVersion {
        /// The line.
        line: usize,
        /// Its version.
        version: String,
    },
    /// `seq` did not increase.
    #[error("line {line}: seq {seq} after seq {previous}: a log is one run, in order")]
    SeqNotIncreasing {
        /// The line.
        line: usize,
        /// Its seq.
        seq: u64,
        /// The previous line's.
        previous: u64,
    },
}

impl From<LineError> for LogError {
    fn from(error: LineError) -> Self {
        match error {
            LineError::Io { line, source } => LogError::Io { line, source },
            LineError::TooLong { line, limit } => LogError::LineTooLong { line, limit },
        }
    }
}

impl LogError {
    /// The number of the line where reading went wrong.
    pub fn line(&self) -> usize {
        match self {
            LogError::Io { line, .. }
            | LogError::LineTooLong { line, .. }
            | LogError::NotUtf8 { line }
            | LogError::Malformed { line, .. }
            | LogError::BadKey { line, .. }
            | LogError::UnsupportedVersion { line, .. }
            | LogError::SeqNotIncreasing { line, .. } => *line,
        }
    }
}

/// Reads a log line by line: an iterator of records that ends at the first error (which
/// it yields). Blank lines are skipped.
#[derive(Debug)]
pub struct EventLogReader<R> {
    lines: BoundedLines<R>,
    previous_seq: u64,
    failed: bool,
}

impl EventLogReader<BufReader<File>> {
    /// A reader of the log file at `path`.
    pub fn open(path: &Path) -> io::Result<Self> {
        Ok(Self::new(BufReader::new(File::open(path)?)))
    }
}

impl<R: BufRead> EventLogReader<R> {
    /// A reader of the log `reader` yields.
    pub fn new(reader: R) -> Self {
        Self {
            lines: BoundedLines::new(reader, MAX_LINE_BYTES),
            previous_seq: 0,
            failed: false,
        }
    }

    /// Reads the next record into `record`, reusing its strings: false at the end of the
    /// log. After an error (which names its line), the reader reads nothing more.
    pub fn read_into(&mut self, record: &mut LogRecord) -> Result<bool, LogError> {
        if self.failed {
            return Ok(false);
        }
        let read = self.next_into(record);
        self.failed = read.is_err();
        read
    }

    fn next_into(&mut self, record: &mut LogRecord) -> Result<bool, LogError> {
        loop {
            let Some((line, bytes)) = self.lines.next_line()? else {
                return Ok(false);
            };
            let text = std::str::from_utf8(bytes).map_err(|_| LogError::NotUtf8 { line })?;
            if text.trim().is_empty() {
                continue;
            }
            parse_line_into(text, line, record)?;
            let seq = u64::try_from(record.event.step).unwrap_or(u64::MAX);
            if seq <= self.previous_seq {
                return Err(LogError::SeqNotIncreasing {
                    line,
                    seq,
                    previous: self.previous_seq,
                });
            }
            self.previous_seq = seq;
            return Ok(true);
        }
    }
}

impl<R: BufRead> Iterator for EventLogReader<R> {
    type Item = Result<LogRecord, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut record = LogRecord {
            event: Event::default(),
            time_ms: None,
            line: 0,
        };
        match self.read_into(&mut record) {
            Ok(true) => Some(Ok(record)),
            Ok(false) => None,
            Err(error) => Some(Err(error)),
        }
    }
}

/// Parses one non-blank line, number `line`.
pub fn parse_line(text: &str, line: usize) -> Result<LogRecord, LogError> {
    let mut record = LogRecord {
        event: Event::default(),
        time_ms: None,
        line,
    };
    parse_line_into(text, line, &mut record)?;
    Ok(record)
}

/// Parses one non-blank line, number `line`, into `record`, reusing its strings (a
/// reader of many lines allocates little once its record has grown).
pub fn parse_line_into(text: &str, line: usize, record: &mut LogRecord) -> Result<(), LogError> {
    let mut keys = LineKeys {
        scalars: Scalars::default(),
        fields: &mut record.event.fields,
        written: 0,
        in_fields: false,
    };
    json::parse_object(text, &mut keys).map_err(|e| LogError::Malformed {
        line,
        at: e.at,
        reason: e.reason.to_owned(),
    })?;
    let LineKeys {
        scalars, written, ..
    } = keys;
    record.event.fields.truncate(written);
    scalars.write_into(line, record)
}

/// The keys of one line the schema knows, each as the line wrote it (as a lookup by key
/// would, the first of a repeated key wins), and its first `fields` object's members
/// written into the record's fields as they are read.
struct LineKeys<'a, 'f> {
    scalars: Scalars<'a>,
    /// Where the members of the line's `fields` go, and how many are written.
    fields: &'f mut Vec<(String, FieldValue)>,
    written: usize,
    /// Whether the members read now are the first `fields` object's.
    in_fields: bool,
}

/// The line's keys other than its fields' members.
#[derive(Default)]
struct Scalars<'a> {
    version: Option<Value<'a>>,
    seq: Option<Value<'a>>,
    time_ms: Option<Value<'a>>,
    node: Option<Value<'a>>,
    thread: Option<Value<'a>>,
    component: Option<Value<'a>>,
    event: Option<Value<'a>>,
    fields: Option<Value<'a>>,
}

impl<'a> json::Visitor<'a> for LineKeys<'a, '_> {
    fn member(&mut self, parent: Option<&str>, key: std::borrow::Cow<'a, str>, value: Value<'a>) {
        if parent.is_some() {
            if self.in_fields {
                write_field(self.fields, &mut self.written, &key, value);
            }
            return;
        }
        let keys = &mut self.scalars;
        let slot = match &*key {
            "v" => &mut keys.version,
            "seq" => &mut keys.seq,
            "time_ms" => &mut keys.time_ms,
            "node" => &mut keys.node,
            "thread" => &mut keys.thread,
            "component" => &mut keys.component,
            "event" => &mut keys.event,
            "fields" => {
                self.in_fields = keys.fields.is_none() && value == Value::Object;
                &mut keys.fields
            }
            _ => return,
        };
        slot.get_or_insert(value);
    }

    fn end_object(&mut self, _key: &str) {
        self.in_fields = false;
    }
}

/// Writes one member of a line's `fields` as the field at `*written`, reusing its
/// strings; a `null` leaves the field out.
fn write_field(
    fields: &mut Vec<(String, FieldValue)>,
    written: &mut usize,
    name: &str,
    value: Value<'_>,
) {
    if value == Value::Null {
        return;
    }
    if *written == fields.len() {
        fields.push((String::new(), FieldValue::default()));
    }
    let (slot_name, slot) = &mut fields[*written];
    set_text(slot_name, name);
    match value {
        Value::Number(n) => *slot = FieldValue::read(name, n),
        Value::Bool(b) => *slot = FieldValue::Bool(b),
        Value::Str(text) => slot.emptied_text().push_str(&text),
        // A nested value past one level is refused by the parser.
        Value::Null | Value::Object => return,
    }
    *written += 1;
}

impl Scalars<'_> {
    /// Writes the line's event into `record` (its fields already written), reusing its
    /// strings.
    fn write_into(self, line: usize, record: &mut LogRecord) -> Result<(), LogError> {
        let version = match self.version {
            Some(Value::Number(n)) => n,
            Some(_) => return Err(bad(line, "v", "must be a number")),
            None => return Err(bad(line, "v", "is missing")),
        };
        let version = match version.parse::<u64>() {
            Ok(v) if (OLDEST_SCHEMA_VERSION..=SCHEMA_VERSION).contains(&v) => v,
            _ => {
                return Err(LogError::UnsupportedVersion {
                    line,
                    version: version.to_owned(),
                });
            }
        };
        let seq = number(self.seq.as_ref(), line, "seq")?
            .ok_or_else(|| bad(line, "seq", "is missing"))?;
        if seq == 0 {
            return Err(bad(line, "seq", "must be at least 1"));
        }
        let event = &mut record.event;
        event.step = usize::try_from(seq).map_err(|_| bad(line, "seq", "is too large"))?;
        record.time_ms = number(self.time_ms.as_ref(), line, "time_ms")?;
        record.line = line;
        match self.node {
            None | Some(Value::Null) => event.node = None,
            Some(Value::Str(s)) => set_text(event.node.get_or_insert_with(String::new), &s),
            Some(_) => return Err(bad(line, "node", "must be a string or null")),
        }
        set_required(&mut event.thread, self.thread, line, "thread")?;
        set_required(&mut event.component, self.component, line, "component")?;
        set_required(&mut event.name, self.event, line, "event")?;
        match self.fields {
            None | Some(Value::Object) => {}
            Some(_) => return Err(bad(line, "fields", "must be an object")),
        }
        if version == 1 {
            read_version_1_fields(&mut event.fields);
        }
        Ok(())
    }
}

/// A version 1 line wrote every value as a string: each is read back into its value
/// ([`FieldValue::read`]), a command written whole split into its kind and container.
fn read_version_1_fields(fields: &mut Vec<(String, FieldValue)>) {
    for (name, value) in fields.iter_mut() {
        if let FieldValue::Text(text) = value {
            let read = FieldValue::read(name, text);
            if !matches!(read, FieldValue::Text(_)) {
                *value = read;
            }
        }
    }
    super::command_text::split_command(fields);
}

/// Overwrites `slot` with `text`, keeping its allocation.
fn set_text(slot: &mut String, text: &str) {
    slot.clear();
    slot.push_str(text);
}

/// Writes a required string key into `slot`.
fn set_required(
    slot: &mut String,
    value: Option<Value<'_>>,
    line: usize,
    key: &'static str,
) -> Result<(), LogError> {
    match value {
        Some(Value::Str(s)) => {
            set_text(slot, &s);
            Ok(())
        }
        Some(_) => Err(bad(line, key, "must be a string")),
        None => Err(bad(line, key, "is missing")),
    }
}

fn bad(line: usize, key: &'static str, problem: &'static str) -> LogError {
    LogError::BadKey { line, key, problem }
}

/// An optional non-negative integer key.
fn number(
    value: Option<&Value<'_>>,
    line: usize,
    key: &'static str,
) -> Result<Option<u64>, LogError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .parse::<u64>()
            .map(Some)
            .map_err(|_| bad(line, key, "must be a non-negative integer")),
        Some(_) => Err(bad(line, key, "must be a number")),
    }
}
