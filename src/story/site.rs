//! What a [`Recorder`](super::Recorder) keeps per call site: which of its sinks take the
//! site's events, and, for a recorder that keeps nothing, the site's event itself,
//! refilled in place at each of them.
//!
//! A `tracing` call site's metadata is static, so its address names it. Every event of
//! this crate has a literal message (the event catalogue's test checks each call): a call
//! site's events all have one name and one component, and their fields come in the order
//! the call writes them. Refilling the site's own event rewrites only the field values
//! and the node; its name, component and field names stay written from the first time.

use std::collections::hash_map::Entry;
use std::fmt;

use tracing::Event as TracingEvent;
use tracing::Metadata;
use tracing::field::{Field, Visit};

use super::event::Event;
use super::fast_hash::FastMap;
use super::value::FieldValue;

/// The call sites a recorder has seen, by their metadata's address. There are as many as
/// the program has call sites of this crate, no more: the map is bounded by the code.
#[derive(Default)]
pub(super) struct Sites {
    by_site: FastMap<usize, Site>,
}

/// Which sinks take a call site's events, and each one's route for them
/// ([`EventSink::route`](super::EventSink::route)): decided once per call site.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Routing {
    /// The sinks that take the site's events (a bit set of their indices).
    pub(super) takers: u64,
    /// Each sink's route, by its index (meaningful for a sink in `takers`).
    pub(super) routes: Vec<u32>,
}

/// One call site: the sinks that take its events, and its last event.
#[derive(Default)]
pub(super) struct Site {
    /// The sinks that take the site's events, and their routes.
    pub(super) routing: Routing,
    /// The site's last event, as a recorder that keeps nothing refilled it (its name and
    /// component are the site's; its thread and step are the caller's to write).
    pub(super) event: Event,
    /// Each of `event.fields`, by its index in the call site's field set: a field already
    /// in its place keeps its name, written once.
    indices: Vec<usize>,
}

impl Sites {
    /// The call site of `event`, and whether its event is written from `event`: a new
    /// site's is (its first event); a known site's is left for the caller to
    /// [refill](Site::refill) once it knows it must. The first time the site emits one,
    /// `ask` gives the sinks that take the events of a component and a name; `component`
    /// is the site's component.
    pub(super) fn site(
        &mut self,
        event: &TracingEvent<'_>,
        component: &str,
        ask: impl FnOnce(&str, &str) -> Routing,
    ) -> (&mut Site, bool) {
        let metadata = event.metadata();
        let key = std::ptr::from_ref(metadata) as usize;
        match self.by_site.entry(key) {
            Entry::Occupied(known) => (known.into_mut(), false),
            Entry::Vacant(new) => {
                let mut site = Site::first(event, component);
                site.routing = ask(component, &site.event.name);
                (new.insert(site), true)
            }
        }
    }

    /// The sinks that take `event` (of call site `site`) and their routes, from `ask` (as
    /// for [`Sites::site`]) when the site is new or its last event had another name (an
    /// event whose message is not a literal, which a recorder that keeps its events still
    /// routes by name).
    pub(super) fn routing(
        &mut self,
        site: &'static Metadata<'static>,
        event: &Event,
        ask: impl FnOnce(&str, &str) -> Routing,
    ) -> &Routing {
        let key = std::ptr::from_ref(site) as usize;
        let known = self.by_site.entry(key).or_default();
        if known.event.name != event.name || known.event.component != event.component {
            known.routing = ask(&event.component, &event.name);
            known.event.name.clone_from(&event.name);
            known.event.component.clone_from(&event.component);
        }
        &known.routing
    }
}

/// `event` as a story's event of `component`, written as a call site's first event is
/// (its thread left empty, its step 0).
pub(super) fn event_of(event: &TracingEvent<'_>, component: &str) -> Event {
    Site::first(event, component).event
}

impl Site {
    /// The call site of `event`, of `component`, written from its first event: named by
    /// its message (or by the site, for an event with none). No sink takes its events yet.
    fn first(event: &TracingEvent<'_>, component: &str) -> Self {
        let mut site = Site::default();
        site.event.name.push_str(event.metadata().name());
        site.event.component.push_str(component);
        site.fill(event, false);
        site
    }

    /// Rewrites the event's fields and node from `event`, another event of this call site
    /// (its name is the site's).
    pub(super) fn refill(&mut self, event: &TracingEvent<'_>) {
        self.fill(event, true);
    }

    /// Rewrites the event's fields and node from `event`; its name from the message too,
    /// unless it is `named` already (the site's).
    fn fill(&mut self, event: &TracingEvent<'_>, named: bool) {
        let mut refill = Refill {
            site: self,
            named,
            node: false,
            fields: 0,
        };
        event.record(&mut refill);
        let Refill { node, fields, .. } = refill;
        // A field or a node the call left empty this time (an absent `Option`).
        self.event.fields.truncate(fields);
        self.indices.truncate(fields);
        if !node {
            self.event.node = None;
        }
    }
}

/// Where one of a `tracing` call's values goes in a story's event: the message names the
/// event, `node` is its node, any other is one of its fields (in the call's order). The
/// refill writes there and the matcher ([`super::matching`]) compares there.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    /// The message.
    Message,
    /// The node.
    Node,
    /// A field.
    Field,
}

impl Place {
    /// Where `field`'s value goes.
    pub(super) fn of(field: &Field) -> Self {
        match field.name() {
            "message" => Place::Message,
            "node" => Place::Node,
            _ => Place::Field,
        }
    }
}

/// An event's fields written over its call site's last event.
struct Refill<'a> {
    site: &'a mut Site,
    /// Whether the event's name is already written (its call site's).
    named: bool,
    node: bool,
    fields: usize,
}

impl Refill<'_> {
    /// Where `field`'s value goes: the event's name or node (text), or its field slot.
    /// `None` for the message of a site already named.
    fn slot(&mut self, field: &Field) -> Option<Slot<'_>> {
        let event = &mut self.site.event;
        match Place::of(field) {
            Place::Message if self.named => None,
            Place::Message => Some(Slot::Text(&mut event.name)),
            Place::Node => {
                self.node = true;
                Some(Slot::Text(event.node.get_or_insert_with(String::new)))
            }
            Place::Field => {
                let name = field.name();
                let at = self.fields;
                self.fields += 1;
                let indices = &mut self.site.indices;
                if at == indices.len() {
                    event.fields.push((name.to_owned(), FieldValue::default()));
                    indices.push(field.index());
                } else if indices[at] != field.index() {
                    event.fields[at].0.clear();
                    event.fields[at].0.push_str(name);
                    indices[at] = field.index();
                }
                Some(Slot::Value(&mut event.fields[at].1))
            }
        }
    }

    /// Writes `value` into `field`'s slot (a name or node takes its text).
    fn put(&mut self, field: &Field, value: FieldValue) {
        match self.slot(field) {
            Some(Slot::Value(slot)) => *slot = value,
            Some(Slot::Text(text)) => {
                use std::fmt::Write as _;
                text.clear();
                // Writing into a String cannot fail.
                let _ = write!(text, "{value}");
            }
            None => {}
        }
    }

    /// Writes `field`'s text with `write`, into a slot's reused string.
    fn put_text(&mut self, field: &Field, write: impl FnOnce(&mut String)) {
        let text = match self.slot(field) {
            Some(Slot::Text(text)) => text,
            Some(Slot::Value(value)) => value.emptied_text(),
            None => return,
        };
        text.clear();
        write(text);
    }
}

/// Where a field's value is written.
enum Slot<'a> {
    /// The event's name or node.
    Text(&'a mut String),
    /// One of its fields.
    Value(&'a mut FieldValue),
}

// Integers and flags are kept as values; only text is written out.
impl Visit for Refill<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put_text(field, |text| text.push_str(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, FieldValue::U64(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, FieldValue::signed(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, FieldValue::Bool(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        use std::fmt::Write as _;
        // Writing into a String cannot fail.
        self.put_text(field, |text| {
            let _ = write!(text, "{value:?}");
        });
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
