//! Which term-fencing logic a `StateContext` runs, and its limits (HDDS-17268).
//!
//! **The race.** Before the patch a heartbeat term that came before
//! `initTermOfLeaderSCM` was discarded, and `updateTermOfLeaderSCM` raised the term with an
//! unlocked check-then-set: either way a deposed leader's command could run.
//!
//! **The fix.** [`StateContextBehavior::SeedPatch`] is the seed's patch (terms seen before
//! init kept for init, every update under the context lock); each `Legacy…` value restores
//! one or both defects, and [`StateContextBehavior::Hardened`] adds a wait for a leader's term.
//! Three more `Legacy…` values undo an earlier upstream fix of the same fence: HDDS-3988 (no
//! fence at all), HDDS-7620 (the handlers' second check) and HDDS-7621 (a heartbeat
//! response's term read).

/// Which term-fencing logic a [`StateContext`](super::StateContext) runs, named after the upstream code it
/// equals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateContextBehavior {
    /// The seed's attached patch (HDDS-17268): heartbeat terms before init are recorded and
    /// used at init; every update holds the context lock; the term is volatile for the
    /// handler threads. Nothing else.
    ///
    /// Residual window (left open by the patch, on purpose): init needs only a majority of
    /// endpoints in HEARTBEAT and a queued command, so if the first command comes from a
    /// deposed leader before any response of the new leader was processed, init takes the
    /// old term and the command runs.
    SeedPatch,
    /// The seed's patch and this crate's one addition: init also waits until a heartbeat
    /// response of a leader has carried a term. This closes the residual window when the
    /// deposed leader has stepped down (a follower sends no term, so the first term is the
    /// new leader's). It cannot help while the deposed leader still believes it leads and
    /// answers first: its term is a leader's term as far as any datanode can tell.
    ///
    /// Trade-off: a cluster whose SCMs send no term (an SCM older than HDDS-7621, or no
    /// leader at all) would stop command processing, so after
    /// [`StateContextConfig::await_leader_term_bound_ms`] since the (re)start the rule falls
    /// back to [`StateContextBehavior::SeedPatch`]'s. Commands wait in the queue meanwhile;
    /// a queue that reaches its limit refuses new ones with
    /// [`DatanodeError::CommandQueueFull`](crate::datanode::DatanodeError::CommandQueueFull).
    Hardened,
    /// The code as shipped before the patch (Ozone 1.4.0 to 2.2.1), with both defects: a
    /// heartbeat term received before init is discarded, and once the term is set the
    /// heartbeat path raises it with an unlocked check-then-set.
    Legacy,
    /// The first unpatched defect alone: a heartbeat term received before init is discarded,
    /// so `initTermOfLeaderSCM` takes the highest queued command term only, and a restarted
    /// datanode can take a deposed leader's term (the seed's MC4).
    LegacyIgnoreHeartbeatTermBeforeInit,
    /// The second unpatched defect alone: once the term is set, the heartbeat path
    /// (`updateTermOfLeaderSCM` from each endpoint thread) raises it with an unlocked
    /// check-then-set that can lose a higher concurrent update (the seed's MC5).
    LegacyUnlockedTermUpdate,
    /// The code before HDDS-3988: no command is fenced. `getNextCommand` hands out every
    /// queued command in order and the term is never set; a heartbeat response's term is
    /// not read (upstream's commands carried no term then). A deposed leader that still
    /// believes it leads has every command it queues run.
    LegacyNoTermFence,
    /// The seed's patch with HDDS-7621 undone: a heartbeat response's term is not read, so
    /// the datanode learns a new leader's term only from that leader's commands (at init,
    /// on `addCommand`, on `getNextCommand`). While the new leader sends heartbeats without
    /// commands, a deposed leader's command of the old term still runs.
    LegacyTermFromCommandsOnly,
    /// The seed's patch with HDDS-7620 undone: the delete-container handler and the
    /// replication supervisor run a command handed to them without reading the term again,
    /// so a command dispatched just before a new leader's term arrived runs after it.
    LegacyNoExecutorTermCheck,
    /// The code between HDDS-3988 and HDDS-7619 (so before HDDS-7620 and HDDS-7621 too):
    /// commands are fenced, but the term is raised only when `getNextCommand` polls a
    /// command of a higher term, not when `addCommand` queues it, and a heartbeat
    /// response's term is not read. A deposed leader's command queued ahead of the new
    /// leader's runs before the new leader's raises the term.
    LegacyTermOnPoll,
}

impl StateContextBehavior {
    /// Every behavior, the patched ones first.
    pub const ALL: [StateContextBehavior; 9] = [
        StateContextBehavior::SeedPatch,
        StateContextBehavior::Hardened,
        StateContextBehavior::Legacy,
        StateContextBehavior::LegacyIgnoreHeartbeatTermBeforeInit,
        StateContextBehavior::LegacyUnlockedTermUpdate,
        StateContextBehavior::LegacyNoTermFence,
        StateContextBehavior::LegacyTermFromCommandsOnly,
        StateContextBehavior::LegacyNoExecutorTermCheck,
        StateContextBehavior::LegacyTermOnPoll,
    ];

    /// Whether this runs unpatched code (one defect or both).
    pub fn is_legacy(self) -> bool {
        !matches!(
            self,
            StateContextBehavior::SeedPatch | StateContextBehavior::Hardened
        )
    }

    /// Whether a heartbeat term received before init is discarded (the first defect).
    pub fn ignores_heartbeat_term_before_init(self) -> bool {
        matches!(
            self,
            StateContextBehavior::Legacy
                | StateContextBehavior::LegacyIgnoreHeartbeatTermBeforeInit
        )
    }

    /// Whether the heartbeat path raises a set term without the lock (the second defect).
    pub fn updates_term_unlocked(self) -> bool {
        matches!(
            self,
            StateContextBehavior::Legacy | StateContextBehavior::LegacyUnlockedTermUpdate
        )
    }

    /// Whether `getNextCommand` fences commands by the term at all (HDDS-3988).
    pub fn fences_commands(self) -> bool {
        self != StateContextBehavior::LegacyNoTermFence
    }

    /// Whether a heartbeat response's term is read (HDDS-7621).
    pub fn reads_heartbeat_term(self) -> bool {
        !matches!(
            self,
            StateContextBehavior::LegacyNoTermFence
                | StateContextBehavior::LegacyTermFromCommandsOnly
                | StateContextBehavior::LegacyTermOnPoll
        )
    }

    /// Whether `addCommand` raises a set term to a queued command's higher term
    /// (HDDS-7619; nothing is fenced before HDDS-3988).
    pub fn raises_term_on_add(self) -> bool {
        !matches!(
            self,
            StateContextBehavior::LegacyNoTermFence | StateContextBehavior::LegacyTermOnPoll
        )
    }

    /// Whether the handlers that run commands on their own threads read the term again
    /// before they run one (HDDS-7620; nothing is fenced before HDDS-3988).
    pub fn rechecks_term_at_execution(self) -> bool {
        !matches!(
            self,
            StateContextBehavior::LegacyNoTermFence
                | StateContextBehavior::LegacyNoExecutorTermCheck
                | StateContextBehavior::LegacyTermOnPoll
        )
    }

    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            StateContextBehavior::SeedPatch => "SeedPatch",
            StateContextBehavior::Hardened => "Hardened",
            StateContextBehavior::Legacy => "Legacy",
            StateContextBehavior::LegacyIgnoreHeartbeatTermBeforeInit => {
                "LegacyIgnoreHeartbeatTermBeforeInit"
            }
            StateContextBehavior::LegacyUnlockedTermUpdate => "LegacyUnlockedTermUpdate",
            StateContextBehavior::LegacyNoTermFence => "LegacyNoTermFence",
            StateContextBehavior::LegacyTermFromCommandsOnly => "LegacyTermFromCommandsOnly",
            StateContextBehavior::LegacyNoExecutorTermCheck => "LegacyNoExecutorTermCheck",
            StateContextBehavior::LegacyTermOnPoll => "LegacyTermOnPoll",
        }
    }

    /// The behavior called `name` (as printed by [`StateContextBehavior::name`]).
    pub fn from_name(name: &str) -> Option<StateContextBehavior> {
        StateContextBehavior::ALL
            .into_iter()
            .find(|b| b.name() == name)
    }
}

/// Limits of a [`StateContext`](super::StateContext).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateContextConfig {
    /// Most commands queued at once (`hdds.datanode.command.queue.limit`, default 5000).
    pub command_queue_limit: usize,
    /// With [`StateContextBehavior::Hardened`]: how long after a (re)start init waits for a
    /// leader's heartbeat term before it falls back to the seed patch's rule. Default 90 s, three
    /// default heartbeat intervals (`hdds.heartbeat.interval` 30 s).
    pub await_leader_term_bound_ms: u64,
}

impl Default for StateContextConfig {
    fn default() -> Self {
        Self {
            command_queue_limit: 5000,
            await_leader_term_bound_ms: 90_000,
        }
    }
}
