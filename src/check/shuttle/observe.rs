//! What a shuttle run records of its executions besides their verdicts: the event logs
//! of its first executions (NDJSON, `docs/event-log.md`), and the verdicts of the event
//! monitors run inline over every execution.
//!
//! The monitors do not decide an execution's outcome: a scenario checks the properties
//! its case claims, while every monitor judges its property on every run, including one a
//! variant breaks by design (the seed's patch leaves HDDS-17268's restart window open; a
//! case may run a legacy component whose harm another fix holds back). Their violations
//! are counted per property, for the soak's report. Each distinct event sequence of a
//! run is judged once ([`JudgedOnce`]): an execution that repeats one gets its verdicts.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::check::exploration::Coverage;
use crate::check::monitor::memo::JudgedOnce;
use crate::check::monitor::{Judgement, MonitorSet};
use crate::story::log::encode_line;
use crate::story::{Event, EventSink};
use crate::unmodelled::Shared;

/// The most bytes of one execution's event log kept in memory before it is written; an
/// execution that logs more has no log written (counted in [`Observed::logs_dropped`]).
pub const MAX_EXECUTION_LOG_BYTES: usize = 64 << 20;

/// Event logs of a run's first executions.
#[derive(Debug, Clone)]
pub struct EventLogs {
    /// The directory the logs go to.
    pub dir: PathBuf,
    /// The name every log starts with (`scenario.variant.scheduler`); each is
    /// `NAME.NNNNN.ndjson`, numbered from 1.
    pub name: String,
    /// How many executions are logged, the first ones.
    pub executions: usize,
}

/// What a run observes of its executions.
#[derive(Debug, Clone, Default)]
pub struct Observe {
    /// Write the event logs of the first executions.
    pub event_logs: Option<EventLogs>,
    /// Run every event monitor inline over every execution and count its violations,
    /// with these monitors (shared by the runs given the same ones: a sequence one judged
    /// is a repeat in the next).
    pub monitors: Option<InlineMonitors>,
    /// Count what the executions explored into this coverage (`check::exploration`):
    /// its own cheap hook, no recorder needed.
    pub coverage: Option<Coverage>,
}

impl Observe {
    /// Whether anything is observed through the story's recorder (logs, monitors).
    pub fn any(&self) -> bool {
        self.event_logs.is_some() || self.monitors.is_some()
    }
}

/// The event monitors a run judges its executions with inline: every monitor, each
/// taking the events its verdict reads ([`MonitorSet::verdicts_only`]), each distinct
/// event sequence judged once ([`JudgedOnce`]). A clone shares them: hand the same ones
/// to the runs (a soak's chunks) of one case, so that what one judged the next
/// remembers, and a case whose executions never repeat finds it out once.
#[derive(Debug, Clone)]
pub struct InlineMonitors(Shared<JudgedOnce>);

impl Default for InlineMonitors {
    fn default() -> Self {
        Self(Shared::new(JudgedOnce::new(MonitorSet::verdicts_only())))
    }
}

/// What a run observed: the logs it wrote, the monitors' violations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    /// Logs written.
    pub logs_written: usize,
    /// Logs not written: larger than [`MAX_EXECUTION_LOG_BYTES`], or the file could not
    /// be written.
    pub logs_dropped: usize,
    /// Executions the monitors judged.
    pub monitored: u64,
    /// Of those, the executions whose event sequence the monitors had judged before, in
    /// this run or an earlier one given the same [`InlineMonitors`] (their verdicts
    /// remembered, [`JudgedOnce`]).
    pub monitored_repeats: u64,
    /// Per property (`SEED: property`), the executions a monitor found it violated in.
    pub violations: BTreeMap<String, u64>,
}

/// The sinks of one run, reset at each execution's start and read at its end.
#[derive(Debug, Clone)]
pub struct ExecutionSinks {
    observe: Observe,
    log: Shared<ExecutionLog>,
    executions: Shared<usize>,
    observed: Shared<Observed>,
}

/// One execution's log lines, in memory until the execution ends.
#[derive(Debug, Default)]
struct ExecutionLog {
    text: String,
    overflow: bool,
    on: bool,
}

impl EventSink for ExecutionLog {
    fn event(&mut self, event: &Event) {
        if !self.on || self.overflow {
            return;
        }
        encode_line(event, None, &mut self.text);
        self.text.push('\n');
        if self.text.len() > MAX_EXECUTION_LOG_BYTES {
            self.overflow = true;
            self.text = String::new();
        }
    }
}

impl ExecutionSinks {
    /// The sinks `observe` asks for; install them on a recorder with
    /// [`ExecutionSinks::install_on`].
    pub fn new(observe: Observe) -> Self {
        Self {
            observe,
            log: Shared::new(ExecutionLog::default()),
            executions: Shared::new(0),
            observed: Shared::new(Observed::default()),
        }
    }

    /// `recorder` with these sinks added.
    pub fn install_on(&self, recorder: crate::story::Recorder) -> crate::story::Recorder {
        let recorder = match self.observe.event_logs {
            Some(_) => recorder.with_sink(self.log.clone()),
            None => recorder,
        };
        match &self.observe.monitors {
            Some(monitors) => recorder.with_sink(monitors.0.clone()),
            None => recorder,
        }
    }

    /// At an execution's start: fresh monitors, and an empty log if this one is logged.
    pub fn start(&self) {
        let execution = self.executions.with(|n| {
            *n += 1;
            *n
        });
        let logged = self
            .observe
            .event_logs
            .as_ref()
            .is_some_and(|logs| execution <= logs.executions);
        self.log.with(|log| {
            *log = ExecutionLog {
                on: logged,
                ..ExecutionLog::default()
            }
        });
        if let Some(monitors) = &self.observe.monitors {
            monitors.0.with(JudgedOnce::reset);
        }
    }

    /// At an execution's end: writes its log if it is logged, and counts the monitors'
    /// violations; returns the monitors' verdicts that are violations (empty when they do
    /// not run).
    pub fn end(&self) -> Vec<Judgement> {
        self.write_log();
        let Some(monitors) = &self.observe.monitors else {
            return Vec::new();
        };
        let (violations, repeat) = monitors.0.with(|monitors| {
            let repeats = monitors.repeats();
            (monitors.violations(), monitors.repeats() > repeats)
        });
        self.observed.with(|observed| {
            observed.monitored += 1;
            observed.monitored_repeats += u64::from(repeat);
            for judgement in &violations {
                *observed
                    .violations
                    .entry(format!("{}: {}", judgement.seed, judgement.property))
                    .or_default() += 1;
            }
        });
        violations
    }

    fn write_log(&self) {
        let Some(logs) = &self.observe.event_logs else {
            return;
        };
        let (on, overflow, text) = self
            .log
            .with(|log| (log.on, log.overflow, std::mem::take(&mut log.text)));
        if !on {
            return;
        }
        let path = logs.dir.join(format!(
            "{}.{:05}.ndjson",
            logs.name,
            self.executions.with(|n| *n)
        ));
        let written = !overflow && std::fs::write(&path, text).is_ok();
        self.observed.with(|observed| {
            if written {
                observed.logs_written += 1;
            } else {
                observed.logs_dropped += 1;
            }
        });
    }

    /// What was written so far.
    pub fn observed(&self) -> Observed {
        self.observed.with(|observed| observed.clone())
    }
}
