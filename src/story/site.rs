//! What a [`Recorder`](super::Recorder) keeps per call site: which of its sinks take the
//! site's events, and, for a recorder that keeps nothing, the site's event itself,
//! refilled in place at each of them.
//!
//! A call site's key names it ([`crate::events::Site::key`]). Every event of this crate
//! has a literal message (the event catalogue's test checks each call): a call site's
//! events all have one name and one component, and their values come in the order the
//! call writes them. Refilling the site's own event rewrites only the field values and the
//! node; its name, component and field names stay written from the first time.

use super::event::Event;
use super::fast_hash::FastMap;
use super::value::{FieldValue, write_arg};
use crate::events::{Arg, Site as CallSite};
use std::collections::hash_map::Entry;

/// The call sites a recorder has seen, by their keys. There are as many as the program
/// has call sites of this crate, no more: the map is bounded by the code.
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
}

impl Sites {
    /// The call site `site`, and whether its event is written from `args`: a new site's
    /// is (its first event); a known site's is left for the caller to [refill](Site::refill)
    /// once it knows it must. The first time the site emits one, `ask` gives the sinks
    /// that take the events of a component and a name.
    pub(super) fn site(
        &mut self,
        site: &CallSite<'_>,
        args: &[Arg<'_>],
        ask: impl FnOnce(&str, &str) -> Routing,
    ) -> (&mut Site, bool) {
        match self.by_site.entry(site.key) {
            Entry::Occupied(known) => (known.into_mut(), false),
            Entry::Vacant(new) => {
                let mut known = Site {
                    event: event_of(site, args),
                    ..Site::default()
                };
                known.routing = ask(&known.event.component, &known.event.name);
                (new.insert(known), true)
            }
        }
    }

    /// The sinks that take `event` (of the call site keyed `key`) and their routes, from
    /// `ask` (as for [`Sites::site`]) when the site is new or its last event had another
    /// name (an event whose message is not a literal, which a recorder that keeps its
    /// events still routes by name).
    pub(super) fn routing(
        &mut self,
        key: usize,
        event: &Event,
        ask: impl FnOnce(&str, &str) -> Routing,
    ) -> &Routing {
        let known = self.by_site.entry(key).or_default();
        if known.event.name != event.name || known.event.component != event.component {
            known.routing = ask(&event.component, &event.name);
            known.event.name.clone_from(&event.name);
            known.event.component.clone_from(&event.component);
        }
        &known.routing
    }
}

/// The event of call site `site` with values `args`, as a story keeps it (its thread
/// left empty, its step 0): named by the site's message, of the site's component.
pub(super) fn event_of(site: &CallSite<'_>, args: &[Arg<'_>]) -> Event {
    let mut event = Event {
        name: site.name.to_owned(),
        component: site.component().to_owned(),
        ..Event::default()
    };
    fill(&mut event, site, args);
    event
}

impl Site {
    /// Rewrites the event's fields and node from `args`, another event of this call site.
    pub(super) fn refill(&mut self, site: &CallSite<'_>, args: &[Arg<'_>]) {
        fill(&mut self.event, site, args);
    }
}

/// Writes `event`'s node and fields from `site`'s values `args`, reusing what the event
/// holds: a field already in its place keeps its name and its text's allocation. An
/// absent value leaves its field out (and an absent node leaves the event without one).
fn fill(event: &mut Event, site: &CallSite<'_>, args: &[Arg<'_>]) {
    let mut fields = 0;
    let mut node = false;
    for place in places(site, args) {
        let (name, arg) = match place {
            Place::Node(arg) => {
                node = true;
                let text = event.node.get_or_insert_with(String::new);
                text.clear();
                write_arg(text, arg);
                continue;
            }
            Place::Field(name, arg) => (name, arg),
        };
        if fields == event.fields.len() {
            event.fields.push((name.to_owned(), FieldValue::default()));
        } else if event.fields[fields].0 != name {
            event.fields[fields].0.clear();
            event.fields[fields].0.push_str(name);
        }
        event.fields[fields].1.assign(arg);
        fields += 1;
    }
    event.fields.truncate(fields);
    if !node {
        event.node = None;
    }
}

/// Where one of a call's values goes in a story's event: its node, or its next field.
pub(super) enum Place<'s, 'a> {
    /// The `node` value.
    Node(&'s Arg<'a>),
    /// Another value, with its field's name.
    Field(&'static str, &'s Arg<'a>),
}

/// The places of call site `site`'s values `args`, in the call's order, leaving out those
/// the call left absent.
pub(super) fn places<'s, 'a>(
    site: &'s CallSite<'_>,
    args: &'s [Arg<'a>],
) -> impl Iterator<Item = Place<'s, 'a>> {
    site.fields
        .iter()
        .zip(args)
        .filter(|(_, arg)| !matches!(arg, Arg::Absent))
        .map(|(&name, arg)| match name {
            "node" => Place::Node(arg),
            _ => Place::Field(name, arg),
        })
}
