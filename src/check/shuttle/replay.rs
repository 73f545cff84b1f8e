//! Replays a failing schedule exactly and quietly, and reads what it did: the violation's
//! seed key and property, and the story of its execution.

use shuttle::scheduler::ReplayScheduler;
use shuttle_engine::scheduler::Schedule;

use super::runner::{self, Listeners};
use crate::check::catalogue::Case;
use crate::check::monitor::Judgement;
use crate::scenarios::Violation;
use crate::story::Story;

/// What replaying a schedule did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayOutcome {
    /// The schedule broke an invariant again: the violation's message.
    Violation(String),
    /// The run failed another way: the schedule no longer fits the code (shuttle finds a
    /// scheduling point that is not where the file says: the code moved its scheduling
    /// points since the file was written), or a scenario thread panicked.
    OtherFailure(String),
    /// The schedule ran to its end and every invariant held.
    Clean,
}

impl ReplayOutcome {
    fn of(failure: Option<String>) -> Self {
        match failure {
            None => ReplayOutcome::Clean,
            Some(message) if property_of(&message).is_some() => ReplayOutcome::Violation(message),
            Some(message) => ReplayOutcome::OtherFailure(message),
        }
    }
}

/// The seed key and property a [`Violation`](crate::scenarios::Violation)'s message names
/// (`SEED: property ``NAME`` violated: DETAIL`); `None` for any other message.
pub fn property_of(message: &str) -> Option<(&str, &str)> {
    let (seed, rest) = message.split_once(": property `")?;
    let (property, _) = rest.split_once("` violated: ")?;
    (!seed.contains(' ')).then_some((seed, property))
}

/// Replays `schedule` of `case` exactly, as shuttle's replay does, and quietly: the
/// outcome is returned, nothing is printed.
pub fn replay_schedule(case: Case, schedule: Schedule) -> ReplayOutcome {
    replay(case, schedule, Listeners::default()).outcome
}

/// Replays `schedule` of `case` exactly and quietly, recording its protocol events: the
/// story of the failure it reproduces.
pub fn replay_story(case: Case, schedule: Schedule) -> (ReplayOutcome, Story) {
    let replayed = replay(
        case,
        schedule,
        Listeners {
            story: true,
            ..Listeners::default()
        },
    );
    (replayed.outcome, replayed.story)
}

/// What a replay observed: its outcome, its story (when asked), and the event monitors'
/// verdicts over it (when asked).
#[derive(Debug, Clone)]
pub struct Replayed {
    /// How the replay ended.
    pub outcome: ReplayOutcome,
    /// The execution's story (empty unless asked for).
    pub story: Story,
    /// The monitors' verdicts (empty unless asked for).
    pub judgements: Vec<Judgement>,
}

/// Replays `schedule` of `case` exactly and quietly, with `listeners` on its events (a
/// story, an event log sink, the monitors).
pub fn replay(case: Case, schedule: Schedule, listeners: Listeners) -> Replayed {
    let mut replay = ReplayScheduler::new_from_schedule(schedule);
    // The schedule ends where the violation was found; the execution's own teardown
    // after that point is not part of it.
    replay.set_allow_incomplete();
    replayed(runner::run_quietly(case, replay, listeners))
}

/// [`replay`] for any scenario run `run`; its outcome and story.
pub(super) fn replay_with(
    run: impl Fn(u64) -> Result<(), Violation> + Send + Sync + 'static,
    schedule: Schedule,
    listeners: Listeners,
) -> (ReplayOutcome, Story) {
    let mut replay = ReplayScheduler::new_from_schedule(schedule);
    replay.set_allow_incomplete();
    let replayed = replayed(runner::run_quietly_with(run, replay, listeners));
    (replayed.outcome, replayed.story)
}

pub(super) fn replayed(quiet: Result<runner::Quiet, String>) -> Replayed {
    match quiet {
        Ok(quiet) => Replayed {
            outcome: ReplayOutcome::of(quiet.violation),
            story: quiet.story,
            judgements: quiet.judgements,
        },
        Err(panic) => Replayed {
            outcome: ReplayOutcome::OtherFailure(panic),
            story: Story::default(),
            judgements: Vec::new(),
        },
    }
}
