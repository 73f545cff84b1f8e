//! Runs a scenario under loom, counts the executions and keeps the violation, if any, with
//! the story of the execution that broke it (printed when a test fails).

use std::panic::{AssertUnwindSafe, catch_unwind};

use hadoop_ref::scenarios::Violation;
use hadoop_ref::story::{Recorder, Story};
use hadoop_ref::unmodelled::{Counter, ExpectedPanic, Shared, Stopwatch, quiet_expected_panics};

/// What one exploration found.
pub struct Exploration {
    /// Executions loom ran (up to and including the failing one).
    pub iterations: u64,
    /// The violation's message, if an execution broke an invariant (or another panic's).
    pub violation: Option<String>,
    /// The protocol events of the violating execution, and only of it.
    pub story: Option<Story>,
}

/// Explores `scenario` exhaustively (loom's defaults; `LOOM_MAX_PREEMPTIONS` and
/// `LOOM_CHECKPOINT_FILE` apply, and `ci/loom` refuses the first) and prints the
/// iteration count and wall time.
pub fn explore(name: &str, scenario: fn() -> Result<(), Violation>) -> Exploration {
    explore_with(name, loom::model::Builder::new(), scenario)
}

/// Explores `scenario` with at most `preemptions` preemptions per execution and room for
/// `max_branches` scheduling points: for a model too large to explore exhaustively, such
/// as a whole `MiniOzoneCluster`, whose set-up alone takes thousands of lock operations.
/// Not exhaustive: say so where it is used.
pub fn explore_bounded(
    name: &str,
    preemptions: usize,
    max_branches: usize,
    scenario: fn() -> Result<(), Violation>,
) -> Exploration {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemptions);
    builder.max_branches = max_branches;
    explore_with(name, builder, scenario)
}

fn explore_with(
    name: &str,
    builder: loom::model::Builder,
    scenario: fn() -> Result<(), Violation>,
) -> Exploration {
    // Leaked so the 'static model closure can count across executions; outside the model.
    let iterations: &'static Counter = Box::leak(Box::new(Counter::new()));
    let found: Shared<Option<(String, Story)>> = Shared::new(None);
    let inbox = found.clone();
    // Installed around the whole exploration (every loom thread of every execution sees
    // it) and emptied at the start of each execution: the story is the failing one's.
    let recorder = Recorder::default();
    let in_model = recorder.clone();
    quiet_expected_panics();
    let stopwatch = Stopwatch::start();
    let result = recorder.install(|| {
        catch_unwind(AssertUnwindSafe(|| {
            builder.check(move || {
                iterations.increment();
                in_model.take();
                if let Err(violation) = scenario() {
                    inbox.put((violation.to_string(), in_model.take()));
                    std::panic::panic_any(ExpectedPanic);
                }
            })
        }))
    });
    let (violation, story) = match (result, found.take()) {
        (Ok(()), _) => (None, None),
        (Err(_), Some((violation, story))) => (Some(violation), Some(story)),
        (Err(payload), None) => (Some(panic_message(payload.as_ref())), None),
    };
    println!(
        "loom {name}: {} iteration(s) in {:.2?}, {}",
        iterations.get(),
        stopwatch.elapsed(),
        match &violation {
            Some(v) => format!("caught: {v}"),
            None => "no violation".to_owned(),
        }
    );
    Exploration {
        iterations: iterations.get(),
        violation,
        story,
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "non-string panic".to_owned())
}

impl Exploration {
    /// The failing execution's story ending at the violation, or the violation alone.
    fn told(&self) -> String {
        let violation = self.violation.as_deref().unwrap_or("no violation");
        match &self.story {
            Some(story) => story.ending_at(violation).to_string(),
            None => violation.to_owned(),
        }
    }
}

/// Asserts that the exploration caught a violation of the seed's property.
pub fn assert_caught(exploration: &Exploration, seed: &str) {
    match &exploration.violation {
        Some(message) => assert!(
            message.contains(seed),
            "loom failed for another reason than a {seed} violation:\n{}",
            exploration.told()
        ),
        None => panic!(
            "loom explored {} executions and caught nothing: the checker cannot see the {seed} defect",
            exploration.iterations
        ),
    }
}

/// Asserts that every execution held.
pub fn assert_holds(exploration: &Exploration) {
    if exploration.violation.is_some() {
        panic!(
            "loom found a violating execution; its story:\n{}",
            exploration.told()
        );
    }
}
