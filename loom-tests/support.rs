//! Runs a scenario under loom, counts the executions and keeps the violation, if any, with
//! the story of the execution that broke it (printed when a test fails).

pub use hadoop_ref::check::loom::{Exploration, explore, explore_bounded};

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
