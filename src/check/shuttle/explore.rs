//! The explorer (`check::explore`) in the shuttle build: its search runs inside one shuttle
//! execution, on one task, where the facade's primitives work (a task that runs alone
//! takes no scheduling point, so the search runs at the speed of its components); a
//! counterexample replays as any saved schedule does, with its story and the monitors.

use std::path::Path;

use shuttle::scheduler::RandomScheduler;

use super::replay::{Replayed, replayed};
use super::runner::{self, Listeners};
use super::worker::on_worker_thread;
use crate::check::catalogue;
use crate::check::exploration::RaceWindow;
use crate::check::explore::{
    CounterexampleFile, CounterexampleFileError, ExploreCase, Options, Report, explore, replay_path,
};
use crate::unmodelled::Shared;

/// Explores `case` (see [`explore`]) inside one shuttle execution; a panic of the search
/// is its message.
pub fn explore_case(
    case: ExploreCase,
    options: Options,
    windows: &'static [RaceWindow],
) -> Result<Report, String> {
    let report = Shared::new(None);
    let out = report.clone();
    on_worker_thread(Box::new(move || out.put(explore(&case, &options, windows)))).join()?;
    report
        .take()
        .ok_or_else(|| "the search ended without a report".to_owned())
}

/// The catalogue's explorable case `scenario/variant`.
pub fn explorable_case(scenario: &str, variant: &str) -> Option<ExploreCase> {
    catalogue::explorable()
        .into_iter()
        .find(|c| c.scenario == scenario && c.variant == variant)
}

/// Why a counterexample file could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum CounterexampleError {
    /// The file could not be read.
    #[error(transparent)]
    File(#[from] CounterexampleFileError),
    /// No explorable case of the catalogue has that name and variant.
    #[error("no explorable case {scenario}/{variant} in the catalogue")]
    UnknownCase {
        /// Scenario name.
        scenario: String,
        /// Variant name.
        variant: String,
    },
}

/// Replays the counterexample in `path` (the case set up, its actions run, then judged)
/// with `listeners` on its events: its outcome, story and the monitors' verdicts.
pub fn replay_counterexample(
    path: &Path,
    listeners: Listeners,
) -> Result<Replayed, CounterexampleError> {
    let file = CounterexampleFile::read(path)?;
    let case = explorable_case(&file.scenario, &file.variant).ok_or_else(|| {
        CounterexampleError::UnknownCase {
            scenario: file.scenario.clone(),
            variant: file.variant.clone(),
        }
    })?;
    let actions = file.actions;
    let scheduler = RandomScheduler::new(1);
    Ok(replayed(runner::run_quietly_with(
        move |_| replay_path(&case, &actions),
        scheduler,
        listeners,
    )))
}
