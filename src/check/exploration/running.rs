//! Where a coverage's tally lives: in its handle between executions, and, from an
//! execution's start to its end, in the slot of the OS thread that started it. The hook
//! is handed the events of its own thread only (a scoped default, or the relay's
//! registration, is per OS thread; shuttle runs every task of an execution on the thread
//! of its run), so while the tally is checked out those events are counted without the
//! handle's lock: two atomic operations an event, more than the rest of the hook costs on
//! a short execution.
//!
//! A tally left checked out by an execution that panicked goes home when its thread's
//! slot is dropped (the thread ends) or at the coverage's next execution on that thread.

use std::cell::RefCell;

use super::tally::Tally;
use crate::unmodelled::{Counter, Shared};

/// Numbers the coverages of a process (a tally checked out knows whose it is).
static COVERAGES: Counter = Counter::new();

thread_local! {
    /// The tally of the execution that runs on this OS thread, if one is checked out.
    static RUNNING: RefCell<Option<CheckedOut>> = const { RefCell::new(None) };
}

/// A tally checked out on this thread; it goes home when dropped.
struct CheckedOut {
    id: u64,
    tally: Option<Tally>,
    home: Shared<Option<Tally>>,
}

impl Drop for CheckedOut {
    fn drop(&mut self) {
        if let Some(tally) = self.tally.take() {
            self.home.put(tally);
        }
    }
}

/// A coverage's tally, wherever it is.
#[derive(Clone)]
pub(super) struct Home {
    id: u64,
    slot: Shared<Option<Tally>>,
}

impl Home {
    pub(super) fn new(tally: Tally) -> Self {
        Self {
            id: COVERAGES.increment(),
            slot: Shared::new(Some(tally)),
        }
    }

    /// Starts an execution, checking the tally out to this thread unless the thread's
    /// slot holds another coverage's execution (then it is counted at home, locked).
    pub(super) fn start(&self) {
        let checked_out = RUNNING.with(|running| {
            let Ok(mut running) = running.try_borrow_mut() else {
                return false;
            };
            if running.as_ref().is_some_and(|held| held.id != self.id) {
                return false;
            }
            // The coverage's own tally, left here by an execution that did not end, goes
            // home first: it is taken from there.
            drop(running.take());
            let Some(mut tally) = self.slot.with(Option::take) else {
                return false;
            };
            tally.start();
            *running = Some(CheckedOut {
                id: self.id,
                tally: Some(tally),
                home: self.slot.clone(),
            });
            true
        });
        if !checked_out {
            self.at_home(Tally::start);
        }
    }

    /// Ends an execution: its counts are kept and the tally goes home.
    pub(super) fn end(&self) {
        let ended = RUNNING.with(|running| {
            let Ok(mut running) = running.try_borrow_mut() else {
                return false;
            };
            match running.take_if(|held| held.id == self.id) {
                Some(mut held) => {
                    if let Some(tally) = held.tally.as_mut() {
                        tally.end();
                    }
                    true
                }
                None => false,
            }
        });
        if !ended {
            self.at_home(Tally::end);
        }
    }

    /// Runs `f` on the tally: checked out on this thread, or at home. `None` while an
    /// execution of another thread holds it.
    pub(super) fn with<R>(&self, f: impl FnOnce(&mut Tally) -> R) -> Option<R> {
        let mut f = Some(f);
        let here = RUNNING.with(|running| {
            let mut running = running.try_borrow_mut().ok()?;
            let held = running.as_mut().filter(|held| held.id == self.id)?;
            let tally = held.tally.as_mut()?;
            f.take().map(|f| f(tally))
        });
        match (here, f) {
            (Some(value), _) => Some(value),
            (None, Some(f)) => self.at_home(f),
            (None, None) => None,
        }
    }

    fn at_home<R>(&self, f: impl FnOnce(&mut Tally) -> R) -> Option<R> {
        self.slot.with(|slot| slot.as_mut().map(f))
    }
}
