//! The statements the NameNode's log is read by, and how it shows each event.

use super::super::coverage::{Basis, Shows};
use super::super::layout::Level;
use super::super::statement::Statement;

pub(crate) const FAILOVER: &str = "namenode::namesystem::failover";
pub(crate) const REPORTS: &str = "namenode::namesystem::reports";
pub(crate) const REPLAY: &str = "namenode::namesystem::replay";
pub(crate) const COMPLETION: &str = "namenode::namesystem::completion";
pub(crate) const SAFE_MODE: &str = "namenode::namesystem::state";

/// The statements this format maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Id {
    /// The process's start banner.
    Startup,
    /// `FSNamesystem`: standby services start (reports postponed from here).
    StandbyServices,
    /// `FSNamesystem`: active services start (the catch-up follows, still postponing).
    ActiveServices,
    /// `DatanodeManager`: every datanode marked stale, right after postponing stops.
    MarkingStale,
    /// `BlockManager`: the reports queued while standby are processed.
    DrainingQueued,
    /// `FSNamesystem`: replication queues reprocessed (postponing over).
    Reprocessing,
    /// `BlockManager`: a replica report received.
    Reported,
    /// `BlockManager`: a replica of a datanode's first full report.
    InitialReport,
    /// `BlockManager`: a report queued for later.
    Queueing,
    /// `BlockManager`: a queued report taken out to be judged again.
    Requeued,
    /// `BlockStateChange` (`CorruptReplicasMap`): a replica marked corrupt.
    CorruptAdded,
    /// `BlockStateChange` (`CorruptReplicasMap`): a replica marked corrupt again.
    CorruptAgain,
    /// `BlockStateChange`: a replica's location stored.
    Stored,
    /// `BlockManager`: an RBW report of a complete block with its genstamp ignored.
    RbwIgnored,
    /// `BlockStateChange`: a replica reported again (a genstamp-mismatch mark lifted).
    Redundant,
    /// `BlockStateChange`: a replica's location removed.
    Removed,
    /// `FSEditLogLoader`: an edit replayed.
    Replaying,
    /// Proposed (`docs/upstream-logging.md`), `FSEditLog`: an edit logged by the active
    /// NameNode, as the standby's replay writes it.
    EditLogged,
    /// Proposed, `BlockManagerSafeMode`: the safe-mode counts beside their recount.
    SafeModeCheck,
}

const REPORT_PROCESSED: &[(&str, &str)] = &[(REPORTS, "report processed")];
const MARKED: &[(&str, &str)] = &[(REPORTS, "replica marked corrupt")];

/// Every statement mapped, with its class, level and format.
pub const STATEMENTS: &[Statement<Id>] = &[
    Statement {
        id: Id::Startup,
        class: "",
        level: Level::Info,
        template: "STARTUP_MSG:{}",
        yields: &[(REPORTS, "corrupt mark removed")],
    },
    Statement {
        id: Id::StandbyServices,
        class: "FSNamesystem",
        level: Level::Info,
        template: "Starting services required for standby state",
        yields: &[(FAILOVER, "transition to standby")],
    },
    Statement {
        id: Id::ActiveServices,
        class: "FSNamesystem",
        level: Level::Info,
        template: "Starting services required for active state",
        yields: &[(FAILOVER, "failover: state active")],
    },
    Statement {
        id: Id::MarkingStale,
        class: "DatanodeManager",
        level: Level::Info,
        template: "Marking all datanodes as stale",
        yields: &[(FAILOVER, "transition to active")],
    },
    Statement {
        id: Id::DrainingQueued,
        class: "BlockManager",
        level: Level::Info,
        template: "Processing {} messages from DataNodes that were previously queued during standby state",
        yields: &[(FAILOVER, "queued reports drained")],
    },
    Statement {
        id: Id::Reprocessing,
        class: "FSNamesystem",
        level: Level::Info,
        template: "Reprocessing replication and invalidation queues",
        yields: &[],
    },
    Statement {
        id: Id::Reported,
        class: "BlockManager",
        level: Level::Debug,
        template: "Reported block {} on {} size {} replicaState = {}",
        yields: REPORT_PROCESSED,
    },
    Statement {
        id: Id::InitialReport,
        class: "BlockManager",
        level: Level::Debug,
        template: "Initial report of block {} on {} size {} replicaState = {}",
        yields: REPORT_PROCESSED,
    },
    Statement {
        id: Id::Queueing,
        class: "BlockManager",
        level: Level::Debug,
        template: "Queueing reported block {} in state {} from datanode {} for later processing because {}.",
        yields: &[(REPORTS, "report queued")],
    },
    Statement {
        id: Id::Requeued,
        class: "BlockManager",
        level: Level::Debug,
        template: "Processing previouly queued message ReportedBlockInfo [block={}, dn={}, reportedState={}]",
        yields: &[],
    },
    Statement {
        id: Id::CorruptAdded,
        class: "BlockStateChange",
        level: Level::Debug,
        template: "BLOCK NameSystem.addToCorruptReplicasMap: {} added as corrupt on {} by {} {}",
        yields: MARKED,
    },
    Statement {
        id: Id::CorruptAgain,
        class: "BlockStateChange",
        level: Level::Debug,
        template: "BLOCK NameSystem.addToCorruptReplicasMap: duplicate requested for {} to add as corrupt on {} by {} {}",
        yields: MARKED,
    },
    Statement {
        id: Id::Stored,
        class: "BlockStateChange",
        level: Level::Debug,
        template: "BLOCK* addStoredBlock: blockMap updated: {} is added to {} size {}",
        yields: REPORT_PROCESSED,
    },
    Statement {
        id: Id::RbwIgnored,
        class: "BlockManager",
        level: Level::Info,
        template: "Received an RBW replica for {} on {}: ignoring it, since it is complete with the same genstamp",
        yields: REPORT_PROCESSED,
    },
    Statement {
        id: Id::Redundant,
        class: "BlockStateChange",
        level: Level::Warn,
        template: "BLOCK* addStoredBlock: Redundant addStoredBlock request received for {} on node {} size {}",
        yields: &[
            (REPORTS, "report processed"),
            (REPORTS, "corrupt mark removed"),
        ],
    },
    Statement {
        id: Id::Removed,
        class: "BlockStateChange",
        level: Level::Debug,
        template: "BLOCK* removeStoredBlock: {} from {}",
        yields: &[(REPORTS, "location removed")],
    },
    Statement {
        id: Id::Replaying,
        class: "FSEditLogLoader",
        level: Level::Trace,
        template: "replaying edit log: {}",
        yields: &[(REPLAY, "edit applied"), (COMPLETION, "block completed")],
    },
];

/// The statements `docs/upstream-logging.md` proposes upstream add, as this format reads
/// them: none is in upstream's code today.
pub const PROPOSED: &[Statement<Id>] = &[
    Statement {
        id: Id::EditLogged,
        class: "FSEditLog",
        level: Level::Trace,
        template: "logging edit: {}",
        yields: &[(REPLAY, "edit applied"), (COMPLETION, "block completed")],
    },
    Statement {
        id: Id::SafeModeCheck,
        class: "BlockManagerSafeMode",
        level: Level::Debug,
        template: "Safe mode consistency check: blockTotal={}, blockSafe={}, recounted total={}, recounted safe={}, blocks with corrupt replicas={}.",
        yields: &[(SAFE_MODE, "safe mode consistency check")],
    },
];

const JUDGED: &[Id] = &[
    Id::Reported,
    Id::Stored,
    Id::RbwIgnored,
    Id::Queueing,
    Id::CorruptAdded,
];
const BY_LOCATION: &str = "its effect is the `removeStoredBlock` line of each location it removes";

/// How the NameNode's log shows each event the monitors read.
pub const SHOWS: &[Shows<Id>] = &[
    Shows {
        component: REPORTS,
        event: "replica marked corrupt",
        only: None,
        basis: Basis::Logged(&[Id::CorruptAdded, Id::CorruptAgain]),
        how: "BlockStateChange DEBUG",
    },
    Shows {
        component: REPORTS,
        event: "report processed",
        only: None,
        basis: Basis::Logged(JUDGED),
        how: "a BlockManager DEBUG receipt and the outcome's line",
    },
    Shows {
        component: REPORTS,
        event: "report queued",
        only: None,
        basis: Basis::Logged(&[Id::Queueing]),
        how: "BlockManager DEBUG",
    },
    Shows {
        component: REPORTS,
        event: "corrupt mark removed",
        only: None,
        basis: Basis::Logged(&[Id::Redundant, Id::Removed, Id::Replaying]),
        how: "a replica reported again (WARN), its location removed, its file deleted",
    },
    Shows {
        component: REPORTS,
        event: "location removed",
        only: None,
        basis: Basis::Logged(&[Id::Removed]),
        how: "BlockStateChange DEBUG",
    },
    Shows {
        component: REPORTS,
        event: "datanode removed",
        only: None,
        basis: Basis::Logged(&[Id::Removed]),
        how: BY_LOCATION,
    },
    Shows {
        component: "namenode::namesystem::replication",
        event: "replica invalidated",
        only: None,
        basis: Basis::Logged(&[Id::Removed]),
        how: BY_LOCATION,
    },
    Shows {
        component: REPLAY,
        event: "edit applied",
        only: None,
        basis: Basis::Logged(&[Id::Replaying]),
        how: "FSEditLogLoader TRACE, on a standby",
    },
    Shows {
        component: COMPLETION,
        event: "block completed",
        only: None,
        basis: Basis::Logged(&[Id::Replaying]),
        how: "the replayed edit that completes it (FSEditLogLoader TRACE), on a standby",
    },
    Shows {
        component: "namenode::namesystem::pipeline",
        event: "block reopened",
        only: None,
        basis: Basis::Logged(&[Id::Replaying]),
        how: "the replayed append (FSEditLogLoader TRACE), on a standby",
    },
    Shows {
        component: FAILOVER,
        event: "transition to standby",
        only: None,
        basis: Basis::Logged(&[Id::StandbyServices]),
        how: "FSNamesystem INFO",
    },
    Shows {
        component: FAILOVER,
        event: "transition to active",
        only: None,
        basis: Basis::Logged(&[Id::MarkingStale]),
        how: "DatanodeManager INFO",
    },
    Shows {
        component: SAFE_MODE,
        event: "safe mode consistency check",
        only: None,
        basis: Basis::Proposed {
            today: &[],
            proposed: &[Id::SafeModeCheck],
        },
        how: "doConsistencyCheck logs nothing (it throws under assertions)",
    },
];
