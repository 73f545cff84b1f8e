//! An HDFS HA pair for the standby scenarios (HDFS-2742): two real [`NameNode`]s over one
//! [`SharedEditLog`], the [`HdfsDataNode`]s reporting to both, a client logging through
//! whichever is active, the standby's tailer driven one batch at a time, and failover.
//!
//! Client operations and failovers hold the index of the active NameNode, so they never
//! interleave: in HDFS the failover controller's fencing does that. Everything else (the
//! tailer, the datanodes' reports and heartbeats) races them freely.

use super::hdfs_datanode::{DeletionsFromNonActive, HdfsDataNode};
use crate::namenode::DatanodeId;
use crate::namenode::GenerationStamp;
use crate::namenode::edit_log::{EditLogError, NameNodeId, SharedEditLog};
use crate::namenode::edit_tailer::TailError;
use crate::namenode::evaluation::RbwOnCompleteRule;
use crate::namenode::ha::NameNode;
use crate::namenode::namesystem::{
    EditOp, HaState, NamenodeConfig, NamesystemFactory, NamesystemView,
};
use crate::sync::{Arc, Mutex};

/// Bound of the shared edit log, and of the tailer batches a catch-up may take.
pub const LOG_CAPACITY: usize = 100_000;

/// What went wrong driving an [`HaPair`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairError {
    /// The active refused a client's edits.
    #[error("client edits {ops:?}: {error}")]
    ClientEdits {
        /// The edits the client asked for.
        ops: Vec<EditOp>,
        /// Why the active refused them.
        error: EditLogError,
    },
    /// The standby could not become active: an edit of its catch-up did not fit.
    #[error("failover: {0}")]
    Failover(TailError),
    /// A tailer batch stopped at an edit that does not fit the NameNode's namespace.
    #[error("{namenode:?}: {error}")]
    Tail {
        /// The tailing NameNode.
        namenode: NameNodeId,
        /// Where and why its batch stopped.
        error: TailError,
    },
    /// The standby's tailer still found edits after [`LOG_CAPACITY`] batches.
    #[error("the tailer never caught up")]
    NeverCaughtUp,
    /// A NameNode that is not active sent a datanode deletion commands.
    #[error(transparent)]
    DeletionsFromNonActive(#[from] DeletionsFromNonActive),
}

/// How an [`HaPair`] is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HaPairShape {
    /// Datanodes, `DatanodeId(1)` on.
    pub datanodes: u64,
    /// Both NameNodes' GS counter at the start.
    pub initial_gs: GenerationStamp,
    /// Edits per tailer batch.
    pub max_txns_per_lock: usize,
    /// How an equal-GS RBW of a COMPLETE block is judged.
    pub rbw_rule: RbwOnCompleteRule,
    /// Whether datanodes announce new replicas with RECEIVING reports.
    pub announce_receiving: bool,
    /// Seed of the excess-replica choice of both NameNodes (see
    /// [`NamenodeConfig::excess_choice_seed`]). One seed for both: a simulated datanode
    /// keeps a replica it was told to delete in its reports until the deletion runs, so a
    /// new active choosing another excess replica than the old one would delete both. HDFS
    /// closes that window in the datanode (`FsDatasetImpl.invalidate` drops the replica
    /// from its reports at once), which `TestDNFencing`'s `RandomDeleterPolicy` exercises;
    /// the simulation keeps the window, because the seed's data-loss chain needs it.
    pub excess_choice_seed: u64,
}

impl Default for HaPairShape {
    fn default() -> Self {
        Self {
            datanodes: 3,
            initial_gs: 0,
            max_txns_per_lock: usize::MAX,
            rbw_rule: RbwOnCompleteRule::IgnoreEqualGs,
            announce_receiving: true,
            excess_choice_seed: 0,
        }
    }
}

/// Two NameNodes over one shared edit log (NameNode 0 starts active, 1 standby in safe
/// mode), and the datanodes reporting to both.
#[derive(Debug)]
pub struct HaPair {
    log: Arc<SharedEditLog>,
    namenodes: [Arc<NameNode>; 2],
    datanodes: Vec<Arc<HdfsDataNode>>,
    /// Index of the active NameNode. Client operations and failovers hold it, so they
    /// never interleave (the failover controller's fencing does that in HDFS).
    active: Mutex<usize>,
}

impl HaPair {
    /// A pair whose namesystems `factory` builds: a `NamesystemBehavior` runs that
    /// behavior on both NameNodes; a conformance suite builds NameNode 1, the standby that
    /// fails over, from another implementation.
    pub fn new(factory: impl NamesystemFactory, shape: HaPairShape) -> Self {
        let log = Arc::new(SharedEditLog::new(LOG_CAPACITY));
        let config = NamenodeConfig {
            rbw_rule: shape.rbw_rule,
            excess_choice_seed: shape.excess_choice_seed,
            ..NamenodeConfig::default()
        };
        let start = |id, ha| {
            let log = Arc::clone(&log);
            let (config, gs, batch) = (config.clone(), shape.initial_gs, shape.max_txns_per_lock);
            Arc::new(NameNode::start(id, ha, factory, config, gs, log, batch))
        };
        let namenodes = [
            start(NameNodeId(0), HaState::Active),
            start(NameNodeId(1), HaState::Standby),
        ];
        let datanodes = (1..=shape.datanodes)
            .map(|id| {
                Arc::new(HdfsDataNode::new(
                    DatanodeId(id),
                    namenodes.to_vec(),
                    shape.announce_receiving,
                ))
            })
            .collect();
        Self {
            log,
            namenodes,
            datanodes,
            active: Mutex::new(0),
        }
    }

    /// The highest generation stamp an active logged (`OP_SET_GENSTAMP`): no NameNode may
    /// hand it out again once active.
    pub fn highest_logged_genstamp(&self) -> GenerationStamp {
        self.log
            .read_from(0, usize::MAX)
            .iter()
            .filter_map(|op| match op {
                EditOp::SetGenstamp(gs) => Some(*gs),
                _ => None,
            })
            .max()
            .unwrap_or(GenerationStamp::MIN)
    }

    /// The datanodes.
    pub fn datanodes(&self) -> &[Arc<HdfsDataNode>] {
        &self.datanodes
    }

    /// Both NameNodes, whatever their roles (read without taking the active's index).
    pub fn namenodes(&self) -> &[Arc<NameNode>; 2] {
        &self.namenodes
    }

    /// The NameNode that is active now, and the other.
    pub fn roles(&self) -> (Arc<NameNode>, Arc<NameNode>) {
        let active = *self.active.lock();
        (
            Arc::clone(&self.namenodes[active]),
            Arc::clone(&self.namenodes[1 - active]),
        )
    }

    /// A client operation: `ops` applied and logged by the active.
    pub fn client(&self, ops: &[EditOp]) -> Result<(), PairError> {
        let active = self.active.lock();
        self.namenodes[*active]
            .log_edits(ops)
            .map(|_| ())
            .map_err(|error| PairError::ClientEdits {
                ops: ops.to_vec(),
                error,
            })
    }

    /// The active's namesystem, viewed.
    pub fn active_view(&self) -> NamesystemView {
        let active = self.active.lock();
        self.namenodes[*active].namesystem().view()
    }

    /// Failover (`FSNamesystem.startActiveServices`): the standby becomes active (fencing
    /// the log, catching up, judging its queue), then the old active becomes standby; the
    /// new active leaves safe mode if its threshold is reached.
    pub fn failover(&self) -> Result<(), PairError> {
        let mut active = self.active.lock();
        let (old, new) = (*active, 1 - *active);
        let datanodes: Vec<DatanodeId> = self
            .datanodes
            .iter()
            .map(|d| d.storage().datanode)
            .collect();
        self.namenodes[new]
            .transition_to_active(&datanodes)
            .map_err(PairError::Failover)?;
        self.namenodes[old].transition_to_standby();
        self.namenodes[new]
            .namesystem()
            .leave_safe_mode_if_threshold_reached();
        *active = new;
        Ok(())
    }

    /// One tailer batch (`EditLogTailer.doTailEdits`) on each NameNode that tails (the
    /// standby's tailer; the active's is stopped). Returns the edits applied.
    pub fn tail_once(&self) -> Result<usize, PairError> {
        let mut applied = 0;
        for nn in &self.namenodes {
            applied += nn.tailer().tail_once().map_err(|error| PairError::Tail {
                namenode: nn.id(),
                error,
            })?;
        }
        Ok(applied)
    }

    /// Tails until the standby has every edit (bounded by the log's size).
    pub fn catch_up(&self) -> Result<(), PairError> {
        for _ in 0..LOG_CAPACITY {
            if self.tail_once()? == 0 {
                return Ok(());
            }
        }
        Err(PairError::NeverCaughtUp)
    }

    /// Lets everything in flight land: the standby catches up; every datanode sends a
    /// full report (clearing its stale flag on the active), then takes and executes its
    /// deletion commands, twice (a deletion can be scheduled by another datanode's
    /// report after this one's heartbeat).
    pub fn quiesce(&self) -> Result<(), PairError> {
        self.catch_up()?;
        for dn in &self.datanodes {
            dn.full_block_report();
        }
        for _ in 0..2 {
            for dn in &self.datanodes {
                dn.heartbeat()?;
                dn.execute_deletions();
            }
        }
        Ok(())
    }
}
