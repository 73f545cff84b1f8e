//! `StateContext`: the datanode's command queue and the leader-SCM term that fences
//! commands of a stale SCM leader (HDDS-3988, HDDS-7621, HDDS-17268).
//!
//! **The race (HDDS-17268).** A heartbeat term that came before init was discarded, so
//! init took the old leader's term from the first queued command; and the heartbeat path
//! raised the term with an unlocked check-then-set that could lose a higher update.
//!
//! **The fix.** A heartbeat term seen before init is recorded, and init takes the larger of
//! it and the highest queued command term; every term update holds the context lock; the
//! term is mirrored in an atomic written only under that lock, for the handler threads.

use std::collections::VecDeque;

use super::behavior::{StateContextBehavior, StateContextConfig};
use super::dispatch::{DispatchedCommand, TermObservation};
use super::endpoint::{EndpointState, EndpointStateMachine};
use crate::clock::Clock;
use crate::datanode::DatanodeError;
use crate::hdds::command::ScmCommand;
use crate::hdds::ids::{DatanodeId, ScmId};
use crate::hdds::term::{Term, validate_term};
use crate::sync::atomic::{AtomicI64, Ordering};
use crate::sync::{Arc, Mutex, MutexGuard};

/// Counters of a [`StateContext`] since its last restart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StateContextStats {
    /// Commands dropped by `get_next_command` because their term was below the term.
    pub dropped_stale: u64,
    /// Commands refused because the queue was full.
    pub rejected_queue_full: u64,
}

/// The target of the context's protocol events: the module the context's public path
/// names, so the event log calls it `datanode::state_context` wherever the file lives.
const EVENTS: &str = "hadoop_ref::datanode::state_context";

/// Sentinel of the term atomic: no term yet.
const TERM_UNSET: i64 = i64::MIN;

#[derive(Debug)]
struct Inner {
    queue: VecDeque<ScmCommand>,
    /// Highest heartbeat term seen while the term was unset (the fix's new state).
    max_term_seen_before_init: Option<Term>,
    started_at_ms: u64,
    /// Restarts so far; tells observations of different process lifetimes apart.
    incarnation: u64,
    stats: StateContextStats,
}

/// The datanode's command queue and leader-SCM term (`StateContext` in Ozone).
///
/// Shared by the heartbeat threads (one per SCM, [`StateContext::add_command`] and
/// [`StateContext::update_term_from_heartbeat`]), the command processor
/// ([`StateContext::get_next_command`]) and the handlers
/// ([`StateContext::term_of_leader`]).
#[derive(Debug)]
pub struct StateContext {
    behavior: StateContextBehavior,
    config: StateContextConfig,
    clock: Arc<dyn Clock>,
    endpoints: Vec<Arc<EndpointStateMachine>>,
    inner: Mutex<Inner>,
    /// `termOfLeaderSCM`. Written only with `inner` held, except by the unlocked heartbeat
    /// path of the legacy behaviors that update it unlocked; read without the lock by handlers.
    term: AtomicI64,
    /// Highest term any heartbeat response carried since the last restart. Raised after
    /// the term update it belongs to; a metric, and what the invariants judge dispatches by.
    heartbeat_term_high_water: AtomicI64,
    /// The datanode this context belongs to, named in its protocol events (the event log
    /// tells the datanodes of a cluster apart by it); `None` for a bare context.
    node: Option<DatanodeId>,
}

impl StateContext {
    /// A freshly started context: no term, empty queue, every endpoint in GETVERSION.
    ///
    /// `endpoints` lists each SCM with whether it is passive (Recon).
    pub fn new(
        behavior: StateContextBehavior,
        config: StateContextConfig,
        endpoints: &[(ScmId, bool)],
        clock: Arc<dyn Clock>,
    ) -> Result<Self, DatanodeError> {
        if config.command_queue_limit == 0 {
            return Err(DatanodeError::InvalidConfig {
                reason: "command_queue_limit must be at least 1".into(),
            });
        }
        let started_at_ms = clock.now_ms();
        Ok(Self {
            behavior,
            config,
            clock,
            endpoints: endpoints
                .iter()
                .map(|&(scm, passive)| Arc::new(EndpointStateMachine::new(scm, passive)))
                .collect(),
            inner: Mutex::new(Inner {
                queue: VecDeque::new(),
                max_term_seen_before_init: None,
                started_at_ms,
                incarnation: 0,
                stats: StateContextStats::default(),
            }),
            term: AtomicI64::new(TERM_UNSET),
            heartbeat_term_high_water: AtomicI64::new(TERM_UNSET),
            node: None,
        })
    }

    /// The same context, naming `datanode` in its protocol events.
    pub fn for_datanode(mut self, datanode: DatanodeId) -> Self {
        self.node = Some(datanode);
        self
    }

    /// The datanode this context belongs to, if it was told ([`StateContext::for_datanode`]).
    pub fn datanode(&self) -> Option<DatanodeId> {
        self.node
    }

    /// The fencing logic in use.
    pub fn behavior(&self) -> StateContextBehavior {
        self.behavior
    }

    /// The limits in use.
    pub fn config(&self) -> &StateContextConfig {
        &self.config
    }

    /// The endpoints, in the order given to [`StateContext::new`].
    pub fn endpoints(&self) -> &[Arc<EndpointStateMachine>] {
        &self.endpoints
    }

    /// The leader-SCM term, `None` until initialised (`getTermOfLeaderSCM`). Lock-free:
    /// handler threads call it when a command runs.
    pub fn term_of_leader(&self) -> Option<Term> {
        decode_term(self.term.load(Ordering::Acquire))
    }

    /// Applies the term of a heartbeat response (`updateTermOfLeaderSCM(long)`).
    ///
    /// Before init the term is recorded for init (discarded by the legacy behaviors that
    /// ignore it); after init it raises the term (without the lock in the legacy behaviors
    /// that update it unlocked).
    pub fn update_term_from_heartbeat(&self, term: Term) -> Result<(), DatanodeError> {
        validate_term(term)?;
        crate::events::debug!(target: EVENTS,
            node = self.node,
            term,
            "heartbeat term received"
        );
        if !self.behavior.reads_heartbeat_term() {
            // The code before HDDS-7621 (and before HDDS-3988) has no term in a heartbeat
            // response: the term is not read, whether or not the context's term is set.
            crate::events::debug!(target: EVENTS,
                node = self.node,
                term,
                "heartbeat term ignored"
            );
            self.heartbeat_term_high_water
                .fetch_max(term, Ordering::AcqRel);
            return Ok(());
        }
        if self.behavior.updates_term_unlocked() {
            let current = self.term.load(Ordering::Acquire);
            if current != TERM_UNSET {
                // The unpatched check-then-set: a concurrent higher write can land between
                // this read and the store below and be overwritten.
                crate::events::debug!(target: EVENTS,
                    node = self.node,
                    term = current,
                    "term read without the lock"
                );
                if current < term {
                    self.term.store(term, Ordering::Release);
                    crate::events::debug!(target: EVENTS,
                        node = self.node,
                        term,
                        why = "heartbeat",
                        "term set without the lock"
                    );
                }
                self.heartbeat_term_high_water
                    .fetch_max(term, Ordering::AcqRel);
                return Ok(());
            }
            if self.behavior.ignores_heartbeat_term_before_init() {
                // The code before the patch returns at once while the term is unset,
                // without the lock.
                crate::events::debug!(target: EVENTS,
                    node = self.node,
                    term,
                    "heartbeat term ignored before init"
                );
                self.heartbeat_term_high_water
                    .fetch_max(term, Ordering::AcqRel);
                return Ok(());
            }
        }
        let mut inner = self.inner.lock();
        match self.term_locked(&inner) {
            Some(current) => {
                if current < term {
                    self.set_term_locked(&inner, term, "heartbeat");
                }
            }
            None if self.behavior.ignores_heartbeat_term_before_init() => {
                crate::events::debug!(target: EVENTS,
                    node = self.node,
                    term,
                    "heartbeat term ignored before init"
                );
            }
            None => {
                crate::events::debug!(target: EVENTS,
                    node = self.node,
                    term,
                    "heartbeat term recorded for init"
                );
                inner.max_term_seen_before_init = Some(
                    inner
                        .max_term_seen_before_init
                        .map_or(term, |t| t.max(term)),
                );
            }
        }
        self.heartbeat_term_high_water
            .fetch_max(term, Ordering::AcqRel);
        Ok(())
    }

    /// Queues a command (`addCommand`); raises the term to the command's if it is set and
    /// lower (HDDS-7619; not before it, [`StateContextBehavior::LegacyTermOnPoll`]).
    ///
    /// A full queue refuses the command with [`DatanodeError::CommandQueueFull`].
    pub fn add_command(&self, command: ScmCommand) -> Result<(), DatanodeError> {
        validate_term(command.term)?;
        let mut inner = self.inner.lock();
        if inner.queue.len() >= self.config.command_queue_limit {
            inner.stats.rejected_queue_full += 1;
            crate::events::debug!(target: EVENTS, node = self.node, command = command.kind.name(), container = command.kind.container_number(), force = command.kind.force(), term = command.term, "command refused: queue full");
            return Err(DatanodeError::CommandQueueFull {
                limit: self.config.command_queue_limit,
                dropped: 1,
            });
        }
        if let Some(current) = self
            .term_locked(&inner)
            .filter(|_| self.behavior.raises_term_on_add())
        {
            if current < command.term {
                self.set_term_locked(&inner, command.term, "command queued");
            }
        }
        crate::events::debug!(target: EVENTS, node = self.node, command = command.kind.name(), container = command.kind.container_number(), force = command.kind.force(), term = command.term, "command queued");
        inner.queue.push_back(command);
        debug_assert!(inner.queue.len() <= self.config.command_queue_limit);
        Ok(())
    }

    /// Hands out the next command whose term equals the (possibly raised) term
    /// (`getNextCommand`), initialising the term first if it can. Commands of a lower term
    /// are dropped. `None`: the queue is empty or the term cannot be initialised yet (the
    /// commands stay queued).
    pub fn get_next_command(&self) -> Option<DispatchedCommand> {
        let mut inner = self.inner.lock();
        if !self.behavior.fences_commands() {
            return self.next_command_unfenced(&mut inner);
        }
        self.init_term_locked(&inner);
        self.term_locked(&inner)?;
        while let Some(command) = inner.queue.pop_front() {
            let mut current = self.term_locked(&inner).unwrap_or(command.term);
            if current < command.term {
                self.set_term_locked(&inner, command.term, "command dispatched");
                current = command.term;
            }
            if command.term == current {
                crate::events::debug!(target: EVENTS, node = self.node, command = command.kind.name(), container = command.kind.container_number(), force = command.kind.force(), term = command.term, "command dispatched");
                return Some(DispatchedCommand {
                    command,
                    term_at_dispatch: current,
                    heartbeat_term_high_water: decode_term(
                        self.heartbeat_term_high_water.load(Ordering::Acquire),
                    ),
                });
            }
            inner.stats.dropped_stale += 1;
            crate::events::debug!(target: EVENTS, node = self.node, command = command.kind.name(), container = command.kind.container_number(), force = command.kind.force(), term = command.term, current, "command dropped as stale");
        }
        None
    }

    /// The code before HDDS-3988: the next queued command, whatever its term.
    fn next_command_unfenced(
        &self,
        inner: &mut MutexGuard<'_, Inner>,
    ) -> Option<DispatchedCommand> {
        let command = inner.queue.pop_front()?;
        crate::events::debug!(target: EVENTS, node = self.node, command = command.kind.name(), container = command.kind.container_number(), force = command.kind.force(), term = command.term, "command dispatched");
        Some(DispatchedCommand {
            term_at_dispatch: command.term,
            command,
            heartbeat_term_high_water: decode_term(
                self.heartbeat_term_high_water.load(Ordering::Acquire),
            ),
        })
    }

    /// Starts the [`StateContextBehavior::Hardened`] bound afresh (the datanode's threads start
    /// now). Nothing else changes.
    pub fn mark_started(&self) {
        self.inner.lock().started_at_ms = self.clock.now_ms();
    }

    /// Models a datanode process restart: the term, the queue and what was seen before
    /// init are lost, every endpoint starts over at GETVERSION. Container data is not
    /// touched (it lives on disk).
    pub fn restart(&self) {
        let mut inner = self.inner.lock();
        inner.queue.clear();
        inner.max_term_seen_before_init = None;
        self.heartbeat_term_high_water
            .store(TERM_UNSET, Ordering::Release);
        inner.started_at_ms = self.clock.now_ms();
        inner.incarnation += 1;
        inner.stats = StateContextStats::default();
        self.term.store(TERM_UNSET, Ordering::Release);
        for endpoint in &self.endpoints {
            endpoint.set_state(EndpointState::GetVersion);
        }
        crate::events::debug!(target: EVENTS,
            node = self.node,
            incarnation = inner.incarnation,
            "restarted: term and queue lost"
        );
    }

    /// The term together with the restart count, read under the lock so the two agree.
    pub fn observe(&self) -> TermObservation {
        let inner = self.inner.lock();
        TermObservation {
            incarnation: inner.incarnation,
            term: self.term_locked(&inner),
        }
    }

    /// Commands waiting in the queue.
    pub fn queue_len(&self) -> usize {
        self.inner.lock().queue.len()
    }

    /// The highest heartbeat term received since the last restart.
    pub fn heartbeat_term_high_water(&self) -> Option<Term> {
        decode_term(self.heartbeat_term_high_water.load(Ordering::Acquire))
    }

    /// Feeds `state` the context's protocol state, all that decides what it does next: the
    /// term, the highest heartbeat term, what was seen before init, the queued commands
    /// (kind and term; their ids only label them) and each endpoint's state. Counters,
    /// restart counts and start times are left out.
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        let inner = self.inner.lock();
        self.term_locked(&inner).hash(state);
        self.heartbeat_term_high_water().hash(state);
        inner.max_term_seen_before_init.hash(state);
        for command in &inner.queue {
            command.digest(state);
        }
        for endpoint in &self.endpoints {
            (endpoint.scm(), endpoint.state()).hash(state);
        }
    }

    /// Counters since the last restart.
    pub fn stats(&self) -> StateContextStats {
        self.inner.lock().stats
    }

    /// `initTermOfLeaderSCM`: once per start, when a majority of the non-passive endpoints
    /// heartbeat and a command is queued.
    fn init_term_locked(&self, inner: &MutexGuard<'_, Inner>) {
        if self.term_locked(inner).is_some() {
            return;
        }
        let scm_count = self.endpoints.iter().filter(|e| !e.is_passive()).count();
        let heartbeating = self
            .endpoints
            .iter()
            .filter(|e| !e.is_passive() && e.state() == EndpointState::Heartbeat)
            .count();
        if heartbeating < scm_count / 2 + 1 {
            return;
        }
        let Some(max_queued) = inner.queue.iter().map(|c| c.term).max() else {
            return;
        };
        if self.behavior == StateContextBehavior::Hardened
            && inner.max_term_seen_before_init.is_none()
            && self.clock.now_ms().saturating_sub(inner.started_at_ms)
                < self.config.await_leader_term_bound_ms
        {
            return;
        }
        let term = inner
            .max_term_seen_before_init
            .map_or(max_queued, |seen| seen.max(max_queued));
        crate::events::debug!(target: EVENTS, node = self.node,
            term,
            highest_queued = max_queued,
            heartbeat_seen = inner.max_term_seen_before_init,
            "term initialised"
        );
        self.set_term_locked(inner, term, "init");
    }

    /// Reads the term; the guard proves the caller holds the lock.
    fn term_locked(&self, _inner: &MutexGuard<'_, Inner>) -> Option<Term> {
        decode_term(self.term.load(Ordering::Acquire))
    }

    /// Writes the term; the guard proves the caller holds the lock. `why` names the step
    /// that raised it, for the story of a failure.
    fn set_term_locked(&self, _inner: &MutexGuard<'_, Inner>, term: Term, why: &'static str) {
        self.term.store(term, Ordering::Release);
        crate::events::debug!(target: EVENTS,
            node = self.node,
            term,
            why,
            "term set"
        );
    }
}

fn decode_term(raw: i64) -> Option<Term> {
    (raw != TERM_UNSET).then_some(raw)
}
