//! Property test: `StateContext` against a small reference model over random sequences of
//! heartbeat terms, commands, takes, endpoint state changes, clock advances and restarts,
//! for every `StateContextBehavior`; the fencing invariants of `scenarios::term_fencing`
//! (HDDS-17268) are checked along the way for the fixed behaviors.

use std::collections::VecDeque;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use hadoop_ref::clock::ManualClock;
use hadoop_ref::datanode::DatanodeError;
use hadoop_ref::datanode::container::controller::shared_controller;
use hadoop_ref::datanode::dispatcher::CommandDispatcher;
use hadoop_ref::datanode::state_context::{
    EndpointState, StateContext, StateContextBehavior, StateContextConfig, TermObservation,
};
use hadoop_ref::hdds::command::{CommandId, CommandKind, ScmCommand};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, PipelineId, ScmId};
use hadoop_ref::hdds::term::Term;
use hadoop_ref::scenarios::term_fencing::{
    no_command_below_heard_term, term_covers_heard_terms, term_never_decreases,
};
use hadoop_ref::sim::fencing_datanode::Observed;
use hadoop_ref::sim::replicas::replicas_in_state;
use hadoop_ref::sync::Arc;

const LIMIT: usize = 4;
const BOUND_MS: u64 = 30_000;
const SCMS: usize = 3;

#[derive(Debug, Clone)]
enum Op {
    Heartbeat(Term),
    Add(Term),
    Take,
    Heartbeating(usize),
    Advance(u64),
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (-2i64..6).prop_map(Op::Heartbeat),
        4 => (-2i64..6).prop_map(Op::Add),
        4 => Just(Op::Take),
        2 => (0..=SCMS).prop_map(Op::Heartbeating),
        1 => (0u64..20_000).prop_map(Op::Advance),
        1 => Just(Op::Restart),
    ]
}

fn behavior() -> impl Strategy<Value = StateContextBehavior> {
    prop::sample::select(StateContextBehavior::ALL.to_vec())
}

/// The rules of `StateContext` written out plainly: `updateTermOfLeaderSCM` raises the term
/// (before init it records the term for init, unless the legacy behavior discards it; the
/// code before HDDS-7621 reads no heartbeat term, the code before HDDS-3988 fences nothing),
/// `addCommand` raises it to a higher command's term (not before HDDS-7619),
/// `getNextCommand` drops commands below
/// it, and `initTermOfLeaderSCM` waits for a majority of endpoints in HEARTBEAT and a
/// queued command (and, awaiting a leader's term, for a heartbeat term or the bound).
#[derive(Debug)]
struct Model {
    behavior: StateContextBehavior,
    now_ms: u64,
    started_at_ms: u64,
    term: Option<Term>,
    seen_before_init: Option<Term>,
    queue: VecDeque<(u64, Term)>,
    heartbeating: usize,
}

impl Model {
    fn heartbeat(&mut self, term: Term) {
        if !self.behavior.reads_heartbeat_term() {
            return;
        }
        match self.term {
            Some(current) => self.term = Some(current.max(term)),
            None if self.behavior.ignores_heartbeat_term_before_init() => {}
            None => {
                self.seen_before_init = Some(self.seen_before_init.map_or(term, |s| s.max(term)))
            }
        }
    }

    fn add(&mut self, id: u64, term: Term) -> bool {
        if self.queue.len() >= LIMIT {
            return false;
        }
        if self.behavior.raises_term_on_add() {
            self.term = self.term.map(|t| t.max(term));
        }
        self.queue.push_back((id, term));
        true
    }

    fn take(&mut self) -> Option<u64> {
        if !self.behavior.fences_commands() {
            return self.queue.pop_front().map(|(id, _)| id);
        }
        self.init();
        let mut term = self.term?;
        while let Some((id, command_term)) = self.queue.pop_front() {
            term = term.max(command_term);
            self.term = Some(term);
            if command_term == term {
                return Some(id);
            }
        }
        None
    }

    fn init(&mut self) {
        if self.term.is_some() || self.heartbeating < SCMS / 2 + 1 {
            return;
        }
        let Some(max_queued) = self.queue.iter().map(|&(_, t)| t).max() else {
            return;
        };
        if self.behavior == StateContextBehavior::Hardened
            && self.seen_before_init.is_none()
            && self.now_ms - self.started_at_ms < BOUND_MS
        {
            return;
        }
        self.term = Some(
            self.seen_before_init
                .map_or(max_queued, |s| s.max(max_queued)),
        );
    }

    fn restart(&mut self) {
        self.term = None;
        self.seen_before_init = None;
        self.queue.clear();
        self.heartbeating = 0;
        self.started_at_ms = self.now_ms;
    }
}

/// The real context and dispatcher beside the model, and what the invariants judge.
struct Harness {
    behavior: StateContextBehavior,
    clock: ManualClock,
    context: Arc<StateContext>,
    dispatcher: CommandDispatcher,
    model: Model,
    observations: Vec<TermObservation>,
    dispatches: Vec<Observed>,
    /// Highest term the datanode took (heartbeat or accepted command) since the restart.
    heard: Option<Term>,
}

impl Harness {
    fn new(behavior: StateContextBehavior) -> Self {
        let clock = ManualClock::new(0);
        let endpoints: Vec<_> = (1..=SCMS as u64).map(|i| (ScmId(i), false)).collect();
        let config = StateContextConfig {
            command_queue_limit: LIMIT,
            await_leader_term_bound_ms: BOUND_MS,
        };
        let context =
            Arc::new(StateContext::new(behavior, config, &endpoints, clock.shared()).unwrap());
        let replicas =
            replicas_in_state(DatanodeId(1), &[ContainerId(1)], ContainerState::Closed).unwrap();
        let dispatcher = CommandDispatcher::new(
            Arc::clone(&context),
            shared_controller(&replicas),
            clock.shared(),
        );
        let model = Model {
            behavior,
            now_ms: 0,
            started_at_ms: 0,
            term: None,
            seen_before_init: None,
            queue: VecDeque::new(),
            heartbeating: 0,
        };
        Self {
            behavior,
            observations: vec![context.observe()],
            clock,
            context,
            dispatcher,
            model,
            dispatches: Vec::new(),
            heard: None,
        }
    }

    /// Applies `op` to the context and the model, then compares them.
    fn step(&mut self, id: u64, op: Op) -> Result<(), TestCaseError> {
        match op {
            Op::Heartbeat(term) => self.heartbeat(term)?,
            Op::Add(term) => self.add(id, term)?,
            Op::Take => self.take()?,
            Op::Heartbeating(count) => self.set_heartbeating(count),
            Op::Advance(ms) => self.model.now_ms = self.clock.advance_ms(ms),
            Op::Restart => {
                self.context.restart();
                self.model.restart();
                self.heard = None;
            }
        }
        prop_assert_eq!(self.context.term_of_leader(), self.model.term);
        prop_assert_eq!(self.context.queue_len(), self.model.queue.len());
        self.observations.push(self.context.observe());
        if !self.behavior.is_legacy() {
            term_covers_heard_terms(self.context.term_of_leader(), self.heard)
                .map_err(|v| TestCaseError::fail(v.to_string()))?;
        }
        Ok(())
    }

    fn heartbeat(&mut self, term: Term) -> Result<(), TestCaseError> {
        let result = self.context.update_term_from_heartbeat(term);
        if term < -1 {
            prop_assert_eq!(result, Err(DatanodeError::InvalidTerm { term }));
        } else {
            prop_assert_eq!(result, Ok(()));
            self.model.heartbeat(term);
            self.heard = self.heard.max(Some(term));
        }
        Ok(())
    }

    fn add(&mut self, id: u64, term: Term) -> Result<(), TestCaseError> {
        let kind = CommandKind::CloseContainer {
            container: ContainerId(1),
            pipeline: PipelineId(1),
            force: false,
        };
        let result = self
            .context
            .add_command(ScmCommand::new(CommandId(id), term, kind));
        if term < -1 {
            prop_assert_eq!(result, Err(DatanodeError::InvalidTerm { term }));
        } else {
            let accepted = self.model.add(id, term);
            prop_assert_eq!(result.is_ok(), accepted, "queue full at the same moment");
            if accepted {
                self.heard = self.heard.max(Some(term));
            }
        }
        Ok(())
    }

    fn take(&mut self) -> Result<(), TestCaseError> {
        let report = self.dispatcher.process_next();
        let taken = report.as_ref().map(|r| r.dispatched.command.id.0);
        prop_assert_eq!(taken, self.model.take());
        let heard_before = self.heard;
        self.dispatches.extend(report.map(|report| Observed {
            report,
            heard_before,
            heard_before_run: heard_before,
        }));
        Ok(())
    }

    fn set_heartbeating(&mut self, count: usize) {
        for (i, endpoint) in self.context.endpoints().iter().enumerate() {
            let state = if i < count {
                EndpointState::Heartbeat
            } else {
                EndpointState::GetVersion
            };
            endpoint.set_state(state);
        }
        self.model.heartbeating = count;
    }
}

fn run(behavior: StateContextBehavior, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut harness = Harness::new(behavior);
    for (id, op) in (0u64..).zip(ops) {
        harness.step(id, op)?;
    }
    term_never_decreases(&harness.observations).map_err(|v| TestCaseError::fail(v.to_string()))?;
    if !behavior.is_legacy() {
        no_command_below_heard_term(&harness.dispatches)
            .map_err(|v| TestCaseError::fail(v.to_string()))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/state_context_model.txt",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn state_context_matches_reference_model(
        behavior in behavior(),
        ops in prop::collection::vec(op(), 1..60),
    ) {
        run(behavior, ops)?;
    }
}
