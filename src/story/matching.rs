//! Whether an event's values equal an event a sink already holds, read straight from the
//! call's values: how a recorder hands a sink that expects an event (the next event of a
//! sequence the monitors judged before) that event without writing it out first
//! ([`EventSink::met`](super::EventSink::met)).
//!
//! It places the values as [`Site`](super::site) refills an event from them, and compares
//! each with the held event's instead of writing it: an integer or a flag as a value, an
//! id or an integer against a text by its digits, and only a `Display` or `Debug` value
//! formatted, into a writer that compares as it goes and stops at the first difference.
//! The event's name and component are its call site's, its step the recorder's count;
//! the caller compares those.

use std::fmt::{self, Write as _};

use super::event::Event;
use super::site::{Place, places};
use super::value::FieldValue;
use crate::events::{Arg, Site as CallSite};

/// Whether the values `args` of call site `site` make `held`'s node and fields: the same
/// node (or none), and the same fields in the same order, each with the name and value a
/// recorder would write.
///
/// `held` is an event of the same call site (`EventSink::met`), so where the call left no
/// value out its field names are the site's, in its order: they are compared only where
/// one is left out (and the held event may have left out another).
pub(super) fn same_node_and_fields(site: &CallSite<'_>, args: &[Arg<'_>], held: &Event) -> bool {
    let names = args.iter().any(|arg| matches!(arg, Arg::Absent));
    let mut fields = 0;
    let mut node = false;
    for place in places(site, args) {
        let (name, arg) = match place {
            Place::Node(arg) => {
                node = true;
                if !held
                    .node
                    .as_deref()
                    .is_some_and(|held| same_text(arg, held))
                {
                    return false;
                }
                continue;
            }
            Place::Field(name, arg) => (name, arg),
        };
        let Some((held_name, value)) = held.fields.get(fields) else {
            return false;
        };
        if (names && held_name != name) || !same_value(arg, value) {
            return false;
        }
        fields += 1;
    }
    fields == held.fields.len() && node == held.node.is_some()
}

/// Whether `arg` is recorded as `held` (see [`super::site`]'s refill).
fn same_value(arg: &Arg<'_>, held: &FieldValue) -> bool {
    match (*arg, held) {
        (Arg::U64(n), FieldValue::U64(m)) => n == *m,
        (Arg::I64(n), held) => FieldValue::signed(n) == *held,
        (Arg::Bool(b), FieldValue::Bool(c)) => b == *c,
        (Arg::U64(_) | Arg::Bool(_), _) => false,
        (arg, FieldValue::Text(text)) => same_text(&arg, text),
        _ => false,
    }
}

/// Whether `arg` is written as `held`.
fn same_text(arg: &Arg<'_>, held: &str) -> bool {
    match *arg {
        Arg::Str(text) => text == held,
        Arg::U64(n) => same_digits(n, held),
        Arg::Id { prefix, number } => held
            .strip_prefix(prefix)
            .is_some_and(|digits| same_digits(number, digits)),
        arg => {
            let mut compared = SameText { rest: held };
            // An error is the first difference: the writer stops the formatting there.
            write!(compared, "{arg}").is_ok() && compared.rest.is_empty()
        }
    }
}

/// Whether `text` is `n` in decimal.
fn same_digits(n: u64, text: &str) -> bool {
    let mut rest = n;
    let mut digits = text.bytes().rev();
    loop {
        // A digit is below 10: the cast keeps it.
        if digits.next() != Some(b'0' + (rest % 10) as u8) {
            return false;
        }
        rest /= 10;
        if rest == 0 {
            return digits.next().is_none();
        }
    }
}

/// A writer that compares what is written with the text still expected, and fails at the
/// first difference.
struct SameText<'a> {
    rest: &'a str,
}

impl fmt::Write for SameText<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        match self.rest.strip_prefix(s) {
            Some(rest) => {
                self.rest = rest;
                Ok(())
            }
            None => Err(fmt::Error),
        }
    }
}
