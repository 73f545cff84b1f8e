//! Whether a `tracing` event equals an event a sink already holds, read straight from the
//! call's values: how a recorder hands a sink that expects an event (the next event of a
//! sequence the monitors judged before) that event without writing it out first
//! ([`EventSink::met`](super::EventSink::met)).
//!
//! It reads the values as [`Site`](super::site) refills an event from them, and compares
//! each with the held event's instead of writing it: an integer or a flag as a value, a
//! text as it would be written (a `Debug` value is formatted into a writer that compares
//! as it goes and stops at the first difference). The event's name and component are its
//! call site's, its step the recorder's count; the caller compares those.

use std::fmt::{self, Write as _};

use tracing::Event as TracingEvent;
use tracing::field::{Field, Visit};

use super::event::Event;
use super::site::Place;
use super::value::FieldValue;

/// Whether `event`'s node and fields are `held`'s: the same node (or none), and the same
/// fields in the same order, each with the name and value a recorder would write.
pub(super) fn same_node_and_fields(event: &TracingEvent<'_>, held: &Event) -> bool {
    let mut matcher = Matcher {
        held,
        fields: 0,
        node: false,
        same: true,
    };
    event.record(&mut matcher);
    let Matcher {
        fields, node, same, ..
    } = matcher;
    same && fields == held.fields.len() && node == held.node.is_some()
}

/// The comparison of one event's values with the held event's, field by field.
struct Matcher<'a> {
    held: &'a Event,
    /// The fields compared so far.
    fields: usize,
    /// Whether the event named its node.
    node: bool,
    /// Whether everything compared so far is the same.
    same: bool,
}

/// What a field of the event is compared with.
enum Held<'a> {
    /// The message, which names the call site: not compared here.
    Message,
    /// The node's text.
    Node(Option<&'a str>),
    /// A field's value, if the held event has a field of that name at that place.
    Value(Option<&'a FieldValue>),
}

impl<'a> Matcher<'a> {
    /// What `field` is compared with, as a recorder's refill places it.
    fn held(&mut self, field: &Field) -> Held<'a> {
        match Place::of(field) {
            Place::Message => Held::Message,
            Place::Node => {
                self.node = true;
                Held::Node(self.held.node.as_deref())
            }
            Place::Field => {
                let at = self.fields;
                self.fields += 1;
                let value = self
                    .held
                    .fields
                    .get(at)
                    .filter(|(held, _)| held == field.name())
                    .map(|(_, value)| value);
                Held::Value(value)
            }
        }
    }

    /// Compares `value` (an integer or a flag) with what `field` holds: as a value, or, for
    /// the node, as the text a refill writes.
    fn value(&mut self, field: &Field, value: FieldValue) {
        let same = match self.held(field) {
            Held::Message => true,
            Held::Node(node) => node.is_some_and(|node| same_text(node, |w| write!(w, "{value}"))),
            Held::Value(held) => held == Some(&value),
        };
        self.same &= same;
    }

    /// Compares the text `write` writes with what `field` holds.
    fn text(&mut self, field: &Field, write: impl FnOnce(&mut SameText<'_>) -> fmt::Result) {
        let held = match self.held(field) {
            Held::Message => return,
            Held::Node(node) => node,
            Held::Value(held) => held.and_then(FieldValue::as_text),
        };
        self.same &= held.is_some_and(|held| same_text(held, write));
    }
}

impl Visit for Matcher<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if self.same {
            self.text(field, |w| w.write_str(value));
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if self.same {
            self.value(field, FieldValue::U64(value));
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if self.same {
            self.value(field, FieldValue::signed(value));
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        if self.same {
            self.value(field, FieldValue::Bool(value));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.same {
            self.text(field, |w| write!(w, "{value:?}"));
        }
    }
}

/// Whether `write` writes exactly `held`.
fn same_text(held: &str, write: impl FnOnce(&mut SameText<'_>) -> fmt::Result) -> bool {
    let mut compared = SameText { rest: held };
    // An error is the first difference: the writer stops the formatting there.
    write(&mut compared).is_ok() && compared.rest.is_empty()
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
