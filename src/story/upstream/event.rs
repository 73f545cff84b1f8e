//! An event a format's parser found in a line, before the reader numbers it and gives it
//! the log's node; and where that line is.

use crate::story::command_text::read_fields;
use crate::story::value::FieldValue;

/// An event a parser found, before it is numbered and given its node.
#[derive(Debug, Clone)]
pub(crate) struct Emitted {
    pub(crate) line: usize,
    pub(crate) time_ms: u64,
    pub(crate) thread: String,
    pub(crate) component: &'static str,
    pub(crate) name: &'static str,
    pub(crate) fields: Vec<(String, FieldValue)>,
}

/// Where a line is: its number, time and thread.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<'a> {
    pub(crate) line: usize,
    pub(crate) time_ms: u64,
    pub(crate) thread: &'a str,
}

impl At<'_> {
    /// The event `component`/`name` with `fields`, at this line.
    pub(crate) fn event(
        &self,
        component: &'static str,
        name: &'static str,
        fields: Vec<(&'static str, String)>,
    ) -> Emitted {
        Emitted {
            line: self.line,
            time_ms: self.time_ms,
            thread: self.thread.to_owned(),
            component,
            name,
            fields: read_fields(fields.iter().map(|(name, text)| (*name, text.as_str()))),
        }
    }
}
