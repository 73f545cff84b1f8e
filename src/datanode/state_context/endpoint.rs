//! The datanode's connection to one SCM (`EndpointStateMachine`), whose states
//! `initTermOfLeaderSCM` counts (HDDS-17268).
//!
//! **The race.** Term init needs only a majority of the SCM endpoints in HEARTBEAT and a
//! queued command; if the first command comes from a deposed leader before the new
//! leader's heartbeat term was applied, init takes the old term.
//!
//! **The fix** keeps the heartbeat term seen before init for init (see `StateContext`);
//! the endpoint states are read by init and moved by each endpoint's heartbeat thread
//! through atomics of the sync facade, so the checkers see every move.

use crate::hdds::ids::ScmId;
use crate::sync::Arc;
use crate::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The states of the connection to one SCM (`EndpointStateMachine.EndPointStates`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndpointState {
    /// Asking the SCM for its version.
    GetVersion,
    /// Registering with the SCM.
    Register,
    /// Registered; heartbeating.
    Heartbeat,
    /// The endpoint is stopped.
    Shutdown,
}

impl EndpointState {
    const ORDER: [EndpointState; 4] = [
        EndpointState::GetVersion,
        EndpointState::Register,
        EndpointState::Heartbeat,
        EndpointState::Shutdown,
    ];

    /// The state after this one (saturating at `Shutdown`).
    pub fn next(self) -> EndpointState {
        let index = Self::ORDER.iter().position(|s| *s == self).unwrap_or(3);
        Self::ORDER[(index + 1).min(3)]
    }

    fn encode(self) -> usize {
        Self::ORDER.iter().position(|s| *s == self).unwrap_or(3)
    }

    fn decode(code: usize) -> EndpointState {
        Self::ORDER[code.min(3)]
    }
}

/// The datanode's view of its connection to one SCM (`EndpointStateMachine`).
#[derive(Debug)]
pub struct EndpointStateMachine {
    scm: ScmId,
    passive: bool,
    state: AtomicUsize,
    missed_count: AtomicU64,
}

impl EndpointStateMachine {
    /// The connection to `scm`, starting at GETVERSION; a `passive` one (Recon) never
    /// counts toward the majority that term init needs.
    pub fn new(scm: ScmId, passive: bool) -> Self {
        Self {
            scm,
            passive,
            state: AtomicUsize::new(EndpointState::GetVersion.encode()),
            missed_count: AtomicU64::new(0),
        }
    }

    /// One connection per SCM of `endpoints` (each with whether it is passive), in order,
    /// shared with the heartbeat threads: what a term-fencing implementation keeps and
    /// reads at init.
    pub fn for_scms(endpoints: &[(ScmId, bool)]) -> Vec<Arc<EndpointStateMachine>> {
        endpoints
            .iter()
            .map(|&(scm, passive)| Arc::new(EndpointStateMachine::new(scm, passive)))
            .collect()
    }

    /// The SCM at the other end.
    pub fn scm(&self) -> ScmId {
        self.scm
    }

    /// A passive endpoint (Recon) never counts toward the majority that term init needs.
    pub fn is_passive(&self) -> bool {
        self.passive
    }

    /// The current state.
    pub fn state(&self) -> EndpointState {
        EndpointState::decode(self.state.load(Ordering::Acquire))
    }

    /// Moves to `state`.
    pub fn set_state(&self, state: EndpointState) {
        self.state.store(state.encode(), Ordering::Release);
    }

    /// Consecutive calls the SCM did not answer.
    pub fn missed_count(&self) -> u64 {
        self.missed_count.load(Ordering::Relaxed)
    }

    pub(crate) fn record_missed(&self) {
        self.missed_count.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_answered(&self) {
        self.missed_count.store(0, Ordering::Relaxed);
    }
}
