//! The term-fencing boundary of the datanode (HDDS-17268): [`StateContextApi`], what the
//! heartbeat threads, the command processor and the handlers ask of `StateContext`, so that
//! another implementation can stand where this crate's does and be checked the same way.
//!
//! **The race.** `updateTermOfLeaderSCM` ignored a heartbeat term that came before
//! `initTermOfLeaderSCM` and raised the term with an unlocked check-then-set, so a
//! restarted datanode, or one answered by two leaders at once, ran a deposed leader's command.
//!
//! **The fix** is what the trait's documentation asks of every implementation: a term seen
//! before init is kept for init, every term update is atomic with the others, and
//! `getNextCommand` drops what is below the term. The crate's [`StateContext`] implements it.

use super::behavior::{StateContextBehavior, StateContextConfig};
use super::context::StateContext;
use super::dispatch::{DispatchedCommand, TermObservation};
use super::endpoint::EndpointStateMachine;
use crate::clock::Clock;
use crate::datanode::DatanodeError;
use crate::hdds::command::ScmCommand;
use crate::hdds::ids::{DatanodeId, ScmId};
use crate::hdds::term::Term;
use crate::sync::Arc;

/// The datanode's command queue and leader-SCM term as the rest of the datanode uses them
/// (Ozone's `StateContext`, the part HDDS-3988, HDDS-7621 and HDDS-17268 are about).
///
/// One value is shared by one heartbeat thread per SCM (`HeartbeatEndpointTask`, which
/// calls [`update_term_from_heartbeat`](Self::update_term_from_heartbeat) and then
/// [`add_command`](Self::add_command) for each command of the same response), the command
/// processor ([`get_next_command`](Self::get_next_command)) and the command handlers
/// ([`term_of_leader`](Self::term_of_leader), read when a command is about to run). Every
/// method may be called from any of those threads at any time.
///
/// # What a conforming implementation guarantees
///
/// - **Terms are validated.** A term no SCM can send (below −1, the non-HA term; see
///   [`validate_term`](crate::hdds::term::validate_term)), of a heartbeat or a command, is
///   refused with [`DatanodeError::InvalidTerm`] and changes nothing.
/// - **A heartbeat term before init is kept** (`updateTermOfLeaderSCM` while
///   `termOfLeaderSCM` is empty): the highest such term is remembered until init.
/// - **Init** (`initTermOfLeaderSCM`, inside `getNextCommand`) happens once per process
///   lifetime, when a majority of the non-passive [`endpoints`](Self::endpoints) are in
///   HEARTBEAT and a command is queued, and takes the larger of the highest heartbeat term
///   kept and the highest queued command term. Until then `get_next_command` returns
///   `None` and the commands stay queued. An implementation may wait longer (this crate's
///   `Hardened` waits for a leader's heartbeat term, up to a bound read from the
///   [`Clock`]), never shorter.
/// - **No lost update.** Once initialised, a heartbeat term or a queued command's term
///   raises the term to the maximum of the two, atomically with respect to every other
///   term update and to init: two concurrent updates with 2 and 3 leave the term at 3.
///   The term never goes down within one process lifetime.
/// - **The fence** (`getNextCommand`): commands leave in queue order; one whose term is
///   below the term is dropped; one whose term is above raises the term first; the one
///   returned has exactly the term at that moment
///   ([`DispatchedCommand::term_at_dispatch`]).
/// - **A bounded queue.** [`add_command`](Self::add_command) refuses a command with
///   [`DatanodeError::CommandQueueFull`] when the queue holds its limit
///   (`hdds.datanode.command.queue.limit`).
/// - **Restart** ([`restart`](Self::restart), a datanode process restart) loses the term,
///   the queue and the terms kept for init, puts every endpoint back to GETVERSION, and
///   counts one more incarnation in [`observe`](Self::observe).
///
/// # Synchronization
///
/// Use [`crate::sync`] (or `hadoop_ref::sync` from another crate) for every lock, atomic
/// and thread, and [`Clock`] for time: loom and shuttle see only those. A `std::sync` or
/// `parking_lot` lock is invisible to them, so a racy implementation would pass the loom
/// and shuttle suites (or deadlock the checker's single real thread).
pub trait StateContextApi: Send + Sync + 'static {
    /// The connections to the SCMs, in the order given at creation
    /// (`SCMConnectionManager`'s `EndpointStateMachine`s): each endpoint's heartbeat thread
    /// moves its state, init counts those in HEARTBEAT.
    fn endpoints(&self) -> &[Arc<EndpointStateMachine>];

    /// Applies the term of a heartbeat response (`updateTermOfLeaderSCM(long)`).
    fn update_term_from_heartbeat(&self, term: Term) -> Result<(), DatanodeError>;

    /// Queues a command from a heartbeat response (`addCommand`).
    fn add_command(&self, command: ScmCommand) -> Result<(), DatanodeError>;

    /// Hands out the next command of the current term, initialising the term first if it
    /// can (`getNextCommand`); `None` when nothing can be handed out now.
    fn get_next_command(&self) -> Option<DispatchedCommand>;

    /// The leader-SCM term, `None` before init (`getTermOfLeaderSCM`).
    fn term_of_leader(&self) -> Option<Term>;

    /// Commands waiting in the queue (`getCommandQueueSummary`, summed).
    fn queue_len(&self) -> usize;

    /// A datanode process restart: term, queue and the terms kept for init are lost.
    fn restart(&self);

    /// The term together with the number of restarts so far, read consistently.
    fn observe(&self) -> TermObservation;

    /// The datanode whose context this is, named in protocol events; `None` if not told.
    fn datanode(&self) -> Option<DatanodeId> {
        None
    }

    /// Whether the delete-container handler and the replication supervisor read the term
    /// again when they are about to run a command handed to them, and skip one below it
    /// (HDDS-7620). Upstream does since HDDS-7620; only a reproduction of the code before
    /// it answers `false`.
    fn rechecks_term_at_execution(&self) -> bool {
        true
    }
}

/// Builds a fresh [`StateContextApi`] for a scenario or a conformance run: a datanode that
/// has just started, knowing `endpoints` (each SCM with whether it is passive) and reading
/// time from `clock`.
///
/// [`StateContextBehavior`] is one (the crate's `StateContext` running that behavior), and
/// so is any function or closure with the signature of [`StateContextFactory::create`]
/// (`MyStateContext::start`, say).
pub trait StateContextFactory: Copy + Send + Sync + 'static {
    /// What it builds.
    type Context: StateContextApi;

    /// A freshly started context of datanode `datanode`.
    fn create(
        &self,
        datanode: DatanodeId,
        endpoints: &[(ScmId, bool)],
        clock: Arc<dyn Clock>,
    ) -> Result<Self::Context, DatanodeError>;
}

impl StateContextFactory for StateContextBehavior {
    type Context = StateContext;

    /// `StateContext::new` with this behavior and the default limits, naming `datanode`.
    fn create(
        &self,
        datanode: DatanodeId,
        endpoints: &[(ScmId, bool)],
        clock: Arc<dyn Clock>,
    ) -> Result<StateContext, DatanodeError> {
        Ok(
            StateContext::new(*self, StateContextConfig::default(), endpoints, clock)?
                .for_datanode(datanode),
        )
    }
}

impl<C, F> StateContextFactory for F
where
    C: StateContextApi,
    F: Fn(DatanodeId, &[(ScmId, bool)], Arc<dyn Clock>) -> Result<C, DatanodeError>
        + Copy
        + Send
        + Sync
        + 'static,
{
    type Context = C;

    fn create(
        &self,
        datanode: DatanodeId,
        endpoints: &[(ScmId, bool)],
        clock: Arc<dyn Clock>,
    ) -> Result<C, DatanodeError> {
        self(datanode, endpoints, clock)
    }
}

impl StateContextApi for StateContext {
    fn endpoints(&self) -> &[Arc<EndpointStateMachine>] {
        StateContext::endpoints(self)
    }

    fn update_term_from_heartbeat(&self, term: Term) -> Result<(), DatanodeError> {
        StateContext::update_term_from_heartbeat(self, term)
    }

    fn add_command(&self, command: ScmCommand) -> Result<(), DatanodeError> {
        StateContext::add_command(self, command)
    }

    fn get_next_command(&self) -> Option<DispatchedCommand> {
        StateContext::get_next_command(self)
    }

    fn term_of_leader(&self) -> Option<Term> {
        StateContext::term_of_leader(self)
    }

    fn queue_len(&self) -> usize {
        StateContext::queue_len(self)
    }

    fn restart(&self) {
        StateContext::restart(self);
    }

    fn observe(&self) -> TermObservation {
        StateContext::observe(self)
    }

    fn datanode(&self) -> Option<DatanodeId> {
        StateContext::datanode(self)
    }

    fn rechecks_term_at_execution(&self) -> bool {
        self.behavior().rechecks_term_at_execution()
    }
}
