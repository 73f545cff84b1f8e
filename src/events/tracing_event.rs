//! A `tracing` event read back into a call site and its values: the events that reach a
//! hook's owner as a plain `tracing` subscriber (no hook installed on the emitting
//! thread, or a call written with `tracing`'s own macro) take the same typed path.

use std::fmt::{self, Write as _};

use tracing::Event as TracingEvent;
use tracing::field::{Field, Visit};

use super::arg::Arg;
use super::site::Site;

/// A value read from a `tracing` event, owned until it is handed over.
enum Read {
    Absent,
    U64(u64),
    I64(i64),
    Bool(bool),
    Text(String),
}

/// Calls `f` with `event`'s call site and values, read as the event macros hand them
/// over: the message names the site, every other field is a value (absent when the call
/// left it out). An integer or a flag stays one; any other value is its text.
pub fn with_tracing_event<T>(
    event: &TracingEvent<'_>,
    f: impl FnOnce(&Site<'_>, &[Arg<'_>]) -> T,
) -> T {
    let metadata = event.metadata();
    let fields: Vec<&'static str> = metadata
        .fields()
        .iter()
        .map(|field| field.name())
        .filter(|name| *name != "message")
        .collect();
    let mut reader = Reader {
        message: String::new(),
        message_at: metadata
            .fields()
            .field("message")
            .map(|field| field.index()),
        values: fields.iter().map(|_| Read::Absent).collect(),
    };
    event.record(&mut reader);
    let args: Vec<Arg<'_>> = reader
        .values
        .iter()
        .map(|value| match value {
            Read::Absent => Arg::Absent,
            Read::U64(n) => Arg::U64(*n),
            Read::I64(n) => Arg::I64(*n),
            Read::Bool(b) => Arg::Bool(*b),
            Read::Text(text) => Arg::Str(text),
        })
        .collect();
    let site = Site {
        key: std::ptr::from_ref(metadata) as usize,
        target: metadata.target(),
        name: &reader.message,
        fields: &fields,
    };
    f(&site, &args)
}

/// Reads a `tracing` event's message and values.
struct Reader {
    message: String,
    /// The message's index among the call site's fields, if it has one.
    message_at: Option<usize>,
    /// One per field of the call site but the message, in the site's order.
    values: Vec<Read>,
}

impl Reader {
    /// Where `field`'s value goes, if it is not the message: its place among the values.
    fn slot(&mut self, field: &Field) -> Option<&mut Read> {
        let index = field.index();
        let at = match self.message_at {
            Some(message) if index == message => return None,
            Some(message) if index > message => index - 1,
            _ => index,
        };
        self.values.get_mut(at)
    }

    fn put(&mut self, field: &Field, value: Read) {
        if let Some(slot) = self.slot(field) {
            *slot = value;
        }
    }
}

impl Visit for Reader {
    fn record_str(&mut self, field: &Field, value: &str) {
        match self.slot(field) {
            Some(slot) => *slot = Read::Text(value.to_owned()),
            None => self.message.push_str(value),
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, Read::U64(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        // A signed value that is not negative reads as the unsigned one a log writes.
        match u64::try_from(value) {
            Ok(n) => self.put(field, Read::U64(n)),
            Err(_) => self.put(field, Read::I64(value)),
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Read::Bool(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let text = match self.slot(field) {
            Some(slot) => {
                *slot = Read::Text(String::new());
                match slot {
                    Read::Text(text) => text,
                    _ => return,
                }
            }
            None => &mut self.message,
        };
        // Writing into a String cannot fail.
        let _ = write!(text, "{value:?}");
    }
}
