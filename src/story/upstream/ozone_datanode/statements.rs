//! The statements the datanode's log is read by, and how it shows each event.

use super::super::coverage::{Basis, Shows};
use super::super::layout::{CONTAINER_LOG, Level};
use super::super::statement::Statement;

pub(super) const STATE_CONTEXT: &str = "datanode::state_context";
pub(super) const DISPATCHER: &str = "datanode::dispatcher";
pub(super) const RECONCILE: &str = "datanode::container::reconcile";
pub(super) const COMMIT: &str = "datanode::container::reconcile::commit";
pub(super) const DELETION: &str = "datanode::container::deletion";
pub(super) const CHECKSUM_TREE: &str = "datanode::container::checksum_tree";
pub(super) const REPLICA: &str = "datanode::container::replica";
pub(super) const REPLICA_SET: &str = "datanode::container::replica_set";
pub(super) const SCANNER: &str = "datanode::container::scanner";

/// The statements this format maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Id {
    /// The process's start banner.
    Startup,
    /// `StateContext`: a queued command below the term dropped.
    StaleDropped,
    /// `StateContext`: a command refused, the queue full.
    QueueFull,
    /// `DeleteContainerCommandHandler`: skipped, the term risen.
    DeleteStaleTerm,
    /// `DeleteContainerCommandHandler`: skipped, past its deadline.
    DeleteExpired,
    /// `ReplicationSupervisor`: a task skipped, the term risen.
    TaskStaleTerm,
    /// `ReplicationSupervisor`: a task skipped, past its deadline.
    TaskExpired,
    /// `ReplicationSupervisor`: a task done.
    TaskDone,
    /// `ReplicationSupervisor`: a task failed.
    TaskFailed,
    /// `KeyValueHandler`: reconciliation with a peer begins.
    ReconcileBegins,
    /// `KeyValueHandler`: a chunk pulled from a peer written.
    ChunkIngested,
    /// `KeyValueHandler`: every chunk of a block repaired (metadata committed).
    BlockReconciled,
    /// `KeyValueHandler`: a block repaired in part.
    BlockPartial,
    /// `KeyValueHandler`: reconciliation with every peer done.
    ReconcileDone,
    /// `BlockDeletingTask`: the container a deleting task works on (schema 1, 2).
    DeletingContainer,
    /// `BlockDeletingTask`: the container a deleting task works on (schema 3).
    DeletingContainerV3,
    /// `BlockDeletingTask`: a block deleted.
    DeletingBlock,
    /// Container log: a replica force deleted.
    ForceDeleted,
    /// Container log: an empty replica deleted.
    EmptyDeleted,
    /// Container log: a replica created (OPEN, no message).
    ContainerOpened,
    /// `ContainerChecksumTreeManager`: a tree file written, with its data checksum.
    TreeWritten,
    /// `KeyValueHandler`: a replica's data checksum changed.
    ChecksumUpdated,
    /// `KeyValueHandler`: a replica's first data checksum (the same message, at DEBUG).
    ChecksumFirst,
    /// `OnDemandContainerScanner` (`ContainerScanHelper`): a scan found nothing wrong.
    ScanCompleted,
    /// `OnDemandContainerScanner` (`ContainerScanHelper`): a scan found corruption and
    /// marked the replica UNHEALTHY.
    ScanCorruption,
    /// Proposed (`docs/upstream-logging.md`), `StateContext`: the term initialised.
    TermInitialized,
    /// Proposed, `StateContext`: the term raised.
    TermUpdated,
    /// Proposed, `StateContext`: a heartbeat's term before the term is initialised,
    /// ignored or kept for init.
    HeartbeatTermBeforeInit,
    /// Proposed, `StateContext`: a command queued.
    CommandAdded,
    /// Proposed, `StateContext`: a command handed out to the command processor.
    CommandHandedOut,
    /// Proposed, `CloseContainerCommandHandler`: a close-container command processed.
    CloseProcessed,
    /// Proposed, `DeleteBlocksCommandHandler`: a delete-blocks command processed.
    DeleteBlocksProcessed,
    /// Proposed, `DeleteContainerCommandHandler`: a delete-container command processed.
    DeleteContainerProcessed,
    /// Proposed, `KeyValueHandler`: a reconciled block without its chunk file.
    BlockFileMissing,
}

const RUN: &[(&str, &str)] = &[(DISPATCHER, "command run")];

/// Every statement mapped, with its class, level and format.
pub const STATEMENTS: &[Statement<Id>] = &[
    Statement {
        id: Id::Startup,
        class: "",
        level: Level::Info,
        template: "STARTUP_MSG:{}",
        yields: &[(STATE_CONTEXT, "restarted: term and queue lost")],
    },
    Statement {
        id: Id::StaleDropped,
        class: "StateContext",
        level: Level::Warn,
        template: "Detect and drop a SCMCommand {} from stale leader SCM, stale term {}, latest term {}.",
        yields: &[(STATE_CONTEXT, "command dropped as stale")],
    },
    Statement {
        id: Id::QueueFull,
        class: "StateContext",
        level: Level::Warn,
        template: "Ignore command as command queue crosses max limit {}.",
        yields: &[(STATE_CONTEXT, "command refused: queue full")],
    },
    Statement {
        id: Id::DeleteStaleTerm,
        class: "DeleteContainerCommandHandler",
        level: Level::Info,
        template: "Ignoring delete container command for container {} since SCM leader has new term ({} < {})",
        yields: RUN,
    },
    Statement {
        id: Id::DeleteExpired,
        class: "DeleteContainerCommandHandler",
        level: Level::Info,
        template: "Not processing the delete container command for container {} as the current time {}ms is after the command deadline {}ms",
        yields: RUN,
    },
    Statement {
        id: Id::TaskStaleTerm,
        class: "ReplicationSupervisor",
        level: Level::Info,
        template: "Ignoring {} since SCM leader has new term ({} < {})",
        yields: RUN,
    },
    Statement {
        id: Id::TaskExpired,
        class: "ReplicationSupervisor",
        level: Level::Info,
        template: "Ignoring {} since the deadline has passed ({} < {})",
        yields: RUN,
    },
    Statement {
        id: Id::TaskDone,
        class: "ReplicationSupervisor",
        level: Level::Info,
        template: "Successful {}",
        yields: RUN,
    },
    Statement {
        id: Id::TaskFailed,
        class: "ReplicationSupervisor",
        level: Level::Warn,
        template: "Failed {}",
        yields: RUN,
    },
    Statement {
        id: Id::ReconcileBegins,
        class: "KeyValueHandler",
        level: Level::Info,
        template: "Beginning reconciliation for container {} with peer {}. Current data checksum is {}",
        yields: &[(RECONCILE, "reconciliation started")],
    },
    Statement {
        id: Id::ChunkIngested,
        class: "KeyValueHandler",
        level: Level::Debug,
        template: "Successfully ingested chunk at offset {} into block {} of container {} from peer {}",
        yields: &[(RECONCILE, "chunk pulled")],
    },
    Statement {
        id: Id::BlockReconciled,
        class: "KeyValueHandler",
        level: Level::Debug,
        template: "Reconciled all {} chunks in block {} in container {} from peer {}",
        yields: &[(COMMIT, "commit decided")],
    },
    Statement {
        id: Id::BlockPartial,
        class: "KeyValueHandler",
        level: Level::Warn,
        template: "Partially reconciled block {} in container {} with peer {}. {}/{} chunks were obtained successfully",
        yields: &[(COMMIT, "commit decided")],
    },
    Statement {
        id: Id::ReconcileDone,
        class: "KeyValueHandler",
        level: Level::Info,
        template: "Completed reconciliation for container {} with {}/{} peers. {}",
        yields: &[(RECONCILE, "reconciliation finished")],
    },
    Statement {
        id: Id::DeletingContainer,
        class: "BlockDeletingTask",
        level: Level::Debug,
        template: "{}, toDeleteBlocks: {}",
        yields: &[],
    },
    Statement {
        id: Id::DeletingContainerV3,
        class: "BlockDeletingTask",
        level: Level::Debug,
        template: "{}, delBlocks: {}",
        yields: &[],
    },
    Statement {
        id: Id::DeletingBlock,
        class: "BlockDeletingTask",
        level: Level::Debug,
        template: "Deleting block {}",
        yields: &[(DELETION, "block deleted")],
    },
    Statement {
        id: Id::ForceDeleted,
        class: CONTAINER_LOG,
        level: Level::Info,
        template: "ID={} | Index={} | BCSID={} | State={} | Container force deleted",
        yields: RUN,
    },
    Statement {
        id: Id::EmptyDeleted,
        class: CONTAINER_LOG,
        level: Level::Info,
        template: "ID={} | Index={} | BCSID={} | State={} | Empty container deleted",
        yields: RUN,
    },
    Statement {
        id: Id::ContainerOpened,
        class: CONTAINER_LOG,
        level: Level::Info,
        template: "ID={} | Index={} | BCSID={} | State=OPEN | Volume={} | DataChecksum={}",
        yields: &[(REPLICA_SET, "container created")],
    },
    Statement {
        id: Id::TreeWritten,
        class: "ContainerChecksumTreeManager",
        level: Level::Debug,
        template: "Merkle tree for container {} updated with container data checksum {}",
        yields: &[(CHECKSUM_TREE, "tree written")],
    },
    Statement {
        id: Id::ChecksumUpdated,
        class: "KeyValueHandler",
        level: Level::Warn,
        template: "Container {} data checksum updated from {} to {}",
        yields: &[(REPLICA, "checksum refreshed")],
    },
    Statement {
        id: Id::ChecksumFirst,
        class: "KeyValueHandler",
        level: Level::Debug,
        template: "Container {} data checksum updated from {} to {}",
        yields: &[(REPLICA, "checksum refreshed")],
    },
    Statement {
        id: Id::ScanCompleted,
        class: "OnDemandContainerScanner",
        level: Level::Debug,
        template: "Completed scan of container {} at {}",
        yields: &[(SCANNER, "container scanned")],
    },
    Statement {
        id: Id::ScanCorruption,
        class: "OnDemandContainerScanner",
        level: Level::Error,
        template: "Corruption detected in container [{}]. Marking it UNHEALTHY. {}",
        yields: &[(SCANNER, "container scanned")],
    },
];

/// The proposed handlers' statement: the command as upstream writes it (its `toString`,
/// with its term), then `done`, or `failed:` and the reason.
const PROCESSED: &str = "Processed command {}, outcome {}.";

/// The statements `docs/upstream-logging.md` proposes upstream add, as this format reads
/// them: none is in upstream's code today. A log of an unpatched datanode holds none of
/// their lines, so the events only they show stay unlogged there ([`Basis::Proposed`]).
pub const PROPOSED: &[Statement<Id>] = &[
    Statement {
        id: Id::TermInitialized,
        class: "StateContext",
        level: Level::Info,
        template: "Initialized termOfLeaderSCM to {}.",
        yields: &[(STATE_CONTEXT, "term set")],
    },
    Statement {
        id: Id::TermUpdated,
        class: "StateContext",
        level: Level::Info,
        template: "Updated termOfLeaderSCM from {} to {}.",
        yields: &[(STATE_CONTEXT, "term set")],
    },
    Statement {
        id: Id::HeartbeatTermBeforeInit,
        class: "StateContext",
        level: Level::Debug,
        template: "Heartbeat term {} arrived before termOfLeaderSCM was initialized, {}.",
        yields: &[
            (STATE_CONTEXT, "heartbeat term ignored before init"),
            (STATE_CONTEXT, "heartbeat term recorded for init"),
        ],
    },
    Statement {
        id: Id::CommandAdded,
        class: "StateContext",
        level: Level::Debug,
        template: "Added command {} to the command queue.",
        yields: &[(STATE_CONTEXT, "command queued")],
    },
    Statement {
        id: Id::CommandHandedOut,
        class: "StateContext",
        level: Level::Debug,
        template: "Handing out command {}, termOfLeaderSCM {}.",
        yields: &[(STATE_CONTEXT, "command dispatched")],
    },
    Statement {
        id: Id::CloseProcessed,
        class: "CloseContainerCommandHandler",
        level: Level::Info,
        template: PROCESSED,
        yields: RUN,
    },
    Statement {
        id: Id::DeleteBlocksProcessed,
        class: "DeleteBlocksCommandHandler",
        level: Level::Debug,
        template: PROCESSED,
        yields: RUN,
    },
    Statement {
        id: Id::DeleteContainerProcessed,
        class: "DeleteContainerCommandHandler",
        level: Level::Info,
        template: PROCESSED,
        yields: RUN,
    },
    Statement {
        id: Id::BlockFileMissing,
        class: "KeyValueHandler",
        level: Level::Warn,
        template: "Block {} of container {} reconciled from peer {} has no chunk file, its metadata is {}.",
        yields: &[(COMMIT, "block file not found")],
    },
];

const NOT_LOGGED_TERM: &str = "StateContext logs no term update, heartbeat term or hand-out";

/// How the datanode's log shows each event the monitors read.
pub const SHOWS: &[Shows<Id>] = &[
    Shows {
        component: STATE_CONTEXT,
        event: "restarted: term and queue lost",
        only: None,
        basis: Basis::Logged(&[Id::Startup]),
        how: "every start writes its STARTUP_MSG banner",
    },
    Shows {
        component: STATE_CONTEXT,
        event: "command dropped as stale",
        only: None,
        basis: Basis::Logged(&[Id::StaleDropped]),
        how: "StateContext WARN",
    },
    Shows {
        component: STATE_CONTEXT,
        event: "command refused: queue full",
        only: None,
        basis: Basis::Logged(&[Id::QueueFull]),
        how: "StateContext WARN (without the command)",
    },
    Shows {
        component: STATE_CONTEXT,
        event: "command dispatched",
        only: None,
        basis: Basis::Proposed {
            today: &[],
            proposed: &[Id::CommandHandedOut],
        },
        how: "getNextCommand logs nothing when it hands a command out",
    },
    Shows {
        component: STATE_CONTEXT,
        event: "command queued",
        only: None,
        basis: Basis::Proposed {
            today: &[],
            proposed: &[Id::CommandAdded],
        },
        how: "a command's receipt is logged at DEBUG without its term",
    },
    Shows {
        component: STATE_CONTEXT,
        event: "term set",
        only: None,
        basis: Basis::Proposed {
            today: &[],
            proposed: &[Id::TermInitialized, Id::TermUpdated],
        },
        how: NOT_LOGGED_TERM,
    },
    Shows {
        component: STATE_CONTEXT,
        event: "term set without the lock",
        only: None,
        // The proposed update statement logs every write of the term, with or without
        // the lock: it yields `term set`, which the monitors read alike.
        basis: Basis::Proposed {
            today: &[],
            proposed: &[Id::TermUpdated],
        },
        how: NOT_LOGGED_TERM,
    },
    Shows {
        component: STATE_CONTEXT,
        event: "heartbeat term recorded for init",
        only: None,
        basis: Basis::Proposed {
            today: &[],
            proposed: &[Id::HeartbeatTermBeforeInit],
        },
        how: NOT_LOGGED_TERM,
    },
    Shows {
        component: STATE_CONTEXT,
        event: "heartbeat term ignored before init",
        only: None,
        basis: Basis::Proposed {
            today: &[],
            proposed: &[Id::HeartbeatTermBeforeInit],
        },
        how: NOT_LOGGED_TERM,
    },
    Shows {
        component: DISPATCHER,
        event: "command run",
        only: None,
        basis: Basis::Proposed {
            today: &[
                Id::DeleteStaleTerm,
                Id::DeleteExpired,
                Id::TaskStaleTerm,
                Id::TaskExpired,
                Id::TaskDone,
                Id::TaskFailed,
            ],
            proposed: &[
                Id::CloseProcessed,
                Id::DeleteBlocksProcessed,
                Id::DeleteContainerProcessed,
            ],
        },
        how: "replication, reconstruction and reconciliation tasks are logged; a close-container, delete-blocks or delete-container command's run is not, with its term",
    },
    Shows {
        component: DISPATCHER,
        event: "command run",
        only: Some("DeleteContainer"),
        basis: Basis::Logged(&[Id::ForceDeleted, Id::EmptyDeleted]),
        how: "the container log records every replica deleted",
    },
    Shows {
        component: RECONCILE,
        event: "reconciliation started",
        only: None,
        basis: Basis::Logged(&[Id::ReconcileBegins]),
        how: "KeyValueHandler INFO",
    },
    Shows {
        component: RECONCILE,
        event: "reconciliation finished",
        only: None,
        basis: Basis::Logged(&[Id::ReconcileDone]),
        how: "KeyValueHandler INFO/WARN",
    },
    Shows {
        component: RECONCILE,
        event: "chunk pulled",
        only: None,
        basis: Basis::Logged(&[Id::ChunkIngested]),
        how: "KeyValueHandler DEBUG",
    },
    Shows {
        component: COMMIT,
        event: "commit decided",
        only: None,
        basis: Basis::Logged(&[Id::BlockReconciled, Id::BlockPartial]),
        how: "KeyValueHandler DEBUG (whole) and WARN (partial)",
    },
    Shows {
        component: COMMIT,
        event: "block file not found",
        only: None,
        basis: Basis::Proposed {
            today: &[],
            proposed: &[Id::BlockFileMissing],
        },
        how: "its ERROR does not say whether the metadata was committed",
    },
    Shows {
        component: COMMIT,
        event: "pulled chunks removed",
        only: None,
        basis: Basis::NotInUpstream,
        how: "upstream does not cut a repaired block's file back",
    },
    Shows {
        component: "datanode::container::peer_deletion",
        event: "peer deletion applied",
        only: None,
        basis: Basis::NotInUpstream,
        how: "upstream marks a peer's deleted blocks in its own tree only",
    },
    Shows {
        component: DELETION,
        event: "block deleted",
        only: None,
        basis: Basis::Logged(&[
            Id::DeletingBlock,
            Id::DeletingContainer,
            Id::DeletingContainerV3,
        ]),
        how: "BlockDeletingTask DEBUG, the container from the task's line before",
    },
    Shows {
        component: REPLICA_SET,
        event: "container created",
        only: None,
        basis: Basis::Logged(&[Id::ContainerOpened]),
        how: "the container log records every replica created",
    },
    Shows {
        component: CHECKSUM_TREE,
        event: "tree written",
        only: None,
        basis: Basis::Logged(&[Id::TreeWritten]),
        how: "ContainerChecksumTreeManager DEBUG",
    },
    Shows {
        component: REPLICA,
        event: "checksum refreshed",
        only: None,
        basis: Basis::Logged(&[Id::ChecksumUpdated, Id::ChecksumFirst]),
        how: "KeyValueHandler WARN (DEBUG for a replica's first checksum)",
    },
    Shows {
        component: SCANNER,
        event: "container scanned",
        only: None,
        basis: Basis::Logged(&[Id::ScanCompleted, Id::ScanCorruption]),
        how: "OnDemandContainerScanner DEBUG (nothing found) and ERROR (marked UNHEALTHY)",
    },
];
