//! Runs a scenario under loom, counts the executions and keeps the violation, if any.

use std::panic::{AssertUnwindSafe, catch_unwind};

use hadoop_ref::scenarios::Violation;
use hadoop_ref::unmodelled::{Counter, Stopwatch};

/// What one exploration found.
pub struct Exploration {
    /// Executions loom ran (up to and including the failing one).
    pub iterations: u64,
    /// The violation's message, if an execution broke an invariant.
    pub violation: Option<String>,
}

/// Explores `scenario` exhaustively (loom's defaults; `LOOM_MAX_PREEMPTIONS` and
/// `LOOM_CHECKPOINT_FILE` apply) and prints the iteration count and wall time.
#[allow(dead_code)] // Not every loom target explores exhaustively.
pub fn explore(name: &str, scenario: fn() -> Result<(), Violation>) -> Exploration {
    explore_with(name, loom::model::Builder::new(), scenario)
}

/// Explores `scenario` with at most `bound` preemptions per execution: for a race whose
/// exhaustive exploration does not fit the budget (the bound is stated with the test).
#[allow(dead_code)] // Not every loom target bounds its model.
pub fn explore_bounded(
    name: &str,
    bound: usize,
    scenario: fn() -> Result<(), Violation>,
) -> Exploration {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(bound);
    explore_with(
        &format!("{name} (preemption bound {bound})"),
        builder,
        scenario,
    )
}

fn explore_with(
    name: &str,
    builder: loom::model::Builder,
    scenario: fn() -> Result<(), Violation>,
) -> Exploration {
    // Leaked so the 'static model closure can count across executions; outside the model.
    let iterations: &'static Counter = Box::leak(Box::new(Counter::new()));
    let stopwatch = Stopwatch::start();
    let result = catch_unwind(AssertUnwindSafe(|| {
        builder.check(move || {
            iterations.increment();
            if let Err(violation) = scenario() {
                panic!("{violation}");
            }
        })
    }));
    let violation = result.err().map(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "non-string panic".to_owned())
    });
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
    }
}

/// Asserts that the exploration caught a violation of the seed's property.
pub fn assert_caught(exploration: &Exploration, seed: &str) {
    match &exploration.violation {
        Some(message) => assert!(
            message.contains(seed),
            "loom failed for another reason than a {seed} violation: {message}"
        ),
        None => panic!(
            "loom explored {} executions and caught nothing: the checker cannot see the {seed} defect",
            exploration.iterations
        ),
    }
}

/// Asserts that every execution held.
pub fn assert_holds(exploration: &Exploration) {
    if let Some(message) = &exploration.violation {
        panic!("loom found a violating execution: {message}");
    }
}
