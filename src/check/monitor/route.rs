//! Which monitors of a [`MonitorSet`](super::MonitorSet) take each kind of event: a kind
//! is a component and an event name, and each monitor says whether it wants it
//! ([`Monitor::wants`]), or, in a set that only counts violations, whether its verdict
//! reads it ([`Monitor::judges`]). The set asks once per kind and keeps the answer, so an event
//! reaches only the few monitors that read it, at the cost of one lookup by its name.

use super::judgement::Monitor;
use crate::story::fast_hash::FastMap;

/// The monitors (their indices in the set) that take each kind of event.
#[derive(Debug, Default)]
pub(super) struct Routes {
    /// By event name: each component that emits it, with its route's index.
    by_name: FastMap<String, Vec<(String, usize)>>,
    /// The routes: monitors' indices, ascending.
    routes: Vec<Box<[usize]>>,
}

impl Routes {
    /// The index of the route of the events of `component` named `name`: the monitors
    /// among `monitors` that take them ([`Routes::at`]; those that judge them, with
    /// `verdicts_only`, always the same flag for one set). What a recorder keeps per call
    /// site and hands back with each of its events.
    pub(super) fn index(
        &mut self,
        component: &str,
        name: &str,
        monitors: &[Box<dyn Monitor>],
        verdicts_only: bool,
    ) -> usize {
        let known = self.by_name.get(name).and_then(|kinds| {
            kinds
                .iter()
                .find(|(known, _)| known == component)
                .map(|&(_, at)| at)
        });
        known.unwrap_or_else(|| self.add(component, name, monitors, verdicts_only))
    }

    /// The monitors of route `index` (none for an index no kind was given).
    pub(super) fn at(&self, index: usize) -> &[usize] {
        self.routes.get(index).map_or(&[], |route| route)
    }

    /// Asks `monitors` about a new kind of event; returns its route's index.
    fn add(
        &mut self,
        component: &str,
        name: &str,
        monitors: &[Box<dyn Monitor>],
        verdicts_only: bool,
    ) -> usize {
        let takers = monitors
            .iter()
            .enumerate()
            .filter(|(_, monitor)| match verdicts_only {
                true => monitor.judges(component, name),
                false => monitor.wants(component, name),
            })
            .map(|(at, _)| at)
            .collect();
        self.routes.push(takers);
        let at = self.routes.len() - 1;
        self.by_name
            .entry(name.to_owned())
            .or_default()
            .push((component.to_owned(), at));
        at
    }
}
