//! Differential conformance (the reference-model method of AWS ShardStore): generated
//! operation sequences, crash and leadership operations among them, applied to an
//! implementation and to the crate's reference behavior, every observable output compared;
//! a divergence is shrunk by proptest and told as a step table.
//!
//! **The race** a sequential run can still show is the seeds' logic half: a heartbeat term
//! before init discarded (HDDS-17268), a report judged after its block completed
//! (HDFS-2742). Interleavings are the loom and shuttle suites' job.
//!
//! **What is compared** after every operation is what upstream code can observe of the
//! component (a command handed out, the term, the queue; a block's locations, the corrupt
//! replicas, the safe-mode counts), never its internal state.

use std::cell::Cell;
use std::fmt;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

use crate::story::{Event, FieldValue, Story};

/// How many sequences a differential run tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DifferentialConfig {
    /// Generated sequences (proptest cases) that must all agree.
    pub cases: u32,
    /// Seed of the generator: a run is reproducible.
    pub seed: u64,
    /// Most shrinking steps once a divergence is found.
    pub max_shrink_iters: u32,
}

impl Default for DifferentialConfig {
    /// 1 024 sequences, a fixed seed, up to 4 096 shrinking steps. The kit's mutation score
    /// (`examples/conformance-kit`) showed mutants first caught after 172 and 410 sequences
    /// (an exact roll of the pending window, a report judged behind a future one): 256 left
    /// them to chance.
    fn default() -> Self {
        Self {
            cases: 1_024,
            seed: 0x0D1F_F0A1,
            max_shrink_iters: 4_096,
        }
    }
}

/// One operation as both sides ran it, for the step table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Step {
    /// What the operation is (`take next command`, `replay edits`).
    pub(super) label: String,
    /// Its arguments, `name=value`.
    pub(super) fields: Vec<(String, String)>,
    /// Every observable output of the reference after it.
    pub(super) reference: String,
    /// The same of the implementation.
    pub(super) implementation: String,
}

impl Step {
    /// Whether the two sides differ at this step.
    pub(super) fn diverges(&self) -> bool {
        self.reference != self.implementation
    }
}

/// The first operation where an implementation and its reference differ, in a shrunk
/// sequence; its `Display` is the step table up to that operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// The seed whose component this is.
    pub seed_key: &'static str,
    /// The reference behavior held to.
    pub reference: &'static str,
    /// Operations in the shrunk sequence, up to and including the diverging one.
    pub length: usize,
    /// The proptest cases tried until the first divergence (before shrinking).
    pub found_after_cases: u64,
    /// The diverging operation and both outputs.
    pub violation: String,
    /// The step table: one event per operation, with both sides' outputs.
    pub story: Story,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.story.ending_at(&self.violation))
    }
}

/// What a differential run found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DifferentialReport {
    /// The implementation (its type name).
    pub implementation: String,
    /// The reference behavior held to.
    pub reference: &'static str,
    /// Proptest cases run (until the first divergence, when there is one).
    pub cases: u64,
    /// The shrunk first divergence, if any.
    pub divergence: Option<Divergence>,
}

impl DifferentialReport {
    /// Panics with the step table of the divergence, if there is one.
    pub fn assert_conforms(&self) {
        if let Some(divergence) = &self.divergence {
            panic!(
                "{} diverges from {} after {} generated sequence(s):\n{divergence}",
                self.implementation, self.reference, divergence.found_after_cases
            );
        }
    }

    /// Panics unless a divergence was found; returns it. For a defective implementation.
    pub fn assert_diverges(&self) -> &Divergence {
        match &self.divergence {
            Some(divergence) => divergence,
            None => panic!(
                "{} agreed with {} over {} generated sequences: the defect escaped",
                self.implementation, self.reference, self.cases
            ),
        }
    }
}

/// Runs `config.cases` sequences drawn from `ops` through `run`, which applies one
/// sequence to both sides and returns its steps up to the first divergence (all of them
/// when none); shrinks the first diverging sequence and tells it.
pub(super) fn explore<S>(
    (seed_key, reference, implementation): (&'static str, &'static str, String),
    config: &DifferentialConfig,
    ops: S,
    run: impl Fn(&S::Value) -> Vec<Step>,
) -> DifferentialReport
where
    S: Strategy,
    S::Value: Clone + fmt::Debug,
{
    let proptest_config = Config {
        cases: config.cases,
        failure_persistence: None,
        max_shrink_iters: config.max_shrink_iters,
        ..Config::default()
    };
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&config.seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
    let mut runner = TestRunner::new_with_rng(proptest_config, rng);
    let tried = Cell::new(0u64);
    let first_found = Cell::new(None);
    let outcome = runner.run(&ops, |sequence| {
        if first_found.get().is_none() {
            tried.set(tried.get() + 1);
        }
        match run(&sequence).last() {
            Some(step) if step.diverges() => {
                first_found.set(Some(first_found.get().unwrap_or(tried.get())));
                Err(TestCaseError::fail("diverges"))
            }
            _ => Ok(()),
        }
    });
    let divergence = match outcome {
        Err(TestError::Fail(_, minimal)) => {
            let steps = run(&minimal);
            Some(tell(
                seed_key,
                reference,
                first_found.get().unwrap_or(tried.get()),
                steps,
            ))
        }
        // An abort (too many rejects) cannot happen: no strategy here rejects.
        _ => None,
    };
    DifferentialReport {
        implementation,
        reference,
        cases: tried.get(),
        divergence,
    }
}

/// The step table of a diverging sequence.
fn tell(
    seed_key: &'static str,
    reference: &'static str,
    found: u64,
    steps: Vec<Step>,
) -> Divergence {
    let events = steps
        .iter()
        .enumerate()
        .map(|(index, step)| {
            let mut fields: Vec<(String, FieldValue)> = step
                .fields
                .iter()
                .map(|(name, text)| (name.clone(), FieldValue::read(name, text)))
                .collect();
            fields.push(("reference".into(), step.reference.as_str().into()));
            if step.diverges() {
                fields.push(("implementation".into(), step.implementation.as_str().into()));
            }
            Event {
                step: index + 1,
                thread: "differential".into(),
                node: None,
                component: "conformance".into(),
                name: step.label.clone(),
                fields,
            }
        })
        .collect();
    let last = steps.last();
    let violation = format!(
        "{seed_key}: property `the implementation behaves as {reference}` violated: first \
         divergence at step {} ({}): {reference} gives {}, the implementation {}",
        steps.len(),
        last.map_or("", |s| s.label.as_str()),
        last.map_or("", |s| s.reference.as_str()),
        last.map_or("", |s| s.implementation.as_str()),
    );
    Divergence {
        seed_key,
        reference,
        length: steps.len(),
        found_after_cases: found,
        violation,
        story: Story {
            events,
            left_out: 0,
        },
    }
}
