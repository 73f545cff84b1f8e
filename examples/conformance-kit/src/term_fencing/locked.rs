//! A term-fencing context with the HDDS-17268 fix, written from scratch.
//!
//! **The race.** A heartbeat term before init must reach init, and concurrent term
//! updates from two endpoint threads must keep the highest.
//!
//! **The fix.** Everything (term, highest term seen before init, queue, restart count)
//! lives under one `hadoop_ref::sync::Mutex`, so every update is atomic with the others.

use std::collections::VecDeque;

use hadoop_ref::clock::Clock;
use hadoop_ref::datanode::DatanodeError;
use hadoop_ref::datanode::state_context::{
    DispatchedCommand, EndpointState, EndpointStateMachine, StateContextApi, StateContextFactory,
    TermObservation,
};
use hadoop_ref::hdds::command::ScmCommand;
use hadoop_ref::hdds::ids::{DatanodeId, ScmId};
use hadoop_ref::hdds::term::{Term, validate_term};
use hadoop_ref::sync::{Arc, Mutex};

use super::{QUEUE_LIMIT, majority_heartbeating};
use crate::mutants::Mutant;

#[derive(Debug, Default)]
struct State {
    term: Option<Term>,
    seen_before_init: Option<Term>,
    queue: VecDeque<ScmCommand>,
    restarts: u64,
}

/// The queue and the leader term under one lock.
#[derive(Debug)]
pub struct LockedContext {
    endpoints: Vec<Arc<EndpointStateMachine>>,
    state: Mutex<State>,
    /// The one change of a mutation run (`crate::mutants`); `None`: the correct code.
    mutant: Option<Mutant>,
}

impl LockedContext {
    /// A freshly started context (the signature a conformance suite builds it with).
    pub fn start(
        _datanode: DatanodeId,
        endpoints: &[(ScmId, bool)],
        _clock: Arc<dyn Clock>,
    ) -> Result<Self, DatanodeError> {
        Ok(Self {
            endpoints: EndpointStateMachine::for_scms(endpoints),
            state: Mutex::new(State::default()),
            mutant: None,
        })
    }

    /// A factory of contexts carrying `mutant`'s one change.
    pub fn mutated(mutant: Mutant) -> impl StateContextFactory<Context = Self> {
        move |datanode: DatanodeId, endpoints: &[(ScmId, bool)], clock: Arc<dyn Clock>| {
            let context = Self::start(datanode, endpoints, clock)?;
            Ok(Self {
                mutant: Some(mutant),
                ..context
            })
        }
    }

    fn mutated_by(&self, mutant: Mutant) -> bool {
        self.mutant == Some(mutant)
    }

    /// The heartbeat's term, read and written under two acquisitions of the lock (the
    /// [`Mutant::HeartbeatTermLockSplit`] mutant).
    fn update_term_in_two_sections(&self, term: Term) {
        let current = self.state.lock().term;
        let mut state = self.state.lock();
        match current {
            Some(current) => state.term = Some(current.max(term)),
            None => {
                state.seen_before_init = Some(state.seen_before_init.map_or(term, |s| s.max(term)))
            }
        }
    }
}

impl StateContextApi for LockedContext {
    fn endpoints(&self) -> &[Arc<EndpointStateMachine>] {
        &self.endpoints
    }

    fn update_term_from_heartbeat(&self, term: Term) -> Result<(), DatanodeError> {
        validate_term(term)?;
        if self.mutated_by(Mutant::HeartbeatTermLockSplit) {
            self.update_term_in_two_sections(term);
            return Ok(());
        }
        let mut state = self.state.lock();
        match state.term {
            Some(current) if self.mutated_by(Mutant::HeartbeatTermLowered) => {
                state.term = Some(current.min(term))
            }
            Some(current) => state.term = Some(current.max(term)),
            None if self.mutated_by(Mutant::PreInitHeartbeatTermDropped) => {}
            None => {
                state.seen_before_init = Some(state.seen_before_init.map_or(term, |s| s.max(term)))
            }
        }
        Ok(())
    }

    fn add_command(&self, command: ScmCommand) -> Result<(), DatanodeError> {
        validate_term(command.term)?;
        let mut state = self.state.lock();
        if state.queue.len() >= QUEUE_LIMIT {
            return Err(DatanodeError::CommandQueueFull {
                limit: QUEUE_LIMIT,
                dropped: 1,
            });
        }
        if let Some(current) = state.term
            && !self.mutated_by(Mutant::CommandTermRaisedOnPollOnly)
        {
            state.term = Some(current.max(command.term));
        }
        state.queue.push_back(command);
        Ok(())
    }

    fn get_next_command(&self) -> Option<DispatchedCommand> {
        let mut state = self.state.lock();
        let majority =
            self.mutated_by(Mutant::InitWithoutMajority) || majority_heartbeating(&self.endpoints);
        if state.term.is_none() && majority {
            let terms = state.queue.iter().map(|c| c.term);
            let queued = match self.mutated_by(Mutant::InitTakesLowestQueuedTerm) {
                true => terms.min()?,
                false => terms.max()?,
            };
            state.term = Some(
                state
                    .seen_before_init
                    .map_or(queued, |seen| seen.max(queued)),
            );
        }
        let mut term = state.term?;
        let written_on_dispatch = self.mutated_by(Mutant::TermWrittenOnDispatchOnly);
        let one_behind = self.mutated_by(Mutant::CommandOneTermBehindRuns);
        while let Some(command) = state.queue.pop_front() {
            term = term.max(command.term);
            if !written_on_dispatch {
                state.term = Some(term);
            }
            if command.term == term || (one_behind && command.term + 1 == term) {
                if written_on_dispatch {
                    state.term = Some(term);
                }
                return Some(DispatchedCommand {
                    command,
                    term_at_dispatch: term,
                    heartbeat_term_high_water: None,
                });
            }
        }
        None
    }

    fn term_of_leader(&self) -> Option<Term> {
        self.state.lock().term
    }

    fn queue_len(&self) -> usize {
        self.state.lock().queue.len()
    }

    fn restart(&self) {
        let mut state = self.state.lock();
        let restarts = state.restarts + 1;
        let queue = match self.mutated_by(Mutant::RestartKeepsQueue) {
            true => std::mem::take(&mut state.queue),
            false => VecDeque::new(),
        };
        *state = State {
            restarts,
            queue,
            ..State::default()
        };
        for endpoint in &self.endpoints {
            endpoint.set_state(EndpointState::GetVersion);
        }
    }

    fn observe(&self) -> TermObservation {
        let state = self.state.lock();
        TermObservation {
            incarnation: state.restarts,
            term: state.term,
        }
    }
}
