//! Scenarios and invariants of the HA standby's handling of datanode messages that
//! arrive before their edits (HDFS-2742), shared by the loom and shuttle tests, the soak
//! tool and the tests.
//!
//! **The race.** Datanodes report to both NameNodes at once; the standby learns block
//! state only when its tailer replays the edits, late. A report judged against a later
//! state marks a healthy replica corrupt, and the chain of spec 12.1 then loses every
//! replica; a report credited too early leaves safe-mode counts wrong (spec 12.2).
//!
//! **What is checked.** Real [`NameNode`]s (namesystem, tailer, shared [`SharedEditLog`],
//! HA transitions) and [`SimDataNode`] actors that write, finalize, report to both
//! NameNodes and delete late. The invariants are spec 13's: [`standby_is_passive`],
//! [`safe_mode_matches_recount`], [`queue_is_sound`] (with per-(block, datanode) FIFO),
//! [`no_false_corruption`], [`location_completeness`] and [`no_block_lost`].
//!
//! Modelling choices: a datanode sends each report to both NameNodes while holding its
//! own state, so every NameNode receives a datanode's reports in the order it produced
//! them and never a report older than the replica it describes (delays are the
//! standby's: its edits come late). The oracle of "healthy" is what the datanode last
//! sent about a block, as spec 13 defines it.

use std::collections::BTreeMap;

use super::rng::SeededRng;
use super::{Violation, join_all};
use crate::namenode::edit_log::{NameNodeId, SharedEditLog};
use crate::namenode::evaluation::{
    BlockUcState, RbwOnCompleteRule, ReplicaVerdict, StoredBlockView, check_replica_corrupt,
};
use crate::namenode::ha::{DatanodeProtocol, NameNode};
use crate::namenode::namesystem::{
    EditOp, FileId, HaState, NamenodeConfig, Namesystem, NamesystemBehavior, NamesystemView,
    ReplayError,
};
use crate::namenode::pending_messages::ReportedState;
use crate::namenode::{Block, BlockId, DatanodeId, GenerationStamp, ReplicaState, StorageId};
use crate::sync::{Arc, Mutex, thread};

/// The seed every violation of this module names.
pub const SEED_KEY: &str = "HDFS-2742";

/// Length of every finished block in the scenarios.
pub const BLOCK_LENGTH: u64 = 4096;

/// Bound of the shared edit log in the scenarios.
const LOG_CAPACITY: usize = 100_000;

fn violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: SEED_KEY,
        property,
        detail,
    }
}

fn storage_of(datanode: DatanodeId) -> StorageId {
    StorageId { datanode, index: 0 }
}

// ---------------------------------------------------------------------------------------
// Datanodes
// ---------------------------------------------------------------------------------------

/// Everything datanodes sent, per (block, storage), in send order: the oracle of spec 13
/// ("the latest report d sent about b").
pub type SentReports = BTreeMap<(BlockId, StorageId), Vec<(Block, ReportedState)>>;

/// The replicas datanodes hold, per (block, storage).
pub type Holdings = BTreeMap<(BlockId, StorageId), (Block, ReplicaState)>;

#[derive(Debug, Default)]
struct DataNodeState {
    replicas: BTreeMap<BlockId, (Block, ReplicaState)>,
    /// Deletion commands taken from the active, executed later (`FsDatasetAsyncDiskService`).
    pending_deletions: Vec<Block>,
    /// What it sent, per block, in order. Bounded by the scenario's length.
    sent: BTreeMap<BlockId, Vec<(Block, ReportedState)>>,
}

/// A datanode as the NameNodes see it: one storage, replicas written and finalized as a
/// client's pipeline drives them, every report sent to both NameNodes, deletion commands
/// obeyed only from the NameNode it believes active and executed late.
#[derive(Debug)]
pub struct SimDataNode {
    storage: StorageId,
    namenodes: Vec<Arc<NameNode>>,
    /// Whether a new replica is announced with an incremental RECEIVING report (HDFS
    /// does; the seed's 2012 schedule has only full reports while writing).
    announce_receiving: bool,
    state: Mutex<DataNodeState>,
}

impl SimDataNode {
    /// A datanode with no replicas, reporting to `namenodes`.
    pub fn new(id: DatanodeId, namenodes: Vec<Arc<NameNode>>, announce_receiving: bool) -> Self {
        Self {
            storage: storage_of(id),
            namenodes,
            announce_receiving,
            state: Mutex::new(DataNodeState::default()),
        }
    }

    /// Its storage.
    pub fn storage(&self) -> StorageId {
        self.storage
    }

    fn send(&self, state: &mut DataNodeState, block: Block, reported: ReportedState) {
        state
            .sent
            .entry(block.id)
            .or_default()
            .push((block, reported));
        for nn in &self.namenodes {
            nn.block_received_and_deleted(self.storage, block, reported);
        }
    }

    /// A pipeline reaches this datanode: a new RBW replica (length 0).
    pub fn receive_block(&self, block: Block) {
        let mut state = self.state.lock();
        self.write(&mut state, Block { length: 0, ..block });
    }

    /// Pipeline recovery or append: the replica moves to `block`'s generation stamp and is
    /// (again) being written.
    pub fn bump_generation_stamp(&self, block: Block) {
        let mut state = self.state.lock();
        if let Some((current, _)) = state.replicas.get(&block.id).copied() {
            self.write(
                &mut state,
                Block {
                    gs: block.gs,
                    ..current
                },
            );
        }
    }

    /// `replica` is being written (RBW), announced as RECEIVING if this datanode does.
    fn write(&self, state: &mut DataNodeState, replica: Block) {
        state
            .replicas
            .insert(replica.id, (replica, ReplicaState::Rbw));
        if self.announce_receiving {
            self.send(state, replica, ReportedState::Replica(ReplicaState::Rbw));
        }
    }

    /// The write finished: the replica is FINALIZED with `block`'s length, reported as
    /// RECEIVED.
    pub fn finalize(&self, block: Block) {
        let mut state = self.state.lock();
        if !state.replicas.contains_key(&block.id) {
            return;
        }
        state
            .replicas
            .insert(block.id, (block, ReplicaState::Finalized));
        self.send(
            &mut state,
            block,
            ReportedState::Replica(ReplicaState::Finalized),
        );
    }

    /// A full block report of its storage to both NameNodes.
    pub fn full_block_report(&self) {
        let mut state = self.state.lock();
        let entries: Vec<(Block, ReplicaState)> = state.replicas.values().copied().collect();
        for &(block, replica) in &entries {
            state
                .sent
                .entry(block.id)
                .or_default()
                .push((block, ReportedState::Replica(replica)));
        }
        for nn in &self.namenodes {
            nn.block_report(self.storage, &entries);
        }
    }

    /// Heartbeats both NameNodes; keeps the deletion commands of the one that says it is
    /// active (`BPOfferService.processCommandFromActor`). A command from a NameNode that
    /// is not active is a violation of [`standby_is_passive`].
    pub fn heartbeat(&self) -> Result<(), Violation> {
        let mut state = self.state.lock();
        for nn in &self.namenodes {
            let response = nn.heartbeat(self.storage.datanode);
            if response.ha_state != HaState::Active {
                if !response.deletions.is_empty() {
                    return Err(violation(
                        "standby is passive",
                        format!(
                            "{:?} in state {:?} sent {:?} deletion commands",
                            nn.id(),
                            response.ha_state,
                            response.deletions
                        ),
                    ));
                }
                continue;
            }
            state
                .pending_deletions
                .extend(response.deletions.into_iter().map(|(_, block)| block));
        }
        Ok(())
    }

    /// Executes the deletion commands taken so far: a replica goes only if its generation
    /// stamp is the command's (HDFS-3157); each deletion is reported as DELETED.
    pub fn execute_deletions(&self) {
        let mut state = self.state.lock();
        let commands = std::mem::take(&mut state.pending_deletions);
        for block in commands {
            let matches = state
                .replicas
                .get(&block.id)
                .is_some_and(|(replica, _)| replica.gs == block.gs);
            if matches {
                state.replicas.remove(&block.id);
                self.send(&mut state, block, ReportedState::Deleted);
            }
        }
    }

    /// Adds its reports to `sent` and its replicas to `held`.
    pub fn observe(&self, sent: &mut SentReports, held: &mut Holdings) {
        let state = self.state.lock();
        for (id, reports) in &state.sent {
            sent.insert((*id, self.storage), reports.clone());
        }
        for (id, replica) in &state.replicas {
            held.insert((*id, self.storage), *replica);
        }
    }
}

/// What all `datanodes` sent and hold.
pub fn observe_datanodes(datanodes: &[Arc<SimDataNode>]) -> (SentReports, Holdings) {
    let mut sent = SentReports::new();
    let mut held = Holdings::new();
    for dn in datanodes {
        dn.observe(&mut sent, &mut held);
    }
    (sent, held)
}

// ---------------------------------------------------------------------------------------
// Invariants (spec 13)
// ---------------------------------------------------------------------------------------

/// Invariant 3, **standby is passive** (and the half of invariant 1 that needs no
/// oracle): while `postpone` is on, nothing is ever marked corrupt.
pub fn standby_is_passive(nn: &str, view: &NamesystemView) -> Result<(), Violation> {
    if view.metrics.corrupt_marked_while_postponing > 0 {
        return Err(violation(
            "standby is passive",
            format!(
                "{nn} marked {} replica(s) corrupt while postponing; corrupt now {:?}",
                view.metrics.corrupt_marked_while_postponing, view.corrupt
            ),
        ));
    }
    Ok(())
}

/// Invariant 7, **safe-mode recount**: in safe mode the incremental counters equal a
/// recount over the namespace.
pub fn safe_mode_matches_recount(nn: &str, view: &NamesystemView) -> Result<(), Violation> {
    let counted = (view.safe_mode.block_total, view.safe_mode.block_safe);
    if view.safe_mode.on && counted != view.recount {
        return Err(violation(
            "safe-mode recount",
            format!(
                "{nn}: incremental (total, safe) = {counted:?}, recount = {:?}",
                view.recount
            ),
        ));
    }
    Ok(())
}

/// Invariants 4 and 5, **queue soundness** and **per-(block, datanode) FIFO**: once
/// postponing is off the queue is empty; every entry is a report some datanode sent,
/// with its own values (never the stored ones); the entries of one (block, datanode)
/// keep the datanode's send order. `sent` must be observed after `view`.
pub fn queue_is_sound(
    nn: &str,
    view: &NamesystemView,
    sent: &SentReports,
) -> Result<(), Violation> {
    if !view.postpone && !view.queued.is_empty() {
        return Err(violation(
            "queue soundness",
            format!(
                "{nn} is not postponing but holds {} queued report(s)",
                view.queued.len()
            ),
        ));
    }
    let mut per_pair: BTreeMap<(BlockId, StorageId), Vec<(Block, ReportedState)>> = BTreeMap::new();
    for entry in &view.queued {
        per_pair
            .entry((entry.block.id, entry.storage))
            .or_default()
            .push((entry.block, entry.state));
    }
    for (pair, queued) in per_pair {
        let history = sent.get(&pair).map_or(&[][..], Vec::as_slice);
        // Greedy subsequence match: each queued entry at or after the previous match.
        let mut rest = history.iter();
        for entry in &queued {
            if !rest.any(|sent| sent == entry) {
                return Err(violation(
                    "per-(block, datanode) FIFO",
                    format!(
                        "{nn}: queued {queued:?} for {pair:?} is not in the send order {history:?}"
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn latest_report(sent: &SentReports, pair: (BlockId, StorageId)) -> Option<(Block, ReportedState)> {
    sent.get(&pair).and_then(|reports| reports.last().copied())
}

/// Invariant 1, **no false corruption**: a replica is flagged corrupt only if the latest
/// report its datanode sent about the block is itself corrupt against the block's final
/// state. Check once no message is in flight.
pub fn no_false_corruption(
    nn: &str,
    view: &NamesystemView,
    sent: &SentReports,
) -> Result<(), Violation> {
    for (id, flagged) in &view.corrupt {
        let Some(stored) = view.blocks.get(id) else {
            continue;
        };
        let stored_view = StoredBlockView {
            gs: stored.block.gs,
            length: stored.block.length,
            state: stored.state,
        };
        for storage in flagged.keys() {
            let Some((reported, ReportedState::Replica(state))) =
                latest_report(sent, (*id, *storage))
            else {
                continue;
            };
            let verdict = check_replica_corrupt(&reported, state, &stored_view, view.rbw_rule);
            if !matches!(verdict, ReplicaVerdict::Corrupt(_)) {
                return Err(violation(
                    "no false corruption",
                    format!(
                        "{nn} flags {storage:?} corrupt for {id:?} ({:?} {:?}), but its latest \
                         report {reported:?} {state:?} is healthy",
                        stored.block, stored.state
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Invariant 2, **location completeness**: for every COMPLETE block, every datanode
/// holding a FINALIZED replica with the final GS and length, whose latest report says
/// so, is a stored location. Check on the active once no message or command is in
/// flight.
pub fn location_completeness(
    nn: &str,
    view: &NamesystemView,
    sent: &SentReports,
    held: &Holdings,
) -> Result<(), Violation> {
    for (&(id, storage), &(replica, state)) in held {
        let Some(stored) = view.blocks.get(&id) else {
            continue;
        };
        let healthy = state == ReplicaState::Finalized && replica == stored.block;
        let reported =
            latest_report(sent, (id, storage)) == Some((replica, ReportedState::Replica(state)));
        if stored.state == BlockUcState::Complete
            && healthy
            && reported
            && !stored.locations.contains(&storage)
        {
            return Err(violation(
                "location completeness",
                format!(
                    "{nn}: {storage:?} holds and reported {replica:?} FINALIZED, but is not a \
                     location of {id:?} (locations {:?})",
                    stored.locations
                ),
            ));
        }
    }
    Ok(())
}

/// Invariant 8, **no data-loss chain**: every COMPLETE block of the namespace keeps a
/// FINALIZED replica with its final GS and length on some datanode.
pub fn no_block_lost(nn: &str, view: &NamesystemView, held: &Holdings) -> Result<(), Violation> {
    for (id, stored) in &view.blocks {
        if stored.state != BlockUcState::Complete {
            continue;
        }
        let kept = held.iter().any(|(&(held_id, _), &(replica, state))| {
            held_id == *id && state == ReplicaState::Finalized && replica == stored.block
        });
        if !kept {
            return Err(violation(
                "no data-loss chain",
                format!(
                    "{nn}: no datanode holds a replica of COMPLETE {:?}; metrics {:?}",
                    stored.block, view.metrics
                ),
            ));
        }
    }
    Ok(())
}

/// The invariants a NameNode must satisfy at any moment its lock is free.
pub fn check_namenode(
    nn: &str,
    namesystem: &Namesystem,
    dns: &[Arc<SimDataNode>],
) -> Result<(), Violation> {
    let view = namesystem.view();
    let (sent, _) = observe_datanodes(dns);
    standby_is_passive(nn, &view)?;
    safe_mode_matches_recount(nn, &view)?;
    queue_is_sound(nn, &view, &sent)
}

/// The end-state invariants of the active once nothing is in flight, and of both
/// NameNodes at any time.
pub fn check_quiescent(
    active: &NameNode,
    standby: &NameNode,
    dns: &[Arc<SimDataNode>],
) -> Result<(), Violation> {
    let view = active.namesystem().view();
    let (sent, held) = observe_datanodes(dns);
    let name = format!("{:?} (active)", active.id());
    no_block_lost(&name, &view, &held)?;
    no_false_corruption(&name, &view, &sent)?;
    location_completeness(&name, &view, &sent, &held)?;
    check_namenode(&name, active.namesystem(), dns)?;
    check_namenode(
        &format!("{:?} (standby)", standby.id()),
        standby.namesystem(),
        dns,
    )
}

// ---------------------------------------------------------------------------------------
// The HA pair
// ---------------------------------------------------------------------------------------

/// How an [`HaPair`] is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairShape {
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
}

impl Default for PairShape {
    fn default() -> Self {
        Self {
            datanodes: 3,
            initial_gs: 0,
            max_txns_per_lock: usize::MAX,
            rbw_rule: RbwOnCompleteRule::IgnoreEqualGs,
            announce_receiving: true,
        }
    }
}

/// Two NameNodes over one shared edit log (NameNode 0 starts active, 1 standby in safe
/// mode), and the datanodes reporting to both.
#[derive(Debug)]
pub struct HaPair {
    namenodes: [Arc<NameNode>; 2],
    datanodes: Vec<Arc<SimDataNode>>,
    /// Index of the active NameNode. Client operations and failovers hold it, so they
    /// never interleave (the failover controller's fencing does that in HDFS).
    active: Mutex<usize>,
}

impl HaPair {
    /// A pair running `behavior` on both NameNodes.
    pub fn new(behavior: NamesystemBehavior, shape: PairShape) -> Self {
        let log = Arc::new(SharedEditLog::new(LOG_CAPACITY));
        let config = NamenodeConfig {
            behavior,
            rbw_rule: shape.rbw_rule,
            ..NamenodeConfig::default()
        };
        let namenodes = [
            Arc::new(NameNode::active(
                NameNodeId(0),
                config.clone(),
                shape.initial_gs,
                Arc::clone(&log),
                shape.max_txns_per_lock,
            )),
            Arc::new(NameNode::standby(
                NameNodeId(1),
                config,
                shape.initial_gs,
                log,
                shape.max_txns_per_lock,
            )),
        ];
        let datanodes = (1..=shape.datanodes)
            .map(|id| {
                Arc::new(SimDataNode::new(
                    DatanodeId(id),
                    namenodes.to_vec(),
                    shape.announce_receiving,
                ))
            })
            .collect();
        Self {
            namenodes,
            datanodes,
            active: Mutex::new(0),
        }
    }

    /// The datanodes.
    pub fn datanodes(&self) -> &[Arc<SimDataNode>] {
        &self.datanodes
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
    pub fn client(&self, ops: &[EditOp]) -> Result<(), Violation> {
        let active = self.active.lock();
        self.namenodes[*active]
            .log_edits(ops)
            .map(|_| ())
            .map_err(|error| violation("scenario setup", format!("client edits {ops:?}: {error}")))
    }

    /// The active's namesystem, viewed.
    fn active_view(&self) -> NamesystemView {
        let active = self.active.lock();
        self.namenodes[*active].namesystem().view()
    }

    /// Failover (spec 10): the standby becomes active (fencing the log, catching up,
    /// judging its queue), then the old active becomes standby; the new active leaves
    /// safe mode if its threshold is reached.
    pub fn failover(&self) -> Result<(), Violation> {
        let mut active = self.active.lock();
        let (old, new) = (*active, 1 - *active);
        let datanodes: Vec<DatanodeId> = self
            .datanodes
            .iter()
            .map(|d| d.storage().datanode)
            .collect();
        self.namenodes[new]
            .transition_to_active(&datanodes)
            .map_err(|error| violation("scenario setup", format!("failover: {error}")))?;
        self.namenodes[old].transition_to_standby();
        self.namenodes[new]
            .namesystem()
            .leave_safe_mode_if_threshold_reached();
        *active = new;
        Ok(())
    }

    /// One tailer batch on each NameNode that tails (the standby's tailer; the active's is
    /// stopped). Returns the edits applied.
    pub fn tail_once(&self) -> Result<usize, Violation> {
        let mut applied = 0;
        for nn in &self.namenodes {
            applied += nn
                .tailer()
                .tail_once()
                .map_err(|error| violation("scenario setup", format!("{:?}: {error}", nn.id())))?;
        }
        Ok(applied)
    }

    /// Tails until the standby has every edit (bounded by the log's size).
    pub fn catch_up(&self) -> Result<(), Violation> {
        for _ in 0..LOG_CAPACITY {
            if self.tail_once()? == 0 {
                return Ok(());
            }
        }
        Err(violation(
            "scenario setup",
            "the tailer never caught up".into(),
        ))
    }

    /// Lets everything in flight land: the standby catches up; every datanode sends a
    /// full report (clearing its stale flag on the active), then takes and executes its
    /// deletion commands, twice (a deletion can be scheduled by another datanode's
    /// report after this one's heartbeat).
    pub fn quiesce(&self) -> Result<(), Violation> {
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

    /// The invariants of [`check_namenode`] on both NameNodes.
    pub fn check_namenodes(&self) -> Result<(), Violation> {
        for nn in &self.namenodes {
            check_namenode(&format!("{:?}", nn.id()), nn.namesystem(), &self.datanodes)?;
        }
        Ok(())
    }

    /// [`check_quiescent`] on the current roles.
    pub fn check_quiescent(&self) -> Result<(), Violation> {
        let (active, standby) = self.roles();
        check_quiescent(&active, &standby, &self.datanodes)
    }
}

// ---------------------------------------------------------------------------------------
// The schedules of spec 12
// ---------------------------------------------------------------------------------------

const FILE: FileId = FileId(1);
const BLOCK: BlockId = BlockId(100);

fn block(id: BlockId, gs: GenerationStamp, length: u64) -> Block {
    Block { id, gs, length }
}

fn open_file(file: FileId, replication: usize, first: Block) -> Vec<EditOp> {
    vec![
        EditOp::SetGenstamp(first.gs),
        EditOp::AddFile { file, replication },
        EditOp::AddBlock {
            file,
            penultimate: None,
            last: first,
        },
    ]
}

/// Spec 12.1, the seed's schedule as written (pre-HDFS-2791 RBW rule, GS 5 throughout),
/// all ten steps: DN1's RBW report is judged after the close and flagged corrupt; after
/// failover the new active invalidates it, DN1's next full report resurrects it before
/// the deletion runs, lowering the replication deletes the two healthy replicas as
/// excess, and DN1 then executes its old deletion. [`no_block_lost`] catches the end.
pub fn schedule_12_1(behavior: NamesystemBehavior) -> Result<(), Violation> {
    let pair = HaPair::new(
        behavior,
        PairShape {
            initial_gs: 4,
            rbw_rule: RbwOnCompleteRule::AlwaysCorrupt,
            announce_receiving: false,
            ..PairShape::default()
        },
    );
    let dns = pair.datanodes();
    let written = block(BLOCK, 5, 0);
    let finished = block(BLOCK, 5, BLOCK_LENGTH);
    // 1. The active allocates B@5; the pipeline DN1-DN3 starts writing.
    pair.client(&open_file(FILE, 3, written))?;
    for dn in dns {
        dn.receive_block(written);
    }
    // 2. DN1's periodic full report lists B@5 RBW (future at the standby).
    dns[0].full_block_report();
    // 3. The DNs finalize; RECEIVED B@5 from each.
    for dn in dns {
        dn.finalize(finished);
    }
    // 4. The client completes the file.
    pair.client(&[EditOp::Close {
        file: FILE,
        blocks: vec![finished],
    }])?;
    // 5-6. The standby replays the segment, then judges what it postponed.
    pair.catch_up()?;
    // 7. Failover; the DNs report to the new active; replication 3 -> 2 lets it
    // invalidate a corrupt replica, and DN1 takes that command but runs it late.
    pair.failover()?;
    for dn in dns {
        dn.full_block_report();
    }
    pair.client(&[EditOp::SetReplication {
        file: FILE,
        replication: 2,
    }])?;
    dns[0].heartbeat()?;
    // 8. DN1 reports again before deleting: B@5 FINALIZED.
    dns[0].full_block_report();
    // 9. Replication 2 -> 1: excess replicas are chosen.
    pair.client(&[EditOp::SetReplication {
        file: FILE,
        replication: 1,
    }])?;
    // 10. Every datanode executes its deletions.
    for dn in dns {
        dn.heartbeat()?;
    }
    for dn in dns {
        dn.execute_deletions();
    }
    pair.check_quiescent()
}

/// Spec 12.3 (HDFS-3605): the standby replays only the creation and the first block;
/// the block is closed and appended to three times (GS 2..4) while DN1's reports of
/// every GS reach the standby; failover replays the rest in its catch-up. With the HA
/// state flipped before the catch-up, its drains judge those reports against
/// intermediate states.
pub fn schedule_12_3(behavior: NamesystemBehavior) -> Result<(), Violation> {
    let pair = HaPair::new(
        behavior,
        PairShape {
            datanodes: 1,
            max_txns_per_lock: 3,
            ..PairShape::default()
        },
    );
    let dn = &pair.datanodes()[0];
    pair.client(&open_file(FILE, 1, block(BLOCK, 1, 0)))?;
    if pair.tail_once()? != 3 {
        return Err(violation(
            "scenario setup",
            "the standby replays 3 edits".into(),
        ));
    }
    dn.receive_block(block(BLOCK, 1, 0));
    dn.finalize(block(BLOCK, 1, 10));
    pair.client(&[EditOp::Close {
        file: FILE,
        blocks: vec![block(BLOCK, 1, 10)],
    }])?;
    for gs in 2..=4_i64 {
        let length = 10 * gs as u64;
        pair.client(&[EditOp::Append { file: FILE }, EditOp::SetGenstamp(gs)])?;
        dn.bump_generation_stamp(block(BLOCK, gs, 0));
        pair.client(&[EditOp::UpdateBlocks {
            file: FILE,
            blocks: vec![block(BLOCK, gs, length - 10)],
        }])?;
        dn.finalize(block(BLOCK, gs, length));
        pair.client(&[EditOp::Close {
            file: FILE,
            blocks: vec![block(BLOCK, gs, length)],
        }])?;
    }
    pair.failover()?;
    pair.check_quiescent()
}

/// Records what a hand-driven datanode sends, for the oracle.
#[derive(Debug, Default)]
struct Reporter {
    sent: SentReports,
}

impl Reporter {
    fn incremental(&mut self, ns: &Namesystem, dn: u64, block: Block, state: ReportedState) {
        let storage = storage_of(DatanodeId(dn));
        self.sent
            .entry((block.id, storage))
            .or_default()
            .push((block, state));
        ns.incremental_report(storage, block, state);
    }
}

const FINALIZED: ReportedState = ReportedState::Replica(ReplicaState::Finalized);

/// Spec 12.5 (b) (HDFS-17477): the standby has replayed b@1 and b@2 (complete); DN1's
/// late report of b@1 is queued as inconsistent, then its report of b@2 is applied.
/// Without the purge the superseded entry lingers and the failover drain flags DN1's
/// current replica corrupt.
pub fn schedule_12_5(behavior: NamesystemBehavior) -> Result<(), Violation> {
    let ns = Namesystem::standby(
        NamenodeConfig {
            behavior,
            ..NamenodeConfig::default()
        },
        0,
    );
    let mut edits = open_file(FILE, 1, block(BLOCK, 1, 0));
    edits.extend([
        EditOp::SetGenstamp(2),
        EditOp::Close {
            file: FILE,
            blocks: vec![block(BLOCK, 2, BLOCK_LENGTH)],
        },
    ]);
    ns.apply_edits(&edits)
        .map_err(|(_, error)| violation("scenario setup", error.to_string()))?;
    let mut dn1 = Reporter::default();
    dn1.incremental(&ns, 1, block(BLOCK, 1, BLOCK_LENGTH), FINALIZED);
    dn1.incremental(&ns, 1, block(BLOCK, 2, BLOCK_LENGTH), FINALIZED);
    ns.transition_to_active(&[], &[DatanodeId(1)])
        .map_err(|error| violation("scenario setup", error.to_string()))?;
    let view = ns.view();
    queue_is_sound("standby", &view, &dn1.sent)?;
    no_false_corruption("new active", &view, &dn1.sent)
}

/// Spec 12.2: a restarted standby knows 10 complete blocks (all reported) and 5 blocks
/// of open files; their replicas are reported FINALIZED, then the 5 files close. The
/// counters must reach 15/15 and the standby leave safe mode; without the completion
/// credit they stay at 10/15.
pub fn schedule_12_2(behavior: NamesystemBehavior) -> Result<(), Violation> {
    let ns = Namesystem::standby(
        NamenodeConfig {
            behavior,
            ..NamenodeConfig::default()
        },
        0,
    );
    let setup = |error: ReplayError| violation("scenario setup", error.to_string());
    let mut edits = vec![EditOp::SetGenstamp(1)];
    for f in 0..15_u64 {
        edits.extend(
            open_file(FileId(f), 1, block(BlockId(f as i64), 1, 0))
                .into_iter()
                .skip(1),
        );
    }
    let close = |f: u64| EditOp::Close {
        file: FileId(f),
        blocks: vec![block(BlockId(f as i64), 1, BLOCK_LENGTH)],
    };
    edits.extend((0..10).map(close));
    ns.apply_edits(&edits).map_err(|(_, e)| setup(e))?;
    let mut dn1 = Reporter::default();
    for f in 0..15 {
        dn1.incremental(&ns, 1, block(BlockId(f), 1, BLOCK_LENGTH), FINALIZED);
    }
    safe_mode_matches_recount("standby", &ns.view())?;
    let closes: Vec<EditOp> = (10..15).map(close).collect();
    ns.apply_edits(&closes).map_err(|(_, e)| setup(e))?;
    safe_mode_matches_recount("standby", &ns.view())?;
    if !ns.leave_safe_mode_if_threshold_reached() {
        return Err(violation(
            "safe-mode recount",
            format!("the standby cannot leave safe mode: {:?}", ns.safe_mode()),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Concurrent scenarios
// ---------------------------------------------------------------------------------------

/// The loom race: DN1's full report listing B@5 RBW and its RECEIVED B@6, sent on the
/// datanode's thread, race the standby's tailer replaying the block's allocation, its
/// recovery to GS 6 and its close, two edits a batch (so a batch can end between the GS
/// edit and the block edit); then failover, still racing the tailer, catches up and judges what is queued. The active had every edit and both
/// reports in order before; only the standby's timing varies. Fixed: DN1 is never flagged
/// corrupt and is a location of B@6 on the new active. The datanode's messages all land
/// before the failover: a report still in flight at failover reaches the new active
/// unpostponed, a window HDFS shares and the seed does not cover.
pub fn rbw_report_races_completion(behavior: NamesystemBehavior) -> Result<(), Violation> {
    let pair = Arc::new(HaPair::new(
        behavior,
        PairShape {
            datanodes: 1,
            initial_gs: 4,
            max_txns_per_lock: 2,
            announce_receiving: false,
            ..PairShape::default()
        },
    ));
    let (active, standby) = pair.roles();
    let dn = Arc::new(SimDataNode::new(
        DatanodeId(1),
        vec![Arc::clone(&standby)],
        false,
    ));
    let recovered = block(BLOCK, 6, BLOCK_LENGTH);
    pair.client(&open_file(FILE, 1, block(BLOCK, 5, 0)))?;
    pair.client(&[
        EditOp::SetGenstamp(6),
        EditOp::UpdateBlocks {
            file: FILE,
            blocks: vec![block(BLOCK, 6, 0)],
        },
        EditOp::Close {
            file: FILE,
            blocks: vec![recovered],
        },
    ])?;
    dn.receive_block(block(BLOCK, 5, 0));
    let datanode = {
        let dn = Arc::clone(&dn);
        thread::spawn(move || {
            dn.full_block_report();
            dn.bump_generation_stamp(recovered);
            dn.finalize(recovered);
        })
    };
    let tailer = {
        let pair = Arc::clone(&pair);
        thread::spawn(move || -> Result<(), Violation> {
            for _ in 0..3 {
                pair.tail_once()?;
            }
            Ok(())
        })
    };
    let panicked = || violation("no thread panics", "a scenario thread panicked".into());
    datanode.join().map_err(|_| panicked())?;
    pair.failover()?;
    tailer.join().map_err(|_| panicked())??;
    let dns = [dn];
    let view = standby.namesystem().view();
    let (sent, held) = observe_datanodes(&dns);
    let name = "NameNodeId(1) (new active)";
    standby_is_passive(name, &view)?;
    queue_is_sound(name, &view, &sent)?;
    no_false_corruption(name, &view, &sent)?;
    location_completeness(name, &view, &sent, &held)?;
    drop(active);
    Ok(())
}

/// How big a [`standby_cluster`] run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterShape {
    /// Files the writer creates.
    pub files: u64,
    /// Replication toggles (1 ↔ 2).
    pub toggles: usize,
    /// Failovers.
    pub failovers: usize,
    /// Rounds of each datanode (late deletions, full report, heartbeat).
    pub datanode_rounds: usize,
    /// Tailer batches.
    pub tail_rounds: usize,
    /// Edits per tailer batch.
    pub max_txns_per_lock: usize,
}

impl Default for ClusterShape {
    fn default() -> Self {
        Self {
            files: 3,
            toggles: 3,
            failovers: 2,
            datanode_rounds: 3,
            tail_rounds: 6,
            max_txns_per_lock: usize::MAX,
        }
    }
}

/// The writer: creates `files` files of one or two blocks with replication 2, each block
/// written by a pipeline of two datanodes, sometimes recovered to a new GS before it is
/// finalized (`OP_SET_GENSTAMP`, datanodes bump, then the block-list update).
fn write_files(pair: &HaPair, rng: &mut SeededRng, files: u64) -> Result<(), Violation> {
    let dns = pair.datanodes();
    let mut gs: GenerationStamp = 0;
    let mut next_block = 0_i64;
    for f in 0..files {
        let file = FileId(f);
        pair.client(&[EditOp::AddFile {
            file,
            replication: 2,
        }])?;
        let blocks = 1 + rng.below(2);
        let mut done: Vec<Block> = Vec::new();
        for _ in 0..blocks {
            gs += 1;
            next_block += 1;
            let mut current = block(BlockId(next_block), gs, 0);
            pair.client(&[
                EditOp::SetGenstamp(gs),
                EditOp::AddBlock {
                    file,
                    penultimate: done.last().copied(),
                    last: current,
                },
            ])?;
            let skip = rng.below(dns.len() as u64) as usize;
            let pipeline: Vec<&Arc<SimDataNode>> = dns
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != skip)
                .map(|(_, d)| d)
                .collect();
            for dn in &pipeline {
                dn.receive_block(current);
            }
            if rng.below(2) == 0 {
                gs += 1;
                current.gs = gs;
                pair.client(&[EditOp::SetGenstamp(gs)])?;
                for dn in &pipeline {
                    dn.bump_generation_stamp(current);
                }
                let mut list = done.clone();
                list.push(current);
                pair.client(&[EditOp::UpdateBlocks { file, blocks: list }])?;
            }
            let finished = Block {
                length: BLOCK_LENGTH,
                ..current
            };
            for dn in &pipeline {
                dn.finalize(finished);
            }
            done.push(finished);
        }
        pair.client(&[EditOp::Close { file, blocks: done }])?;
        thread::yield_now();
    }
    Ok(())
}

/// The stress test of seed 004 (`TestDNFencingWithReplication`) in small: a writer, a
/// replication toggler (1 ↔ 2 on the files created so far), the standby's tailer, three
/// datanodes with periodic full reports, heartbeats and late deletions, and periodic
/// failover. The NameNodes' invariants are checked after every tailer batch and
/// failover, and every invariant of spec 13 once all is quiet.
pub fn standby_cluster(
    behavior: NamesystemBehavior,
    seed: u64,
    shape: ClusterShape,
) -> Result<(), Violation> {
    let pair = Arc::new(HaPair::new(
        behavior,
        PairShape {
            max_txns_per_lock: shape.max_txns_per_lock,
            ..PairShape::default()
        },
    ));
    let mut rng = SeededRng::new(seed);
    let mut handles = Vec::new();
    {
        let pair = Arc::clone(&pair);
        let mut rng = SeededRng::new(rng.next_u64());
        handles.push(thread::spawn(move || {
            write_files(&pair, &mut rng, shape.files).map(|()| Vec::new())
        }));
    }
    {
        let pair = Arc::clone(&pair);
        let mut rng = SeededRng::new(rng.next_u64());
        handles.push(thread::spawn(move || -> Result<Vec<()>, Violation> {
            for toggle in 0..shape.toggles {
                let created = pair.active_view().files.len() as u64;
                if created > 0 {
                    let file = FileId(rng.below(created));
                    let replication = 1 + toggle % 2;
                    pair.client(&[EditOp::SetReplication { file, replication }])?;
                }
                thread::yield_now();
            }
            Ok(Vec::new())
        }));
    }
    {
        let pair = Arc::clone(&pair);
        handles.push(thread::spawn(move || -> Result<Vec<()>, Violation> {
            for _ in 0..shape.tail_rounds {
                if pair.tail_once()? > 0 {
                    pair.check_namenodes()?;
                }
                thread::yield_now();
            }
            Ok(Vec::new())
        }));
    }
    {
        let pair = Arc::clone(&pair);
        handles.push(thread::spawn(move || -> Result<Vec<()>, Violation> {
            for _ in 0..shape.failovers {
                thread::yield_now();
                pair.failover()?;
                pair.check_namenodes()?;
            }
            Ok(Vec::new())
        }));
    }
    for dn in pair.datanodes() {
        let dn = Arc::clone(dn);
        handles.push(thread::spawn(move || -> Result<Vec<()>, Violation> {
            for _ in 0..shape.datanode_rounds {
                dn.execute_deletions();
                dn.full_block_report();
                dn.heartbeat()?;
                thread::yield_now();
            }
            Ok(Vec::new())
        }));
    }
    join_all(handles)?;
    pair.quiesce()?;
    pair.check_quiescent()
}
