//! Mutants of the three correct implementations: one change each, to measure what the
//! conformance suites catch (a mutation score for the kit itself).
//!
//! A suite that passes a correct implementation proves little until it is seen failing the
//! near misses a developer writes: a lock split in two, a `max` turned `min`, a check
//! dropped, a window off by one, a rebuild that skips a state, a report counted on the
//! wrong node. Each [`Mutant`] is one such change to [`LockedContext`], [`RebuildingScm`]
//! or [`PerBlockStandby`], switched on through the `mutated` factory of its implementation
//! (`LockedContext::mutated(Mutant::HeartbeatTermLowered)`), the correct code otherwise.
//! The kit's `tests/mutants.rs` runs every mutant through the loom, shuttle and
//! differential suites of its seed, holds each suite to the verdicts [`Mutant::expected`]
//! states, and keeps the table in the scoreboard (`docs/scoreboard.md`).
//!
//! An *equivalent* mutant changes the code and not what it does; each is named, with the
//! reason, and the suites are held to passing it (a suite that caught one would be wrong).
//!
//! [`LockedContext`]: crate::term_fencing::LockedContext
//! [`RebuildingScm`]: crate::scm::RebuildingScm
//! [`PerBlockStandby`]: crate::standby::PerBlockStandby

/// The component a mutant changes, with the seed whose suites judge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    /// [`LockedContext`](crate::term_fencing::LockedContext), HDDS-17268's suites.
    TermFencing,
    /// [`RebuildingScm`](crate::scm::RebuildingScm), HDDS-16891's suites.
    Scm,
    /// [`PerBlockStandby`](crate::standby::PerBlockStandby), HDFS-2742's suites.
    Standby,
}

impl Component {
    /// The implementation's name and the seed key of its suites.
    pub fn label(self) -> &'static str {
        match self {
            Self::TermFencing => "LockedContext (HDDS-17268)",
            Self::Scm => "RebuildingScm (HDDS-16891)",
            Self::Standby => "PerBlockStandby (HDFS-2742)",
        }
    }
}

/// Which suites catch a mutant: the verdict each build's test holds its suite to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdicts {
    /// The loom models (`RUSTFLAGS="--cfg loom"`).
    pub loom: bool,
    /// The shuttle cases (`--features shuttle`).
    pub shuttle: bool,
    /// The differential property test against the reference (the default build).
    pub differential: bool,
}

impl Verdicts {
    /// How many of the three suites catch the mutant.
    pub fn count(self) -> usize {
        [self.loom, self.shuttle, self.differential]
            .into_iter()
            .filter(|c| *c)
            .count()
    }
}

/// Shorthand for the table below: loom, shuttle, differential.
const fn caught_by(loom: bool, shuttle: bool, differential: bool) -> Verdicts {
    Verdicts {
        loom,
        shuttle,
        differential,
    }
}

/// Caught by none: what an equivalent mutant must get.
const NONE: Verdicts = caught_by(false, false, false);

/// One change to one correct implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutant {
    /// `LockedContext`: a heartbeat after init lowers the term (`max` turned `min`).
    HeartbeatTermLowered,
    /// `LockedContext`: a heartbeat before init is not kept (the seed's first defect).
    PreInitHeartbeatTermDropped,
    /// `LockedContext`: the heartbeat reads the term under the lock and writes it under a
    /// second acquisition (the seed's second defect, as a lock split).
    HeartbeatTermLockSplit,
    /// `LockedContext`: queueing a command no longer raises the term; only taking it does
    /// (HDDS-7619's defect).
    CommandTermRaisedOnPollOnly,
    /// `LockedContext`: a command one term behind the datanode's still runs (off by one).
    CommandOneTermBehindRuns,
    /// `LockedContext`: init takes a term before a majority of SCMs heartbeat.
    InitWithoutMajority,
    /// `LockedContext`: init takes the lowest queued command's term (`max` turned `min`).
    InitTakesLowestQueuedTerm,
    /// `LockedContext`: a restart keeps the queued commands.
    RestartKeepsQueue,
    /// `LockedContext`, equivalent: the taken command's term is written once, when it is
    /// dispatched, instead of after each command taken.
    TermWrittenOnDispatchOnly,
    /// `RebuildingScm`: the rebuild skips CLOSING containers.
    RebuildSkipsClosing,
    /// `RebuildingScm`: the rebuild keeps a slot on datanodes that reported the replica.
    RebuildReservesReportedReplicas,
    /// `RebuildingScm`: becoming ready and the rebuild take the lock twice; an allocation
    /// between them sees empty buckets (a lock split).
    ReadyBeforeRebuildLockSplit,
    /// `RebuildingScm`: a datanode takes one container more than it has slots for.
    SpaceCheckOffByOne,
    /// `RebuildingScm`: a replica report clears the pending slot on another datanode.
    ReplicaReportClearsWrongNode,
    /// `RebuildingScm`: the bucket rolls only once strictly more than an interval passed.
    RollWindowOffByOne,
    /// `RebuildingScm`: a reservation that fails part way keeps the slots it took.
    PartialReservationKept,
    /// `RebuildingScm`, equivalent: stepping down keeps the term whose rebuild is done.
    RebuiltForKeptOnStepDown,
    /// `RebuildingScm`, equivalent: the rebuild does not apply the log first.
    RebuildWithoutApplyingLog,
    /// `PerBlockStandby`: an added block's queued reports are not judged after its edit.
    AddedBlockNotDrained,
    /// `PerBlockStandby`: a block whose stamp changed is not drained after the edit.
    StampChangeNotDrained,
    /// `PerBlockStandby`: a report queued behind one re-queued as future is judged anyway.
    ReportsBehindFutureOneJudged,
    /// `PerBlockStandby`: failover judges the queue before the catch-up edits.
    QueueJudgedBeforeCatchUp,
    /// `PerBlockStandby`: a removed datanode's queued reports stay (HDFS-6289's defect).
    DepartedDatanodeReportsKept,
    /// `PerBlockStandby`: losing a location uncounts a safe block one replica late.
    SafeCountOffByOne,
    /// `PerBlockStandby`: completion counts a block safe by its replicas, unclamped.
    CompletionCountUnclamped,
    /// `PerBlockStandby`: a processed report leaves the pair's older queued reports
    /// (HDFS-17477's defect).
    ProcessedReportKeepsQueuedOnes,
}

impl Mutant {
    /// Every mutant, in the table's order.
    pub const ALL: [Mutant; 26] = [
        Self::HeartbeatTermLowered,
        Self::PreInitHeartbeatTermDropped,
        Self::HeartbeatTermLockSplit,
        Self::CommandTermRaisedOnPollOnly,
        Self::CommandOneTermBehindRuns,
        Self::InitWithoutMajority,
        Self::InitTakesLowestQueuedTerm,
        Self::RestartKeepsQueue,
        Self::TermWrittenOnDispatchOnly,
        Self::RebuildSkipsClosing,
        Self::RebuildReservesReportedReplicas,
        Self::ReadyBeforeRebuildLockSplit,
        Self::SpaceCheckOffByOne,
        Self::ReplicaReportClearsWrongNode,
        Self::RollWindowOffByOne,
        Self::PartialReservationKept,
        Self::RebuiltForKeptOnStepDown,
        Self::RebuildWithoutApplyingLog,
        Self::AddedBlockNotDrained,
        Self::StampChangeNotDrained,
        Self::ReportsBehindFutureOneJudged,
        Self::QueueJudgedBeforeCatchUp,
        Self::DepartedDatanodeReportsKept,
        Self::SafeCountOffByOne,
        Self::CompletionCountUnclamped,
        Self::ProcessedReportKeepsQueuedOnes,
    ];

    /// The implementation it changes.
    pub fn component(self) -> Component {
        use Mutant::*;
        match self {
            HeartbeatTermLowered
            | PreInitHeartbeatTermDropped
            | HeartbeatTermLockSplit
            | CommandTermRaisedOnPollOnly
            | CommandOneTermBehindRuns
            | InitWithoutMajority
            | InitTakesLowestQueuedTerm
            | RestartKeepsQueue
            | TermWrittenOnDispatchOnly => Component::TermFencing,
            RebuildSkipsClosing
            | RebuildReservesReportedReplicas
            | ReadyBeforeRebuildLockSplit
            | SpaceCheckOffByOne
            | ReplicaReportClearsWrongNode
            | RollWindowOffByOne
            | PartialReservationKept
            | RebuiltForKeptOnStepDown
            | RebuildWithoutApplyingLog => Component::Scm,
            _ => Component::Standby,
        }
    }

    /// The kind of change, and where.
    pub fn change(self) -> &'static str {
        use Mutant::*;
        match self {
            HeartbeatTermLowered => "max turned min: `update_term_from_heartbeat`",
            PreInitHeartbeatTermDropped => "step dropped: a term before init is not kept",
            HeartbeatTermLockSplit => "lock split: the heartbeat's read and write of the term",
            CommandTermRaisedOnPollOnly => "step dropped: `add_command` raises no term",
            CommandOneTermBehindRuns => "off by one: dispatch accepts `term - 1`",
            InitWithoutMajority => "check dropped: the majority before init",
            InitTakesLowestQueuedTerm => "max turned min: init's queued term",
            RestartKeepsQueue => "reset skips a field: `restart` keeps the queue",
            TermWrittenOnDispatchOnly => "store moved: the term written on dispatch only",
            RebuildSkipsClosing => "rebuild skips a state: CLOSING",
            RebuildReservesReportedReplicas => "check dropped: the rebuild's reported check",
            ReadyBeforeRebuildLockSplit => "lock split: ready, then the rebuild",
            SpaceCheckOffByOne => "off by one: `slots >= pending`",
            ReplicaReportClearsWrongNode => "report counted on the wrong node",
            RollWindowOffByOne => "off by one in a window: `elapsed > interval`",
            PartialReservationKept => "step dropped: the undo of a partial reservation",
            RebuiltForKeptOnStepDown => "reset skips a field: `rebuilt_for` on step-down",
            RebuildWithoutApplyingLog => "step dropped: the rebuild's own log catch-up",
            AddedBlockNotDrained => "step dropped: the drain after `OP_ADD_BLOCK`",
            StampChangeNotDrained => "step dropped: the drain after a stamp change",
            ReportsBehindFutureOneJudged => "check dropped: reports behind a re-queued one",
            QueueJudgedBeforeCatchUp => "order swapped: failover's queue and catch-up",
            DepartedDatanodeReportsKept => "step dropped: `remove_datanode`'s queue purge",
            SafeCountOffByOne => "off by one: `remaining == safe_replication`",
            CompletionCountUnclamped => "clamp dropped: `min(present, minReplication)`",
            ProcessedReportKeepsQueuedOnes => "check dropped: a processed report's supersede",
        }
    }

    /// Why the mutant is equivalent to the correct code, if it is.
    pub fn equivalent(self) -> Option<&'static str> {
        match self {
            Self::TermWrittenOnDispatchOnly => Some(
                "a taken command that raises the term is the one dispatched, so the term \
                 written on dispatch is the one written after each take",
            ),
            Self::RebuiltForKeptOnStepDown => Some(
                "a leader's terms only grow, so a later leadership's term never equals \
                 the one whose rebuild is done",
            ),
            Self::RebuildWithoutApplyingLog => Some(
                "every path to serving applies the log first (leader-ready applies before \
                 it rebuilds), and while a leader waits out safe mode only it appends",
            ),
            _ => None,
        }
    }

    /// The suites that catch it (held by each build's test in `tests/mutants.rs`).
    pub fn expected(self) -> Verdicts {
        use Mutant::*;
        let all = caught_by(true, true, true);
        let concurrent = caught_by(true, true, false);
        let shuttle_and_differential = caught_by(false, true, true);
        match self {
            HeartbeatTermLowered | PreInitHeartbeatTermDropped | CommandOneTermBehindRuns => all,
            InitWithoutMajority | RestartKeepsQueue => all,
            SpaceCheckOffByOne | QueueJudgedBeforeCatchUp | ProcessedReportKeepsQueuedOnes => all,
            // A lock split is no sequence of calls: the sequential differential cannot see it.
            HeartbeatTermLockSplit | ReadyBeforeRebuildLockSplit => concurrent,
            // The rest need a scenario too large for loom (a random cluster), or are
            // sequential scenarios, which the suites run under shuttle only.
            CommandTermRaisedOnPollOnly | InitTakesLowestQueuedTerm => shuttle_and_differential,
            ReplicaReportClearsWrongNode | RebuildSkipsClosing => shuttle_and_differential,
            RebuildReservesReportedReplicas | RollWindowOffByOne | PartialReservationKept => {
                shuttle_and_differential
            }
            AddedBlockNotDrained | StampChangeNotDrained | ReportsBehindFutureOneJudged => {
                shuttle_and_differential
            }
            DepartedDatanodeReportsKept | SafeCountOffByOne | CompletionCountUnclamped => {
                shuttle_and_differential
            }
            TermWrittenOnDispatchOnly | RebuiltForKeptOnStepDown | RebuildWithoutApplyingLog => {
                NONE
            }
        }
    }

    /// Its name in the table (the variant's name).
    pub fn name(self) -> String {
        format!("{self:?}")
    }
}

mod table;

pub use table::{scoreboard_section, with_section};
