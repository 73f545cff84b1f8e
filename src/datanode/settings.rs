//! A datanode's settings and the command processor's record of what it ran, shared by
//! the datanode ([`Datanode`](super::daemon::Datanode)) and its threads
//! ([`services`](super::services)).

use std::collections::VecDeque;

use super::container::config::ContainerConfig;
use super::dispatcher::{CommandOutcome, CommandReport};
use super::state_context::{StateContextBehavior, StateContextConfig};
use crate::sync::RwCell;
use crate::sync::atomic::{AtomicU64, Ordering};

/// Settings of a [`Datanode`](super::daemon::Datanode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatanodeConfig {
    /// Term-fencing logic.
    pub behavior: StateContextBehavior,
    /// Queue limit and await bound.
    pub context: StateContextConfig,
    /// The replicas' code and the switches beyond the seeds.
    pub container: ContainerConfig,
    /// Heartbeat period once registered (`hdds.heartbeat.interval`, 30 s).
    pub heartbeat_interval_ms: u64,
    /// Period before registration completes (`hdds.heartbeat.initial-interval`, 2 s).
    pub initial_heartbeat_interval_ms: u64,
    /// Period of the block deleting service
    /// (`ozone.block.deleting.service.interval`, 60 s).
    pub block_deleting_interval_ms: u64,
}

impl Default for DatanodeConfig {
    fn default() -> Self {
        Self {
            behavior: StateContextBehavior::SeedPatch,
            context: StateContextConfig::default(),
            container: ContainerConfig::default(),
            heartbeat_interval_ms: 30_000,
            initial_heartbeat_interval_ms: 2_000,
            block_deleting_interval_ms: 60_000,
        }
    }
}

/// Commands a datanode's [`ProcessorStats::history`] keeps: the oldest go first.
pub const COMMAND_HISTORY_LIMIT: usize = 1024;

/// What the command processor did since the datanode was created (restarts included).
#[derive(Debug, Default)]
pub struct ProcessorStats {
    executed: AtomicU64,
    skipped_expired: AtomicU64,
    skipped_stale_term: AtomicU64,
    failed: AtomicU64,
    history: RwCell<VecDeque<CommandReport>>,
    history_dropped: AtomicU64,
}

impl ProcessorStats {
    /// Commands run.
    pub fn executed(&self) -> u64 {
        self.executed.load(Ordering::Relaxed)
    }
    /// Commands skipped for an expired deadline.
    pub fn skipped_expired(&self) -> u64 {
        self.skipped_expired.load(Ordering::Relaxed)
    }
    /// Commands skipped by the execution-time term fence.
    pub fn skipped_stale_term(&self) -> u64 {
        self.skipped_stale_term.load(Ordering::Relaxed)
    }
    /// Commands a handler refused.
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    /// Every command the processor took, oldest first, with what the state context knew
    /// when it handed it out (its term at dispatch, the highest heartbeat term heard) and
    /// how it ended: the last [`COMMAND_HISTORY_LIMIT`] of them.
    pub fn history(&self) -> Vec<CommandReport> {
        self.history
            .read(|history| history.iter().cloned().collect())
    }

    /// Commands dropped from the front of a full [`history`](Self::history).
    pub fn history_dropped(&self) -> u64 {
        self.history_dropped.load(Ordering::Relaxed)
    }

    pub(super) fn record(&self, report: &CommandReport) {
        let full = self.history.write(|history| {
            let full = history.len() >= COMMAND_HISTORY_LIMIT;
            if full {
                history.pop_front();
            }
            history.push_back(report.clone());
            full
        });
        if full {
            self.history_dropped.fetch_add(1, Ordering::Relaxed);
        }
        let counter = match &report.outcome {
            CommandOutcome::Executed => &self.executed,
            CommandOutcome::SkippedExpired { .. } => &self.skipped_expired,
            CommandOutcome::SkippedStaleTerm { .. } => &self.skipped_stale_term,
            CommandOutcome::Failed(_) => &self.failed,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}
