//! Shrinks a failing schedule to one with fewer context switches that still breaks the
//! same property: delta debugging (Zeller's ddmin) over the schedule's context switches.
//!
//! A candidate keeps some of the original's switches and drops the others: at a dropped
//! switch the scheduler lets the running task go on instead, and everywhere else it takes
//! the original's choice when that task can run (task ids are stable: they are spawn
//! order), the running task otherwise, and the first runnable one as a last resort. So
//! every candidate runs to an end; it counts when it breaks the same property (seed key
//! and property name) as the original with fewer switches or steps and more of neither. The schedule it actually ran is the new
//! candidate's base, and the result is checked by an exact replay.
//!
//! Limits: the search is deterministic and bounded by `max_replays` runs of the scenario;
//! it is minimal with respect to dropping switches of the last accepted schedule
//! (1-minimal), not a global minimum; a scenario whose random choices depend on which
//! task draws them may shift its random steps, which is allowed (they are part of the
//! schedule that is replayed).

use std::collections::BTreeSet;

use shuttle_engine::scheduler::data::DataSource;
use shuttle_engine::scheduler::{
    RandomDataSource, Schedule, ScheduleStep, Scheduler, Task, TaskId,
};

use super::replay::{ReplayOutcome, property_of, replay_schedule};
use super::runner;
use crate::check::catalogue::Case;
use crate::unmodelled::Shared;

/// A shrunk schedule, with how it compares to the original.
#[derive(Debug, Clone)]
pub struct Minimized {
    /// The shrunk schedule.
    pub schedule: Schedule,
    /// The violation it reproduces.
    pub violation: String,
    /// Steps (scheduling decisions and random draws) of the original.
    pub steps_before: usize,
    /// Steps of the shrunk schedule.
    pub steps_after: usize,
    /// Context switches of the original.
    pub switches_before: usize,
    /// Context switches of the shrunk schedule.
    pub switches_after: usize,
    /// Runs of the scenario the search took.
    pub replays: usize,
}

/// Why a schedule could not be shrunk.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MinimizeError {
    /// The original schedule does not break a property when replayed.
    #[error("the schedule does not reproduce a violation: {0:?}")]
    NotAViolation(ReplayOutcome),
    /// The shrunk schedule did not replay exactly to the same property.
    #[error("the shrunk schedule does not replay to the same property: {0:?}")]
    NotReproducible(ReplayOutcome),
}

/// Shrinks `schedule`, a failing schedule of `case`, within `max_replays` runs.
pub fn minimize(
    case: Case,
    schedule: &Schedule,
    max_replays: usize,
) -> Result<Minimized, MinimizeError> {
    let original = replay_schedule(case, schedule.clone());
    let ReplayOutcome::Violation(violation) = original else {
        return Err(MinimizeError::NotAViolation(original));
    };
    let target = property_key(&violation);
    let mut search = Search {
        case,
        target,
        best: schedule.clone(),
        violation,
        replays: 1,
        max_replays,
    };
    search.ddmin();
    let exact = replay_schedule(case, search.best.clone());
    match &exact {
        ReplayOutcome::Violation(v) if property_key(v) == search.target => Ok(Minimized {
            steps_before: schedule.steps.len(),
            steps_after: search.best.steps.len(),
            switches_before: switches(schedule).len(),
            switches_after: switches(&search.best).len(),
            replays: search.replays + 1,
            schedule: search.best,
            violation: search.violation,
        }),
        _ => Err(MinimizeError::NotReproducible(exact)),
    }
}

fn property_key(violation: &str) -> Option<(String, String)> {
    property_of(violation).map(|(seed, property)| (seed.to_owned(), property.to_owned()))
}

/// The context switches of `schedule`: what a shrink minimizes, and what the scoreboard
/// reports of each committed failing schedule.
pub fn context_switches(schedule: &Schedule) -> usize {
    switches(schedule).len()
}

/// The indices (into the steps) of the context switches: task steps whose task differs
/// from the previous task step's.
fn switches(schedule: &Schedule) -> Vec<usize> {
    let mut previous = None;
    let mut found = Vec::new();
    for (index, step) in schedule.steps.iter().enumerate() {
        if let ScheduleStep::Task(task) = step {
            if previous.is_some_and(|p| p != *task) {
                found.push(index);
            }
            previous = Some(*task);
        }
    }
    found
}

/// Whether `candidate` improves on `best`: fewer context switches or fewer steps, and
/// more of neither. A guided run that drops a switch can let a polling loop spin longer,
/// which would trade a switch for many steps; that is not a shorter story.
fn shorter(candidate: &Schedule, best: &Schedule) -> bool {
    let (switches_c, switches_b) = (switches(candidate).len(), switches(best).len());
    let (steps_c, steps_b) = (candidate.steps.len(), best.steps.len());
    switches_c <= switches_b && steps_c <= steps_b && (switches_c, steps_c) != (switches_b, steps_b)
}

struct Search {
    case: Case,
    target: Option<(String, String)>,
    best: Schedule,
    violation: String,
    replays: usize,
    max_replays: usize,
}

impl Search {
    /// ddmin over the switches of the best schedule so far: try keeping each complement
    /// of `n` chunks; on success restart from the schedule that ran, else refine.
    fn ddmin(&mut self) {
        let mut n = 2;
        loop {
            let kept = switches(&self.best);
            if kept.len() < 2 || self.replays >= self.max_replays {
                return;
            }
            n = n.min(kept.len());
            let chunk = kept.len().div_ceil(n);
            let reduced = (0..n).any(|i| {
                let dropped: BTreeSet<usize> =
                    kept.iter().skip(i * chunk).take(chunk).copied().collect();
                self.try_dropping(&dropped)
            });
            if reduced {
                n = (n - 1).max(2);
            } else if n < kept.len() {
                n = (2 * n).min(kept.len());
            } else {
                return;
            }
        }
    }

    /// Runs the best schedule with the switches at `dropped` left out; keeps the schedule
    /// that ran if it breaks the target property and is [`shorter`].
    fn try_dropping(&mut self, dropped: &BTreeSet<usize>) -> bool {
        if self.replays >= self.max_replays {
            return false;
        }
        self.replays += 1;
        let ran = Shared::new(None);
        let guided = GuidedScheduler::new(self.best.clone(), dropped.clone(), ran.clone());
        let Ok(Some(failure)) =
            runner::run_quietly(self.case, guided, runner::Listeners::default())
                .map(|q| q.violation)
        else {
            return false;
        };
        let Some(ran) = ran.take() else {
            return false;
        };
        let better = property_key(&failure) == self.target && shorter(&ran, &self.best);
        if better {
            self.best = ran;
            self.violation = failure;
        }
        better
    }
}

/// A scheduler that follows a schedule loosely: it skips the switches it is told to drop
/// and never gets stuck (see the module docs). It records what it did and, when the run
/// is over, posts that schedule to its mailbox.
#[derive(Debug)]
struct GuidedScheduler {
    plan: Vec<TaskId>,
    /// Indices into `plan` where the running task goes on instead.
    dropped: BTreeSet<usize>,
    next: usize,
    data: RandomDataSource,
    started: bool,
    ran: Schedule,
    mailbox: Shared<Option<Schedule>>,
}

impl GuidedScheduler {
    fn new(
        schedule: Schedule,
        dropped_steps: BTreeSet<usize>,
        mailbox: Shared<Option<Schedule>>,
    ) -> Self {
        // The task steps in order, and the dropped switches as positions among them.
        let mut plan = Vec::new();
        let mut dropped = BTreeSet::new();
        for (index, step) in schedule.steps.iter().enumerate() {
            if let ScheduleStep::Task(task) = step {
                if dropped_steps.contains(&index) {
                    dropped.insert(plan.len());
                }
                plan.push(*task);
            }
        }
        Self {
            plan,
            dropped,
            next: 0,
            data: RandomDataSource::initialize(schedule.seed),
            started: false,
            ran: Schedule::new(schedule.seed),
            mailbox,
        }
    }
}

impl Drop for GuidedScheduler {
    fn drop(&mut self) {
        let ran = std::mem::replace(&mut self.ran, Schedule::new(0));
        self.mailbox.put(ran);
    }
}

impl Scheduler for GuidedScheduler {
    fn new_execution(&mut self) -> Option<Schedule> {
        if self.started {
            return None;
        }
        self.started = true;
        let seed = self.data.reinitialize();
        self.ran = Schedule::new(seed);
        Some(Schedule::new(seed))
    }

    fn next_task(
        &mut self,
        runnable: &[&Task],
        current: Option<TaskId>,
        is_yielding: bool,
    ) -> Option<TaskId> {
        let position = self.next;
        self.next += 1;
        let can_run = |task: TaskId| runnable.iter().any(|t| t.id() == task);
        let current = current.filter(|&task| can_run(task) && !is_yielding);
        let planned = self
            .plan
            .get(position)
            .copied()
            .filter(|&task| can_run(task));
        let choice = if self.dropped.contains(&position) {
            current.or(planned)
        } else {
            planned.or(current)
        };
        let choice = choice.or_else(|| runnable.first().map(|t| t.id()));
        if let Some(task) = choice {
            self.ran.push_task(task);
        }
        choice
    }

    fn next_u64(&mut self) -> u64 {
        self.ran.push_random();
        self.data.next_u64()
    }
}
