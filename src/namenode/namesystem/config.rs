//! Which standby logic a namesystem runs, and its settings.
//!
//! **The race (HDFS-2742).** Each unpatched behaviour lets the standby judge a datanode's
//! report against a block state it was not produced under, or credit safe mode wrongly.
//! **The fix** is a set of upstream patches; [`NamesystemBehavior::Fixed`] runs them all,
//! and each legacy value takes exactly one away, so a checker can prove what each one buys.

use crate::namenode::evaluation::RbwOnCompleteRule;

/// Which standby logic runs: the shipped one, or one unpatched behaviour restored per
/// legacy value (the checkers must catch each of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NamesystemBehavior {
    /// The shipped logic with the later fixes (HDFS-3605, HDFS-15422, HDFS-17477, HDFS-6289,
    /// HDFS-17905).
    Fixed,
    /// The queue before the HDFS-2742 fix: whole messages are postponed when their highest
    /// GS is in the future and processed, whole and through the active's code, after each
    /// batch of edits; anything else is processed at once and can mark a replica corrupt
    /// on the standby. Safe-mode totals are recounted after each batch instead of being
    /// adjusted by completion, reopen and delete.
    LegacyWholeMessageQueue,
    /// Queued reports are drained only when replay first adds their block
    /// (`FSEditLogLoader.addNewBlock`), and completion (`forceCompleteBlock`) does not
    /// credit the replicas already present to safe mode: a restarted standby never reaches
    /// its safe-mode threshold.
    LegacyEarlyDrain,
    /// HDFS-3605: "postpone" is "the HA state is standby", and failover switches the HA
    /// state before the catch-up, so the catch-up's drains mark replicas corrupt against
    /// intermediate states.
    LegacyHaStateCheck,
    /// Before HDFS-17453/17477: a queued entry superseded by a newer report of the same
    /// (block, storage) lingers until failover judges it against the completed block and
    /// flags the datanode's current replica corrupt.
    LegacyNoStaleEntryPurge,
}

impl NamesystemBehavior {
    /// Every behavior, the fixed one first.
    pub const ALL: [NamesystemBehavior; 5] = [
        NamesystemBehavior::Fixed,
        NamesystemBehavior::LegacyWholeMessageQueue,
        NamesystemBehavior::LegacyEarlyDrain,
        NamesystemBehavior::LegacyHaStateCheck,
        NamesystemBehavior::LegacyNoStaleEntryPurge,
    ];

    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            NamesystemBehavior::Fixed => "Fixed",
            NamesystemBehavior::LegacyWholeMessageQueue => "LegacyWholeMessageQueue",
            NamesystemBehavior::LegacyEarlyDrain => "LegacyEarlyDrain",
            NamesystemBehavior::LegacyHaStateCheck => "LegacyHaStateCheck",
            NamesystemBehavior::LegacyNoStaleEntryPurge => "LegacyNoStaleEntryPurge",
        }
    }
}

/// Settings of a [`Namesystem`](super::Namesystem).
#[derive(Debug, Clone, PartialEq)]
pub struct NamenodeConfig {
    /// The logic.
    pub behavior: NamesystemBehavior,
    /// `dfs.namenode.replication.min` (1).
    pub min_replication: usize,
    /// Safe replication (defaults to the minimum replication).
    pub safe_replication: usize,
    /// `dfs.namenode.safemode.threshold-pct` (0.999), in thousandths.
    pub safemode_threshold_per_mille: u64,
    /// Bound of the pending queue.
    pub pending_queue_limit: usize,
    /// How an equal-GS RBW of a COMPLETE block is judged.
    pub rbw_rule: RbwOnCompleteRule,
}

impl Default for NamenodeConfig {
    fn default() -> Self {
        Self {
            behavior: NamesystemBehavior::Fixed,
            min_replication: 1,
            safe_replication: 1,
            safemode_threshold_per_mille: 999,
            pending_queue_limit: 1_000_000,
            rbw_rule: RbwOnCompleteRule::IgnoreEqualGs,
        }
    }
}
