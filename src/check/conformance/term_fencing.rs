//! The HDDS-17268 conformance suites: the catalogue's term-fencing scenarios, its loom
//! models and a differential property test, run against any
//! [`StateContextApi`](crate::datanode::state_context::StateContextApi).
//!
//! **The race.** A restarted datanode that discards a heartbeat term before
//! `initTermOfLeaderSCM`, or two endpoint threads that lose a term in an unlocked
//! check-then-set, settle on a deposed leader's term and run its commands.
//!
//! **What holds an implementation to the fix.** Its context runs inside the crate's real
//! heartbeat tasks and command dispatcher against in-process SCMs, judged by the scenarios'
//! invariants under loom and shuttle, and step by step against `StateContext` itself.

use crate::check::catalogue::{self, STALE_LEADER_ROUNDS};
use crate::datanode::state_context::{StateContextBehavior, StateContextFactory};
use crate::scenarios::Violation;
use crate::scenarios::term_fencing::{
    FencingClusterShape, OldLeader, concurrent_leader_heartbeats_keep_the_highest_term,
    deposed_leader_command_never_runs_after_restart, heartbeat_term_fences_stale_leader_command,
    leader_transfers_never_run_a_stale_command, restarted_datanode_waits_for_a_majority,
    stale_command_queued_ahead_of_a_newer_one,
};

#[cfg(any(loom, feature = "shuttle"))]
use super::report::CaseReport;
#[cfg(loom)]
use super::report::Checker;
#[cfg(feature = "shuttle")]
use super::report::SuiteConfig;
#[cfg(any(loom, feature = "shuttle"))]
use super::report::SuiteReport;

pub use crate::scenarios::term_fencing::SEED_KEY;

/// One scenario of the catalogue's HDDS-17268 list, over any implementation: how shuttle
/// runs it (with the scenario seed), and how loom does, where the scenario is small enough.
#[derive(Debug)]
pub struct Scenario<F> {
    /// The catalogue's name for it.
    pub name: &'static str,
    /// The run the shuttle suite explores, as the catalogue runs it.
    pub shuttle: fn(F, u64) -> Result<(), Violation>,
    /// The loom model, as `loom-tests/` runs it; `None` for a scenario too big for loom.
    pub loom: Option<fn(F) -> Result<(), Violation>>,
}

/// The catalogue's term-fencing scenarios ([`catalogue::term_fencing`]), with the same
/// shapes, over the implementation `F` builds.
pub fn scenarios<F: StateContextFactory>() -> Vec<Scenario<F>> {
    use OldLeader::{SteppedDownHoldingCommand as SteppedDown, StillBelievesItLeads as Believes};
    vec![
        Scenario {
            name: "heartbeat_term_fences_believing_old_leader",
            shuttle: |f, _| {
                heartbeat_term_fences_stale_leader_command(f, Believes, STALE_LEADER_ROUNDS)
            },
            loom: Some(|f| heartbeat_term_fences_stale_leader_command(f, Believes, 1)),
        },
        Scenario {
            name: "heartbeat_term_fences_stepped_down_old_leader",
            shuttle: |f, _| {
                heartbeat_term_fences_stale_leader_command(f, SteppedDown, STALE_LEADER_ROUNDS)
            },
            loom: Some(|f| heartbeat_term_fences_stale_leader_command(f, SteppedDown, 1)),
        },
        Scenario {
            name: "deposed_leader_command_after_restart",
            shuttle: |f, _| deposed_leader_command_never_runs_after_restart(f, STALE_LEADER_ROUNDS),
            loom: Some(|f| deposed_leader_command_never_runs_after_restart(f, 1)),
        },
        Scenario {
            name: "concurrent_leader_heartbeats_keep_the_highest_term",
            shuttle: |f, _| concurrent_leader_heartbeats_keep_the_highest_term(f),
            loom: Some(concurrent_leader_heartbeats_keep_the_highest_term),
        },
        Scenario {
            name: "stale_command_queued_ahead_of_a_newer_one",
            shuttle: |f, _| stale_command_queued_ahead_of_a_newer_one(f),
            // Exhaustive, about half a minute a behavior: the crate's own model
            // (`loom-tests/heartbeat_term_race.rs`) runs it, the suite does not.
            loom: None,
        },
        Scenario {
            name: "restarted_datanode_waits_for_a_majority",
            shuttle: |f, _| restarted_datanode_waits_for_a_majority(f, STALE_LEADER_ROUNDS),
            loom: Some(|f| restarted_datanode_waits_for_a_majority(f, 1)),
        },
        Scenario {
            name: "leader_transfers_never_run_a_stale_command",
            shuttle: |f, seed| {
                leader_transfers_never_run_a_stale_command(f, seed, FencingClusterShape::default())
            },
            loom: None,
        },
    ]
}

/// Whether `reference` must hold `scenario` in the catalogue: an implementation held to
/// `reference` is held to exactly those.
pub fn claimed(scenario: &str, reference: StateContextBehavior) -> bool {
    super::catalogue_holds(&catalogue::term_fencing(), scenario, reference.name())
}

#[cfg(any(loom, feature = "shuttle"))]
fn report<F: StateContextFactory>(
    reference: StateContextBehavior,
    cases: Vec<CaseReport>,
) -> SuiteReport {
    SuiteReport {
        seed_key: SEED_KEY,
        implementation: std::any::type_name::<F::Context>().to_owned(),
        reference: reference.name(),
        cases,
    }
}

/// The loom models of HDDS-17268 (MC4 with the old leader believing or stepped down, the
/// residual window, MC5: `loom-tests/term_before_init.rs`, `heartbeat_term_race.rs`) run
/// exhaustively against the implementation `factory` builds; those `reference` itself
/// breaks are not claimed. In the loom build (`RUSTFLAGS="--cfg loom"`).
#[cfg(loom)]
pub fn loom_suite<F: StateContextFactory>(
    factory: F,
    reference: StateContextBehavior,
) -> SuiteReport {
    let mut cases = Vec::new();
    for scenario in scenarios::<F>() {
        let Some(model) = scenario.loom else { continue };
        if !claimed(scenario.name, reference) {
            cases.push(CaseReport::not_claimed(scenario.name, Checker::Loom));
            continue;
        }
        cases.push(CaseReport::explored_by_loom(scenario.name, move || {
            model(factory)
        }));
    }
    report::<F>(reference, cases)
}

/// Every term-fencing scenario of the catalogue under shuttle's random and PCT schedulers
/// (`config.iterations` schedules each, stopping at a violation) against the
/// implementation `factory` builds; those `reference` itself breaks are not claimed. In
/// the shuttle build (`--features shuttle`).
#[cfg(feature = "shuttle")]
pub fn shuttle_suite<F: StateContextFactory>(
    factory: F,
    reference: StateContextBehavior,
    config: &SuiteConfig,
) -> SuiteReport {
    let mut cases = Vec::new();
    for scenario in scenarios::<F>() {
        let run = scenario.shuttle;
        cases.extend(super::shuttle_run::cases(
            scenario.name,
            false,
            claimed(scenario.name, reference),
            config,
            move |seed| run(factory, seed),
        ));
    }
    report::<F>(reference, cases)
}

#[cfg(not(any(loom, feature = "shuttle")))]
pub use differential::differential;

#[cfg(not(any(loom, feature = "shuttle")))]
mod differential {
    //! The HDDS-17268 differential: heartbeat terms, commands, takes, endpoint moves,
    //! clock ticks and restarts applied to an implementation and to `StateContext`.
    //!
    //! **The race** a sequence can show is the first defect: a heartbeat term seen before
    //! init and discarded, so init takes a deposed leader's term and a take hands out its
    //! command. **The fix** it holds the implementation to is the reference behavior's.

    use std::fmt;

    use proptest::prelude::*;

    use super::super::differential::{DifferentialConfig, DifferentialReport, Step, explore};
    use super::{SEED_KEY, StateContextBehavior, StateContextFactory};
    use crate::clock::ManualClock;
    use crate::datanode::state_context::EndpointState;
    use crate::datanode::state_context::StateContextApi;
    use crate::hdds::command::{CommandId, CommandKind, ScmCommand};
    use crate::hdds::ids::{ContainerId, DatanodeId, PipelineId, ScmId};
    use crate::hdds::term::Term;
    use crate::scenarios::term_fencing::SCENARIO_START_MS;

    /// The SCMs of the differential's datanode, none passive.
    const ENDPOINTS: [(ScmId, bool); 3] = [(ScmId(1), false), (ScmId(2), false), (ScmId(3), false)];

    /// One operation on a state context.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Op {
        Heartbeat(Term),
        Add(Term),
        Take,
        Endpoint(usize, EndpointState),
        Advance(u64),
        Restart,
    }

    impl Op {
        fn label(self) -> &'static str {
            match self {
                Op::Heartbeat(_) => "heartbeat term",
                Op::Add(_) => "add command",
                Op::Take => "take next command",
                Op::Endpoint(..) => "endpoint state",
                Op::Advance(_) => "clock advances",
                Op::Restart => "datanode restarts",
            }
        }

        fn fields(self, id: u64) -> Vec<(String, String)> {
            match self {
                Op::Heartbeat(term) => vec![("term".into(), term.to_string())],
                Op::Add(term) => vec![
                    ("command".into(), id.to_string()),
                    ("term".into(), term.to_string()),
                ],
                Op::Endpoint(index, state) => vec![
                    ("scm".into(), ENDPOINTS[index].0.to_string()),
                    ("state".into(), format!("{state:?}")),
                ],
                Op::Advance(ms) => vec![("ms".into(), ms.to_string())],
                Op::Take | Op::Restart => Vec::new(),
            }
        }
    }

    fn op() -> impl Strategy<Value = Op> {
        let state = prop::sample::select(vec![
            EndpointState::GetVersion,
            EndpointState::Register,
            EndpointState::Heartbeat,
        ]);
        prop_oneof![
            3 => (-2i64..6).prop_map(Op::Heartbeat),
            4 => (-2i64..6).prop_map(Op::Add),
            4 => Just(Op::Take),
            3 => (0..ENDPOINTS.len(), state).prop_map(|(i, s)| Op::Endpoint(i, s)),
            1 => (1u64..60_000).prop_map(Op::Advance),
            1 => Just(Op::Restart),
        ]
    }

    /// One side: a context, its clock.
    struct Side<C> {
        context: C,
        clock: ManualClock,
    }

    /// What one operation showed of a side: its result, then the term, the queue and the
    /// endpoint states.
    struct Shown<'a, C>(&'a Side<C>, String);

    impl<C: StateContextApi> fmt::Display for Shown<'_, C> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let context = &self.0.context;
            let states: String = context
                .endpoints()
                .iter()
                .map(|e| match e.state() {
                    EndpointState::GetVersion => 'V',
                    EndpointState::Register => 'R',
                    EndpointState::Heartbeat => 'H',
                    EndpointState::Shutdown => 'S',
                })
                .collect();
            write!(
                f,
                "{} term={:?} queued={} endpoints={states}",
                self.1,
                context.term_of_leader(),
                context.queue_len()
            )
        }
    }

    impl<C: StateContextApi> Side<C> {
        fn start<F: StateContextFactory<Context = C>>(factory: F) -> Result<Self, String> {
            let clock = ManualClock::new(SCENARIO_START_MS);
            let context = factory
                .create(DatanodeId(1), &ENDPOINTS, clock.shared())
                .map_err(|e| format!("could not start: {e}"))?;
            Ok(Self { context, clock })
        }

        fn apply(&self, op: Op, id: u64) -> String {
            let result = match op {
                Op::Heartbeat(term) => {
                    format!("{:?}", self.context.update_term_from_heartbeat(term))
                }
                Op::Add(term) => {
                    let kind = CommandKind::CloseContainer {
                        container: ContainerId(id),
                        pipeline: PipelineId(1),
                        force: false,
                    };
                    format!(
                        "{:?}",
                        self.context
                            .add_command(ScmCommand::new(CommandId(id), term, kind))
                    )
                }
                Op::Take => match self.context.get_next_command() {
                    Some(taken) => format!(
                        "took command {} of term {} at term {}",
                        taken.command.id.0, taken.command.term, taken.term_at_dispatch
                    ),
                    None => "took nothing".into(),
                },
                Op::Endpoint(index, state) => {
                    match self.context.endpoints().get(index) {
                        Some(endpoint) => endpoint.set_state(state),
                        None => return format!("no endpoint {index}"),
                    }
                    "ok".into()
                }
                Op::Advance(ms) => format!("now {}", self.clock.advance_ms(ms) - SCENARIO_START_MS),
                Op::Restart => {
                    self.context.restart();
                    "restarted".into()
                }
            };
            Shown(self, result).to_string()
        }
    }

    /// Applies generated sequences of heartbeat terms, commands, takes, endpoint state
    /// moves, clock ticks and datanode restarts to the context `factory` builds and to the
    /// crate's `StateContext` running `reference`, comparing after every operation what
    /// it returned, the term, the queue length and the endpoint states; the first
    /// divergence is shrunk and told as a step table. In the production build.
    pub fn differential<F: StateContextFactory>(
        factory: F,
        reference: StateContextBehavior,
        config: &DifferentialConfig,
    ) -> DifferentialReport {
        let who = (
            SEED_KEY,
            reference.name(),
            std::any::type_name::<F::Context>().to_owned(),
        );
        let ops = prop::collection::vec(op(), 1..40);
        explore(who, config, ops, |ops: &Vec<Op>| {
            run(factory, reference, ops)
        })
    }

    fn run<F: StateContextFactory>(
        factory: F,
        reference: StateContextBehavior,
        ops: &[Op],
    ) -> Vec<Step> {
        let (expected, actual) = match (Side::start(reference), Side::start(factory)) {
            (Ok(expected), Ok(actual)) => (expected, actual),
            (expected, actual) => {
                return vec![Step {
                    label: "start".into(),
                    fields: Vec::new(),
                    reference: expected.err().unwrap_or_else(|| "started".into()),
                    implementation: actual.err().unwrap_or_else(|| "started".into()),
                }];
            }
        };
        let mut steps = Vec::new();
        for (index, op) in ops.iter().enumerate() {
            let id = index as u64 + 1;
            let step = Step {
                label: op.label().into(),
                fields: op.fields(id),
                reference: expected.apply(*op, id),
                implementation: actual.apply(*op, id),
            };
            let diverged = step.diverges();
            steps.push(step);
            if diverged {
                break;
            }
        }
        steps
    }
}
