//! Commands an SCM sends a datanode in its heartbeat response (`SCMCommand` and its
//! kinds), each stamped with the term of the SCM leader that created it.

use super::ids::{ContainerId, DatanodeId, LocalId, PipelineId};
use super::term::Term;

/// Identifies a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommandId(pub u64);

/// One delete transaction of the SCM's deleted-blocks log, for one container
/// (`DeletedBlocksTransaction`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DeletedBlocksTransaction {
    /// Transaction id, increasing per SCM log.
    pub tx_id: u64,
    /// The container whose blocks are deleted.
    pub container: ContainerId,
    /// Local ids of the blocks.
    pub local_ids: Vec<LocalId>,
}

/// A datanode's answer for one delete transaction (`DeleteBlockTransactionResult` of
/// `ContainerBlocksDeletionACKProto`): stored or not. The answer is on storage, not on
/// execution: the block deleting service deletes later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeleteBlockTransactionResult {
    /// The transaction.
    pub tx_id: u64,
    /// Its container.
    pub container: ContainerId,
    /// Stored in the container's database.
    pub success: bool,
}

/// What a command asks the datanode to do.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CommandKind {
    /// Delete a container replica (`DeleteContainerCommand`); `force` skips the OPEN and
    /// non-empty checks.
    DeleteContainer {
        /// The container.
        container: ContainerId,
        /// Skip the safety checks.
        force: bool,
    },
    /// Close a container replica (`CloseContainerCommand`).
    CloseContainer {
        /// The container.
        container: ContainerId,
        /// The container's write pipeline: a datanode that is still a member closes the
        /// replica through it; one that is not quasi-closes it unless `force`.
        pipeline: PipelineId,
        /// Close without the pipeline, and close a QUASI_CLOSED replica (the command's
        /// `force` flag).
        force: bool,
    },
    /// Copy a closed replica from one of `sources` (`ReplicateContainerCommand`).
    ReplicateContainer {
        /// The container.
        container: ContainerId,
        /// Datanodes holding a replica.
        sources: Vec<DatanodeId>,
    },
    /// Reconcile a replica with its peers (`ReconcileContainerCommand`).
    ReconcileContainer {
        /// The container.
        container: ContainerId,
        /// The datanodes holding the other replicas.
        peers: Vec<DatanodeId>,
    },
    /// Store delete transactions for the block deleting service (`DeleteBlocksCommand`).
    DeleteBlocks {
        /// The transactions.
        transactions: Vec<DeletedBlocksTransaction>,
    },
    /// Register again (`ReregisterCommand`; handled by the heartbeat task, never queued).
    Reregister,
}

impl CommandKind {
    /// The command's kind, as its events name it: `DeleteContainer` for upstream's
    /// `deleteContainerCommand`.
    pub fn name(&self) -> &'static str {
        match self {
            CommandKind::DeleteContainer { .. } => "DeleteContainer",
            CommandKind::CloseContainer { .. } => "CloseContainer",
            CommandKind::ReplicateContainer { .. } => "ReplicateContainer",
            CommandKind::ReconcileContainer { .. } => "ReconcileContainer",
            CommandKind::DeleteBlocks { .. } => "DeleteBlocks",
            CommandKind::Reregister => "Reregister",
        }
    }

    /// The container the command acts on, if it acts on one.
    pub fn container(&self) -> Option<ContainerId> {
        match self {
            CommandKind::DeleteContainer { container, .. }
            | CommandKind::CloseContainer { container, .. }
            | CommandKind::ReplicateContainer { container, .. }
            | CommandKind::ReconcileContainer { container, .. } => Some(*container),
            CommandKind::DeleteBlocks { .. } | CommandKind::Reregister => None,
        }
    }

    /// Whether the command skips its safety checks (`force`), for a command that has the
    /// flag.
    pub fn force(&self) -> Option<bool> {
        match self {
            CommandKind::DeleteContainer { force, .. }
            | CommandKind::CloseContainer { force, .. } => Some(*force),
            _ => None,
        }
    }

    /// The number of the container the command acts on (an event's `container` field).
    pub fn container_number(&self) -> Option<u64> {
        self.container().map(|c| c.0)
    }
}

/// A command from an SCM (`SCMCommand`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScmCommand {
    /// Command id.
    pub id: CommandId,
    /// Term of the SCM leader that created the command.
    pub term: Term,
    /// Datanode deadline in ms since the epoch; 0 means none.
    pub deadline_ms: u64,
    /// What to do.
    pub kind: CommandKind,
}

impl ScmCommand {
    /// Feeds `state` what the command does: its kind, term and deadline. Its id only
    /// labels it (a status names it back), so two runs that created the same commands in
    /// another order hold the same commands.
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        (&self.kind, self.term, self.deadline_ms).hash(state);
    }

    /// A command without a deadline.
    pub fn new(id: CommandId, term: Term, kind: CommandKind) -> Self {
        Self {
            id,
            term,
            deadline_ms: 0,
            kind,
        }
    }

    /// The same command with a datanode deadline.
    pub fn with_deadline_ms(mut self, deadline_ms: u64) -> Self {
        self.deadline_ms = deadline_ms;
        self
    }

    /// `deadline > 0 && now > deadline` (strictly after the deadline).
    pub fn has_expired(&self, now_ms: u64) -> bool {
        self.deadline_ms > 0 && now_ms > self.deadline_ms
    }
}
