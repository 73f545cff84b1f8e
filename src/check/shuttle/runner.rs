//! One exploration of a case under a shuttle scheduler, on an OS thread of its own, and
//! quietly: a violation is handed out of the execution instead of failing it, and the
//! scheduler, wrapped in [`Recording`], keeps the schedule it ran and ends the run there.
//!
//! So an expected catch prints nothing (no panic, no schedule persisted by shuttle under a
//! temporary directory), and runs in one process are independent of each other.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use shuttle::rand::{RngCore, thread_rng};
use shuttle::scheduler::Scheduler;
use shuttle::{Config, FailurePersistence, Runner};
use shuttle_engine::scheduler::{Schedule, Task, TaskId};

use super::observe::{ExecutionSinks, Observe, Observed};
use super::schedule_file;
use crate::check::catalogue::Case;
use crate::check::monitor::{Judgement, MonitorSet};
use crate::scenarios::Violation;
use crate::story::{EventSink, Recorder, Story};
use crate::unmodelled::{Counter, Shared, on_new_os_thread, panic_message};

/// How an exploration ended.
#[derive(Debug, Clone, Default)]
pub struct Explored {
    /// Executions run, up to and including a failing one.
    pub executions: u64,
    /// The first failure (a violation's message, or another panic's).
    pub failure: Option<String>,
    /// The failing schedule, as shuttle encodes it.
    pub schedule: Option<String>,
    /// The event logs written.
    pub observed: Observed,
}

/// Explores `case` under `scheduler` until it ends, a failure, or `max_time`, observing
/// its executions as `observe` says.
pub fn explore<S: Scheduler + Send + 'static>(
    case: Case,
    scheduler: S,
    max_time: Option<Duration>,
    observe: Observe,
) -> Explored {
    explore_run(move |seed| case.run(seed), scheduler, max_time, observe)
}

/// [`explore`] for any scenario run `run` (given the scenario seed), not only a catalogue
/// case: what a conformance suite runs against another implementation.
pub fn explore_run<S: Scheduler + Send + 'static>(
    run: impl Fn(u64) -> Result<(), Violation> + Send + Sync + 'static,
    scheduler: S,
    max_time: Option<Duration>,
    observe: Observe,
) -> Explored {
    // Leaked so the 'static test body can count across executions; outside the model.
    let executions: &'static Counter = Box::leak(Box::new(Counter::new()));
    let found = Shared::new(None);
    let ran = Shared::new(None);
    let recording = Recording::new(scheduler, found.clone(), ran.clone());
    let inbox = found.clone();
    let coverage = observe.coverage.clone();
    let sinks = observe.any().then(|| ExecutionSinks::new(observe));
    let observed = sinks.clone();
    let outcome = on_new_os_thread(move || {
        let mut config = quiet_config();
        config.max_time = max_time;
        // `Recording` keeps the schedule; a panic other than a violation is still printed.
        config.failure_persistence = FailurePersistence::None;
        let recorder = sinks
            .as_ref()
            .map(|sinks| sinks.install_on(Recorder::discarding()));
        let in_body = recorder.clone().zip(sinks);
        let counted = coverage.clone();
        let body = move || {
            executions.increment();
            let seed = thread_rng().next_u64();
            if let Some((recorder, sinks)) = &in_body {
                recorder.take();
                sinks.start();
            }
            if let Some(coverage) = &counted {
                coverage.start();
            }
            let result = run(seed);
            if let Some(coverage) = &counted {
                coverage.end();
            }
            if let Some((_, sinks)) = &in_body {
                sinks.end();
            }
            if let Err(violation) = result {
                inbox.put(violation.to_string());
            }
        };
        let run = || Runner::new(recording, config).run(body);
        catch_unwind(AssertUnwindSafe(|| match (coverage, recorder) {
            (Some(coverage), recorder) if super::relay::relaying() => {
                super::relay::with_subscriber(coverage.hook(recorder), run)
            }
            (Some(coverage), recorder) => coverage.install(recorder, run),
            (None, Some(recorder)) if super::relay::relaying() => {
                super::relay::with_recorder(&recorder, run)
            }
            (None, Some(recorder)) => recorder.install(run),
            (None, None) => run(),
        }))
        .err()
        .map(|payload| panic_message(payload.as_ref()))
    });
    let failure = found
        .take()
        .or_else(|| outcome.unwrap_or_else(|payload| Some(panic_message(payload.as_ref()))));
    let schedule = failure
        .as_ref()
        .and_then(|_| ran.take())
        .map(|schedule| schedule_file::encode(&schedule));
    Explored {
        executions: executions.get(),
        failure,
        schedule,
        observed: observed.map(|s| s.observed()).unwrap_or_default(),
    }
}

/// A scheduler that records the choices `inner` makes in the current execution, and ends
/// the run at the first execution that found a violation (`found` is set). When the run
/// ends, by a violation, by `inner`, or by a panic, the last execution's schedule is put in
/// `ran`: the failing one, when there is a failure.
struct Recording<S> {
    inner: S,
    current: Schedule,
    found: Shared<Option<String>>,
    ran: Shared<Option<Schedule>>,
}

impl<S> Recording<S> {
    fn new(inner: S, found: Shared<Option<String>>, ran: Shared<Option<Schedule>>) -> Self {
        Self {
            inner,
            current: Schedule::new(0),
            found,
            ran,
        }
    }
}

impl<S> Drop for Recording<S> {
    fn drop(&mut self) {
        let current = std::mem::replace(&mut self.current, Schedule::new(0));
        self.ran.put(current);
    }
}

impl<S: Scheduler> Scheduler for Recording<S> {
    fn new_execution(&mut self) -> Option<Schedule> {
        if self.found.with(|found| found.is_some()) {
            return None;
        }
        let schedule = self.inner.new_execution()?;
        // The last execution's buffer is reused: a hold run records thousands of them.
        self.current.seed = schedule.seed;
        self.current.steps.clear();
        Some(schedule)
    }

    fn next_task(
        &mut self,
        runnable: &[&Task],
        current: Option<TaskId>,
        is_yielding: bool,
    ) -> Option<TaskId> {
        let choice = self.inner.next_task(runnable, current, is_yielding);
        if let Some(task) = choice {
            self.current.push_task(task);
        }
        choice
    }

    fn next_u64(&mut self) -> u64 {
        self.current.push_random();
        self.inner.next_u64()
    }
}

/// A random or PCT scheduler asked only where there is a choice: a step with one runnable
/// task runs it without the inner scheduler. Neither draws anything that matters there
/// (the random scheduler picks uniformly from one task, PCT counts only steps with a
/// choice, as its paper's sequential-execution rule says), but the random scheduler's
/// draw cost a tenth of a cluster execution, where most steps have one task. Not for a
/// scheduler that counts every step (the uniform random walk estimates each task's events
/// from them) or replays a schedule.
#[derive(Debug)]
pub struct ChoicesOnly<S>(pub S);

impl<S: Scheduler> Scheduler for ChoicesOnly<S> {
    fn new_execution(&mut self) -> Option<Schedule> {
        self.0.new_execution()
    }

    fn next_task(
        &mut self,
        runnable: &[&Task],
        current: Option<TaskId>,
        is_yielding: bool,
    ) -> Option<TaskId> {
        match runnable {
            [only] => Some(only.id()),
            _ => self.0.next_task(runnable, current, is_yielding),
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
}

/// What a quiet run found: the first violation, with the story of its execution when
/// one was recorded.
#[derive(Debug, Clone, Default)]
pub struct Quiet {
    /// The first violation's message.
    pub violation: Option<String>,
    /// The protocol events of the violating execution (empty unless recorded).
    pub story: Story,
    /// The event monitors' verdicts over the violating (else the last) execution, when
    /// they ran.
    pub judgements: Vec<Judgement>,
}

/// What a quiet run records of its executions.
#[derive(Default)]
pub struct Listeners {
    /// Keep each execution's story (the violating one's is returned).
    pub story: bool,
    /// Hand every event to this sink too (an event log writer, say).
    pub sink: Option<Box<dyn EventSink>>,
    /// Run the event monitors over each execution (their verdicts do not change its
    /// outcome).
    pub monitors: bool,
}

impl Listeners {
    /// The recorder these listeners need, with the monitors' sink; `None` when nothing
    /// listens.
    fn recorder(self) -> (Option<Recorder>, Option<Shared<MonitorSet>>) {
        let monitors = self.monitors.then(|| Shared::new(MonitorSet::all()));
        if !self.story && self.sink.is_none() && monitors.is_none() {
            return (None, None);
        }
        let mut recorder = if self.story {
            Recorder::default()
        } else {
            Recorder::discarding()
        };
        if let Some(sink) = self.sink {
            recorder = recorder.with_sink(sink);
        }
        if let Some(monitors) = &monitors {
            recorder = recorder.with_sink(monitors.clone());
        }
        (Some(recorder), monitors)
    }
}

/// Runs the executions `scheduler` asks for and returns the first violation, without a
/// panic: a violation is handed out of the run instead of failing it, so nothing is
/// printed and no schedule is persisted (the caller's scheduler knows what it did). The
/// `listeners` record each execution's story, hand its events to a sink, or run the
/// event monitors over it (whose verdicts are returned, not acted on). A panic of another kind still fails the run and is returned
/// as `Err`.
pub fn run_quietly<S: Scheduler + Send + 'static>(
    case: Case,
    scheduler: S,
    listeners: Listeners,
) -> Result<Quiet, String> {
    run_quietly_with(move |seed| case.run(seed), scheduler, listeners)
}

/// [`run_quietly`] for any scenario run `run` (given the scenario seed).
pub fn run_quietly_with<S: Scheduler + Send + 'static>(
    run: impl Fn(u64) -> Result<(), Violation> + Send + Sync + 'static,
    scheduler: S,
    listeners: Listeners,
) -> Result<Quiet, String> {
    let found = Shared::new(None);
    let last = Shared::new(Vec::new());
    let inbox = found.clone();
    let judged = last.clone();
    let keep_story = listeners.story;
    let outcome = on_new_os_thread(move || {
        // Installed around the whole run, not inside an execution: shuttle starts every
        // task with the dispatcher the run was started under.
        let (recorder, monitors) = listeners.recorder();
        let in_body = recorder.clone();
        let body = move || {
            let seed = thread_rng().next_u64();
            if let Some(recorder) = &in_body {
                recorder.take();
            }
            if let Some(monitors) = &monitors {
                monitors.with(|set| *set = MonitorSet::all());
            }
            let result = run(seed);
            let judgements = monitors
                .as_ref()
                .map(|m| m.with(MonitorSet::finish))
                .unwrap_or_default();
            judged.with(|last| *last = judgements.clone());
            if let Err(violation) = result {
                let story = match &in_body {
                    Some(recorder) if keep_story => recorder.take(),
                    _ => Story::default(),
                };
                inbox.put(Quiet {
                    violation: Some(violation.to_string()),
                    story,
                    judgements,
                });
            }
        };
        let run = || Runner::new(scheduler, quiet_config()).run(body);
        catch_unwind(AssertUnwindSafe(|| match recorder {
            Some(recorder) => recorder.install(run),
            None => run(),
        }))
        .map_err(|payload| panic_message(payload.as_ref()))
    });
    outcome
        .map_err(|payload| panic_message(payload.as_ref()))
        .and_then(|run| run)?;
    Ok(found.take().unwrap_or_else(|| Quiet {
        judgements: last.with(std::mem::take),
        ..Quiet::default()
    }))
}

/// Shuttle's configuration without its warning that it treats every atomic ordering as
/// `SeqCst`: weaker orderings are loom's job here (the loom models explore them).
fn quiet_config() -> Config {
    let mut config = Config::new();
    config.silence_warnings = true;
    config
}
