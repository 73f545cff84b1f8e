//! A protocol event's field value, typed as the component recorded it: ids, terms and
//! counts stay integers, flags stay booleans, from the `tracing` call to the monitor that
//! reads them. Text is written only when an event is printed or logged, and read back into
//! values once, where a log is read ([`FieldValue::read`]).

use std::fmt;

use crate::events::Arg;

/// One field's value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FieldValue {
    /// A non-negative integer: an id (a container's, a block's), a term, a count.
    U64(u64),
    /// A negative integer. A signed value that is not negative is a `U64`
    /// ([`FieldValue::signed`]), so that a value reads back from a log as it was recorded.
    I64(i64),
    /// A flag.
    Bool(bool),
    /// Anything else, as the component wrote it (`Display` or `Debug`): a reason, an
    /// outcome, a state, a list of ids (`c2,c3`).
    Text(String),
}

impl Default for FieldValue {
    fn default() -> Self {
        FieldValue::Text(String::new())
    }
}

impl FieldValue {
    /// A signed integer: a `U64` when it is not negative, else an `I64`.
    pub fn signed(n: i64) -> FieldValue {
        match u64::try_from(n) {
            Ok(n) => FieldValue::U64(n),
            Err(_) => FieldValue::I64(n),
        }
    }

    /// The value as a non-negative integer: a `U64`, or an `I64` that is not negative.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            FieldValue::U64(n) => Some(n),
            FieldValue::I64(n) => u64::try_from(n).ok(),
            _ => None,
        }
    }

    /// The value as a signed integer.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            FieldValue::U64(n) => i64::try_from(n).ok(),
            FieldValue::I64(n) => Some(n),
            _ => None,
        }
    }

    /// The value as a flag.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            FieldValue::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The value made `Text`, emptied, its string to write into: a `Text` keeps its
    /// allocation (a recorder or a reader refills one event's values in place).
    pub(crate) fn emptied_text(&mut self) -> &mut String {
        if !matches!(self, FieldValue::Text(_)) {
            *self = FieldValue::Text(String::new());
        }
        match self {
            FieldValue::Text(text) => {
                text.clear();
                text
            }
            // Made `Text` just above.
            _ => unreachable!("a value made Text"),
        }
    }

    /// Sets the value to `arg`'s, as a recorder records it: an integer or a flag as a
    /// value, anything else as its text (a `Text` keeps its allocation).
    pub(crate) fn assign(&mut self, arg: &Arg<'_>) {
        *self = match *arg {
            Arg::U64(n) => FieldValue::U64(n),
            Arg::I64(n) => FieldValue::signed(n),
            Arg::Bool(b) => FieldValue::Bool(b),
            Arg::Absent => FieldValue::default(),
            _ => return write_arg(self.emptied_text(), arg),
        };
    }

    /// The text of a `Text` value.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            FieldValue::Text(text) => Some(text),
            _ => None,
        }
    }

    /// Reads a value written as text (an event log of schema version 1, another
    /// implementation's log, a line of upstream's own): a decimal integer becomes a
    /// `U64` (or an `I64` when negative), `true` and `false` a `Bool`, and `Some(x)` is
    /// read as `x`, as the `Debug` of an option writes it. An identifier in a field that
    /// holds one ([`ID_FIELDS`]: `c3`, `blk_100`, `ContainerId(3)`) becomes its number,
    /// as this crate records it. Anything else stays `Text`.
    ///
    /// ```
    /// use hadoop_ref::story::FieldValue;
    ///
    /// assert_eq!(FieldValue::read("term", "Some(4)"), FieldValue::U64(4));
    /// assert_eq!(FieldValue::read("container", "c3"), FieldValue::U64(3));
    /// assert_eq!(FieldValue::read("why", "heartbeat"), FieldValue::Text("heartbeat".into()));
    /// assert_eq!(FieldValue::read("term", "-1"), FieldValue::I64(-1));
    /// ```
    pub fn read(name: &str, text: &str) -> FieldValue {
        let inner = text.trim();
        let inner = inner
            .strip_prefix("Some(")
            .and_then(|rest| rest.strip_suffix(')'))
            .unwrap_or(inner);
        if let Some(value) = integer(inner) {
            return value;
        }
        match inner {
            "true" => return FieldValue::Bool(true),
            "false" => return FieldValue::Bool(false),
            _ => {}
        }
        if ID_FIELDS.contains(&name)
            && let Some(id) = trailing_number(inner)
        {
            return FieldValue::U64(id);
        }
        FieldValue::Text(text.to_owned())
    }
}

/// Appends `arg`'s text to `out`: a text, an integer and an id's prefix and number
/// without the formatting machinery.
pub(crate) fn write_arg(out: &mut (impl fmt::Write + ?Sized), arg: &Arg<'_>) {
    // Writing into the crate's buffers cannot fail.
    let _ = match *arg {
        Arg::Str(value) => out.write_str(value),
        Arg::U64(n) => {
            push_u64(out, n);
            Ok(())
        }
        Arg::Id { prefix, number } => out.write_str(prefix).map(|()| push_u64(out, number)),
        _ => write!(out, "{arg}"),
    };
}

/// The fields that hold one identifier, recorded as its number: a text log's `c3` or
/// `blk_100` in them is read as 3 or 100.
pub const ID_FIELDS: [&str; 2] = ["container", "block"];

/// A decimal integer, whole.
fn integer(text: &str) -> Option<FieldValue> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match text.starts_with('-') {
        true => text.parse().ok().map(FieldValue::signed),
        false => text.parse().ok().map(FieldValue::U64),
    }
}

/// The number an identifier ends with: `c1`, `blk_100`, `ContainerId(3)` → 1, 100, 3.
pub(crate) fn trailing_number(text: &str) -> Option<u64> {
    let trimmed = text.trim().trim_end_matches(')');
    let start = trimmed
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_digit())
        .last()
        .map(|(i, _)| i)?;
    trimmed[start..].parse().ok()
}

impl fmt::Display for FieldValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldValue::U64(n) => write!(f, "{n}"),
            FieldValue::I64(n) => write!(f, "{n}"),
            FieldValue::Bool(b) => write!(f, "{b}"),
            FieldValue::Text(text) => f.write_str(text),
        }
    }
}

impl From<u64> for FieldValue {
    fn from(n: u64) -> Self {
        FieldValue::U64(n)
    }
}

impl From<i64> for FieldValue {
    fn from(n: i64) -> Self {
        FieldValue::signed(n)
    }
}

impl From<bool> for FieldValue {
    fn from(b: bool) -> Self {
        FieldValue::Bool(b)
    }
}

impl From<&str> for FieldValue {
    fn from(text: &str) -> Self {
        FieldValue::Text(text.to_owned())
    }
}

impl From<String> for FieldValue {
    fn from(text: String) -> Self {
        FieldValue::Text(text)
    }
}

/// Appends `value` in decimal, as its `Display` (and `Debug`) writes it, without the
/// formatting machinery: the recorder's and the coverage hook's integer fields.
pub(crate) fn push_u64(out: &mut (impl fmt::Write + ?Sized), value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = value;
    loop {
        at -= 1;
        // A digit is below 10: the cast keeps it.
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    // ASCII digits are UTF-8; writing to a String cannot fail.
    let _ = out.write_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}
