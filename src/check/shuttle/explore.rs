//! The explorer (`check::explore`) in the shuttle build: its search runs inside one shuttle
//! execution, on one task, where the facade's primitives work (a task that runs alone
//! takes no scheduling point, so the search runs at the speed of its components); a
//! counterexample replays as any saved schedule does, with its story and the monitors.

use std::path::Path;

use shuttle::scheduler::RandomScheduler;
use shuttle::{Config, Runner};

use super::replay::{Replayed, replayed};
use super::runner::{self, Listeners};
use crate::check::catalogue;
use crate::check::exploration::RaceWindow;
use crate::check::explore::{
    CounterexampleFile, CounterexampleFileError, ExploreCase, Options, Report, explore, replay_path,
};
use crate::unmodelled::{Shared, on_new_os_thread};

/// Explores `case` (see [`explore`]) inside one shuttle execution; a panic of the search
/// is its message.
pub fn explore_case(
    case: ExploreCase,
    options: Options,
    windows: &'static [RaceWindow],
) -> Result<Report, String> {
    let report = Shared::new(None);
    let out = report.clone();
    let run = on_new_os_thread(move || {
        let mut config = Config::new();
        config.silence_warnings = true;
        config.max_steps = shuttle::MaxSteps::None;
        Runner::new(RandomScheduler::new(1), config).run(move || {
            out.put(explore(&case, &options, windows));
        });
    });
    run.map_err(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "panic without a message".to_owned())
    })?;
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
