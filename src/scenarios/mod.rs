//! Reusable scenario drivers and the invariants they check, shared by the loom tests, the
//! shuttle tests, the soak tool and the property tests.
//!
//! A scenario wires real components together in process, runs them on threads from
//! [`crate::sync`], and returns `Err(`[`Violation`]`)` naming the seed and the property it
//! saw broken. A checker turns that into a failing execution; the soak tool and the tests
//! compare it with the [`catalogue`](crate::check::catalogue)'s expectation: fixed variants must hold, legacy
//! variants must be caught.

pub mod allocation;
pub mod cluster;
pub mod container;
pub mod rng;
pub mod standby;
pub mod term_fencing;

use crate::sync::thread;

/// A broken invariant: which seed's property, and what was seen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{seed}: property `{property}` violated: {detail}")]
pub struct Violation {
    /// The seed report the property comes from (`HDDS-17268`, …).
    pub seed: &'static str,
    /// The property, as named by its checking function's docs.
    pub property: &'static str,
    /// What was observed.
    pub detail: String,
}

/// Joins every handle (even after a failure) and concatenates their results; the first
/// violation wins. A panicked thread is reported as a violation too.
pub fn join_all<T>(
    handles: Vec<thread::JoinHandle<Result<Vec<T>, Violation>>>,
) -> Result<Vec<T>, Violation> {
    let mut all = Vec::new();
    let mut first_error = None;
    for handle in handles {
        let result = handle.join().unwrap_or_else(|_| {
            Err(Violation {
                seed: "scenario",
                property: "no thread panics",
                detail: "a scenario thread panicked".into(),
            })
        });
        match result {
            Ok(items) => all.extend(items),
            Err(violation) => {
                first_error.get_or_insert(violation);
            }
        }
    }
    match first_error {
        Some(violation) => Err(violation),
        None => Ok(all),
    }
}
