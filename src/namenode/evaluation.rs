//! The decision tables a NameNode applies to one reported replica
//! (`BlockManager.checkReplicaCorrupt`, `isBlockUnderConstruction`): is it corrupt against
//! the stored block, and is it accepted as a replica of a block under construction.
//!
//! **The race (HDFS-2742).** The same report is judged differently depending on the stored
//! block's state: an RBW replica is healthy against a block under construction and corrupt
//! against a later GS of the completed block. A standby that judges it after replaying the
//! completion marks a healthy replica corrupt.
//!
//! **The fix** is in when the standby judges (the queue and its drains); these tables are
//! the judgement itself ([`ReplicaRules`]): trunk's, with HDFS-2791 (an equal-GS RBW on a
//! COMPLETE block is ignored) and the older-GS rows of a block not yet complete (HDFS-5723
//! for FINALIZED, trunk's rule for RBW/RWR), or the 2012 HA branch's, without the older-GS
//! rows. The pre-HDFS-2791 rule stays selectable ([`RbwOnCompleteRule`]), because the
//! seed's ten-step data-loss chain was written against it.

use std::fmt;

use super::{Block, GenerationStamp, ReplicaState};

/// Under-construction states of a stored block (`HdfsServerConstants.BlockUCState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockUcState {
    /// Being written; length and GS provisional.
    UnderConstruction,
    /// Lease or block recovery started (the active only).
    UnderRecovery,
    /// The client supplied the final GS and length; not enough replicas yet.
    Committed,
    /// Final; counted by safe mode.
    Complete,
}

impl fmt::Display for BlockUcState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BlockUcState::UnderConstruction => "UNDER_CONSTRUCTION",
            BlockUcState::UnderRecovery => "UNDER_RECOVERY",
            BlockUcState::Committed => "COMMITTED",
            BlockUcState::Complete => "COMPLETE",
        })
    }
}

/// The NameNode's stored view of a block, as far as the tables need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StoredBlockView {
    /// The NameNode's current generation stamp of the block.
    pub gs: GenerationStamp,
    /// The NameNode's current length.
    pub length: u64,
    /// Its state.
    pub state: BlockUcState,
}

/// How an RBW replica with the block's own GS is judged against a COMPLETE block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RbwOnCompleteRule {
    /// HDFS-2791 (shipped): ignored, not corrupt, no location recorded: a full report
    /// built while the pipeline was open can reach the NameNode after `complete()`.
    IgnoreEqualGs,
    /// Before HDFS-2791: any RBW or RWR replica of a COMPLETE block is corrupt.
    AlwaysCorrupt,
}

/// Which version of the tables a NameNode applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReplicaRules {
    /// How an RBW replica with the block's own GS is judged against a COMPLETE block.
    pub rbw_on_complete: RbwOnCompleteRule,
    /// A replica whose GS is older than the stored one is corrupt although the block is
    /// not complete: FINALIZED against UNDER_CONSTRUCTION (HDFS-5723), RBW/RWR against any
    /// state but COMPLETE (trunk `checkReplicaCorrupt`). The 2012 HA branch accepted both.
    pub older_gs_on_incomplete: bool,
}

impl ReplicaRules {
    /// Trunk's `BlockManager.checkReplicaCorrupt` (with HDFS-2791 and HDFS-5723).
    pub const TRUNK: ReplicaRules = ReplicaRules {
        rbw_on_complete: RbwOnCompleteRule::IgnoreEqualGs,
        older_gs_on_incomplete: true,
    };

    /// `BlockManager.isReplicaCorrupt` of the 2012 HA branch (HDFS-2742's parent, which
    /// already had HDFS-2791).
    pub const HDFS_2012: ReplicaRules = ReplicaRules {
        rbw_on_complete: RbwOnCompleteRule::IgnoreEqualGs,
        older_gs_on_incomplete: false,
    };

    /// These rules with `rbw_on_complete` instead.
    pub fn with_rbw_rule(self, rbw_on_complete: RbwOnCompleteRule) -> ReplicaRules {
        ReplicaRules {
            rbw_on_complete,
            ..self
        }
    }
}

/// Why a replica is corrupt (`CorruptReplicasMap.Reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CorruptReason {
    /// The replica's GS differs from the stored one.
    GenstampMismatch,
    /// Same GS, different length, for a finalized replica.
    SizeMismatch,
    /// A state that cannot be right for the stored block.
    InvalidState,
}

impl fmt::Display for CorruptReason {
    /// The reason in words (`genstamp mismatch`), for a failure's story.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CorruptReason::GenstampMismatch => "genstamp mismatch",
            CorruptReason::SizeMismatch => "size mismatch",
            CorruptReason::InvalidState => "invalid state",
        })
    }
}

/// The verdict of [`check_replica_corrupt`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplicaVerdict {
    /// Consistent with the stored block.
    Ok,
    /// Neither corrupt nor a location: an equal-GS RBW of a COMPLETE block (HDFS-2791).
    Ignored,
    /// Corrupt, with the reason.
    Corrupt(CorruptReason),
}

/// `BlockManager.checkReplicaCorrupt` under `rules`.
pub fn check_replica_corrupt(
    reported: &Block,
    state: ReplicaState,
    stored: &StoredBlockView,
    rules: ReplicaRules,
) -> ReplicaVerdict {
    use BlockUcState::{Committed, Complete, UnderConstruction};
    use ReplicaVerdict::{Corrupt, Ignored, Ok};
    let older = rules.older_gs_on_incomplete && reported.gs < stored.gs;
    match state {
        ReplicaState::Finalized => match stored.state {
            Complete | Committed if reported.gs != stored.gs => {
                Corrupt(CorruptReason::GenstampMismatch)
            }
            Complete | Committed if reported.length != stored.length => {
                Corrupt(CorruptReason::SizeMismatch)
            }
            // HDFS-5723: an older FINALIZED replica of a block being written.
            UnderConstruction if older => Corrupt(CorruptReason::GenstampMismatch),
            _ => Ok,
        },
        ReplicaState::Rbw | ReplicaState::Rwr => match stored.state {
            Complete if rules.rbw_on_complete == RbwOnCompleteRule::AlwaysCorrupt => {
                Corrupt(CorruptReason::InvalidState)
            }
            Complete if reported.gs != stored.gs => Corrupt(CorruptReason::GenstampMismatch),
            Complete if state == ReplicaState::Rbw => Ignored,
            Complete => Corrupt(CorruptReason::InvalidState),
            _ if older => Corrupt(CorruptReason::GenstampMismatch),
            _ => Ok,
        },
        ReplicaState::Rur | ReplicaState::Temporary => Corrupt(CorruptReason::InvalidState),
    }
}

/// `BlockManager.isBlockUnderConstruction`: whether the replica is taken as one of the
/// block's expected replicas while it is written.
pub fn is_block_under_construction(stored: BlockUcState, state: ReplicaState) -> bool {
    match state {
        ReplicaState::Finalized => matches!(
            stored,
            BlockUcState::UnderConstruction | BlockUcState::UnderRecovery
        ),
        ReplicaState::Rbw | ReplicaState::Rwr => stored != BlockUcState::Complete,
        ReplicaState::Rur | ReplicaState::Temporary => false,
    }
}
