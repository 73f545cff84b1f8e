//! The line layouts of Ozone's and Hadoop's log4j configurations, taken apart into time,
//! thread, level, logger and message.
//!
//! Accepted (the shipped `log4j.properties` and `dn-container-log4j2.properties`):
//!
//! | layout | where | example |
//! |---|---|---|
//! | `%d{ISO8601} [%t] %p %c: %m` | Ozone's file appenders (`%-5p`, `%c{2}` too: its console) | `2025-03-01 10:00:00,123 [main] INFO  ozone.HddsDatanodeService: ...` |
//! | `%d{ISO8601} %p %c: %m` | Hadoop's file appenders (`RFA`, `DRFA`) | `2025-03-01 10:00:00,123 INFO org.apache.hadoop.hdfs.server.namenode.FSNamesystem: ...` |
//! | `%d{yy/MM/dd HH:mm:ss} %p %c{2}: %m` | Hadoop's console appender | `25/03/01 10:00:00 INFO namenode.FSNamesystem: ...` |
//! | `%d{DEFAULT} \| %-5level \| %msg \| %throwable{3}` | the datanode's container log (`ContainerLog`) | `2025-03-01 10:00:00,123 \| INFO  \| ID=5 \| ... \| ` |
//!
//! The date may also be log4j2's ISO8601 (`T` between date and time) and its fraction may
//! follow a `.`; it is read as UTC (the layouts carry no zone), in milliseconds since the
//! epoch. A line that fits none of these (a stack trace, the rest of a multi-line
//! message) is not a log line.

/// A log level, least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// `TRACE`.
    Trace,
    /// `DEBUG`.
    Debug,
    /// `INFO`.
    Info,
    /// `WARN`.
    Warn,
    /// `ERROR`.
    Error,
    /// `FATAL`.
    Fatal,
}

impl Level {
    fn parse(word: &str) -> Option<Level> {
        Some(match word {
            "TRACE" => Level::Trace,
            "DEBUG" => Level::Debug,
            "INFO" => Level::Info,
            "WARN" => Level::Warn,
            "ERROR" => Level::Error,
            "FATAL" => Level::Fatal,
            _ => return None,
        })
    }

    /// The level's word, as log4j writes it.
    pub fn word(self) -> &'static str {
        match self {
            Level::Trace => "TRACE",
            Level::Debug => "DEBUG",
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
            Level::Fatal => "FATAL",
        }
    }
}

/// The logger the container log's lines are written by (it is not in the layout).
pub const CONTAINER_LOG: &str = "ContainerLog";

/// One log line, taken apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// Milliseconds since the epoch (the line's local time read as UTC).
    pub time_ms: u64,
    /// The thread, when the layout has one (`""` otherwise).
    pub thread: &'a str,
    /// The level.
    pub level: Level,
    /// The logger's name as written (`org.apache...StateContext`, `statemachine.StateContext`,
    /// `BlockStateChange`).
    pub logger: &'a str,
    /// The message.
    pub message: &'a str,
}

impl Line<'_> {
    /// The logger's last dotted part: the class, for a class's logger.
    pub fn class(&self) -> &str {
        self.logger.rsplit('.').next().unwrap_or(self.logger)
    }
}

/// Takes `text` apart, if it is a line of one of the accepted layouts.
pub fn parse(text: &str) -> Option<Line<'_>> {
    let (time_ms, rest) = timestamp(text)?;
    let rest = rest.strip_prefix(' ')?;
    if let Some(rest) = rest.strip_prefix("| ") {
        return container_line(time_ms, rest);
    }
    let (thread, rest) = match rest.strip_prefix('[') {
        Some(inner) => thread_and_rest(inner)?,
        None => ("", rest),
    };
    let (word, rest) = rest.split_once(' ')?;
    let level = Level::parse(word)?;
    let rest = rest.trim_start_matches(' ');
    let (logger, message) = rest.split_once(": ")?;
    if logger.is_empty() || logger.contains(' ') {
        return None;
    }
    Some(Line {
        time_ms,
        thread,
        level,
        logger,
        message,
    })
}

/// `thread] LEVEL rest`: the thread ends at the first `] ` followed by a level (a thread's
/// name may hold brackets and spaces).
fn thread_and_rest(inner: &str) -> Option<(&str, &str)> {
    let mut from = 0;
    while let Some(at) = inner[from..].find("] ") {
        let end = from + at;
        let after = &inner[end + 2..];
        let word = after.split(' ').next().unwrap_or("");
        if Level::parse(word).is_some() {
            return Some((&inner[..end], after));
        }
        from = end + 2;
    }
    None
}

/// `LEVEL | message | throwable`, the container log's layout.
fn container_line(time_ms: u64, rest: &str) -> Option<Line<'_>> {
    let (word, message) = rest.split_once(" | ")?;
    let level = Level::parse(word.trim_end())?;
    let message = message.trim_end();
    let message = message.strip_suffix('|').unwrap_or(message).trim_end();
    Some(Line {
        time_ms,
        thread: "",
        level,
        logger: CONTAINER_LOG,
        message,
    })
}

/// The line's date and time in milliseconds since the epoch, and what follows it.
fn timestamp(text: &str) -> Option<(u64, &str)> {
    let bytes = text.as_bytes();
    if bytes.get(2) == Some(&b'/') {
        // yy/MM/dd HH:mm:ss
        let year = 2000 + digits(bytes, 0, 2)?;
        let (month, day) = (digits(bytes, 3, 2)?, digits(bytes, 6, 2)?);
        (bytes.get(5) == Some(&b'/') && bytes.get(8) == Some(&b' ')).then_some(())?;
        let ms = clock(bytes, 9, 0)?;
        return Some((epoch_ms(year, month, day, ms)?, text.get(17..)?));
    }
    // yyyy-MM-dd HH:mm:ss[,SSS] (or a `T`, or a `.`)
    let year = digits(bytes, 0, 4)?;
    (bytes.get(4) == Some(&b'-') && bytes.get(7) == Some(&b'-')).then_some(())?;
    let (month, day) = (digits(bytes, 5, 2)?, digits(bytes, 8, 2)?);
    matches!(bytes.get(10), Some(b' ' | b'T')).then_some(())?;
    let (millis, end) = match bytes.get(19) {
        Some(b',' | b'.') => (digits(bytes, 20, 3)?, 23),
        _ => (0, 19),
    };
    let ms = clock(bytes, 11, millis)?;
    Some((epoch_ms(year, month, day, ms)?, text.get(end..)?))
}

/// `HH:mm:ss` at `at`, plus `millis`, in milliseconds of the day.
fn clock(bytes: &[u8], at: usize, millis: u64) -> Option<u64> {
    (bytes.get(at + 2) == Some(&b':') && bytes.get(at + 5) == Some(&b':')).then_some(())?;
    let (h, m, s) = (
        digits(bytes, at, 2)?,
        digits(bytes, at + 3, 2)?,
        digits(bytes, at + 6, 2)?,
    );
    (h < 24 && m < 60 && s < 61).then_some(((h * 60 + m) * 60 + s) * 1000 + millis)
}

fn digits(bytes: &[u8], at: usize, count: usize) -> Option<u64> {
    let slice = bytes.get(at..at + count)?;
    slice.iter().try_fold(0u64, |n, &b| {
        b.is_ascii_digit().then(|| n * 10 + u64::from(b - b'0'))
    })
}

/// Milliseconds since 1970-01-01 of `ms` into the given day (proleptic Gregorian).
fn epoch_ms(year: u64, month: u64, day: u64, ms: u64) -> Option<u64> {
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || year < 1970 {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm), in unsigned arithmetic from 1970 on.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = (era * 146_097 + doe).checked_sub(719_468)?;
    days.checked_mul(86_400_000)?.checked_add(ms)
}
