//! A term-fencing context as the code before HDDS-17268 behaves, written from scratch.
//!
//! **The race (kept on purpose).** A heartbeat term that arrives before init is dropped,
//! so init takes the highest queued command's term; after init the heartbeat path reads
//! the term, compares and writes it back without the lock, losing a concurrent higher term.
//!
//! **The fix it lacks** is [`LockedContext`](super::LockedContext)'s: the checkers must
//! catch this one.

use std::collections::VecDeque;

use hadoop_ref::clock::Clock;
use hadoop_ref::datanode::DatanodeError;
use hadoop_ref::datanode::state_context::{
    DispatchedCommand, EndpointState, EndpointStateMachine, StateContextApi, TermObservation,
};
use hadoop_ref::hdds::command::ScmCommand;
use hadoop_ref::hdds::ids::{DatanodeId, ScmId};
use hadoop_ref::hdds::term::{Term, validate_term};
use hadoop_ref::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use hadoop_ref::sync::{Arc, Mutex};

use super::{QUEUE_LIMIT, majority_heartbeating};

/// The term before init.
const UNSET: i64 = i64::MIN;

/// A queue under a lock, and a term in an atomic that the heartbeat path updates unlocked.
#[derive(Debug)]
pub struct UnpatchedContext {
    endpoints: Vec<Arc<EndpointStateMachine>>,
    queue: Mutex<VecDeque<ScmCommand>>,
    term: AtomicI64,
    restarts: AtomicU64,
}

impl UnpatchedContext {
    /// A freshly started context (the signature a conformance suite builds it with).
    pub fn start(
        _datanode: DatanodeId,
        endpoints: &[(ScmId, bool)],
        _clock: Arc<dyn Clock>,
    ) -> Result<Self, DatanodeError> {
        Ok(Self {
            endpoints: EndpointStateMachine::for_scms(endpoints),
            queue: Mutex::new(VecDeque::new()),
            term: AtomicI64::new(UNSET),
            restarts: AtomicU64::new(0),
        })
    }

    fn term(&self) -> Option<Term> {
        let term = self.term.load(Ordering::Acquire);
        (term != UNSET).then_some(term)
    }
}

impl StateContextApi for UnpatchedContext {
    fn endpoints(&self) -> &[Arc<EndpointStateMachine>] {
        &self.endpoints
    }

    fn update_term_from_heartbeat(&self, term: Term) -> Result<(), DatanodeError> {
        validate_term(term)?;
        // Before init: nothing to update. After: check, then set, without the lock.
        if let Some(current) = self.term() {
            if current < term {
                self.term.store(term, Ordering::Release);
            }
        }
        Ok(())
    }

    fn add_command(&self, command: ScmCommand) -> Result<(), DatanodeError> {
        validate_term(command.term)?;
        let mut queue = self.queue.lock();
        if queue.len() >= QUEUE_LIMIT {
            return Err(DatanodeError::CommandQueueFull {
                limit: QUEUE_LIMIT,
                dropped: 1,
            });
        }
        if self.term().is_some_and(|current| current < command.term) {
            self.term.store(command.term, Ordering::Release);
        }
        queue.push_back(command);
        Ok(())
    }

    fn get_next_command(&self) -> Option<DispatchedCommand> {
        let mut queue = self.queue.lock();
        if self.term().is_none() && majority_heartbeating(&self.endpoints) {
            let queued = queue.iter().map(|c| c.term).max()?;
            self.term.store(queued, Ordering::Release);
        }
        let mut term = self.term()?;
        while let Some(command) = queue.pop_front() {
            if command.term > term {
                term = command.term;
                self.term.store(term, Ordering::Release);
            }
            if command.term == term {
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
        self.term()
    }

    fn queue_len(&self) -> usize {
        self.queue.lock().len()
    }

    fn restart(&self) {
        let mut queue = self.queue.lock();
        queue.clear();
        self.term.store(UNSET, Ordering::Release);
        self.restarts.fetch_add(1, Ordering::AcqRel);
        for endpoint in &self.endpoints {
            endpoint.set_state(EndpointState::GetVersion);
        }
    }

    fn observe(&self) -> TermObservation {
        let _queue = self.queue.lock();
        TermObservation {
            incarnation: self.restarts.load(Ordering::Acquire),
            term: self.term(),
        }
    }
}
