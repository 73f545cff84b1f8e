//! A simulated HDFS datanode as the two NameNodes of an HA pair see it (HDFS-2742): one
//! storage, replicas written and finalized as a client's pipeline drives them, every
//! report sent to both NameNodes, deletion commands obeyed only from the NameNode it
//! believes active and executed late.
//!
//! A datanode sends each report to both NameNodes while holding its own state, so every
//! NameNode receives its reports in the order it produced them and never a report older
//! than the replica it describes: the delays are the standby's, whose edits come late.
//! What it sent is kept, per block, as the oracle of "healthy": a replica is judged by
//! the latest report its datanode sent about the block.

use std::collections::BTreeMap;

use crate::namenode::edit_log::NameNodeId;
use crate::namenode::ha::{DatanodeProtocol, NameNode};
use crate::namenode::namesystem::HaState;
use crate::namenode::pending_messages::ReportedState;
use crate::namenode::{Block, BlockId, DatanodeId, ReplicaState, StorageId};
use crate::sync::{Arc, Mutex};

/// Everything datanodes sent, per (block, storage), in send order: the oracle of the
/// invariants ("the latest report a datanode sent about a block").
pub type SentReports = BTreeMap<(BlockId, StorageId), Vec<(Block, ReportedState)>>;

/// The replicas datanodes hold, per (block, storage).
pub type Holdings = BTreeMap<(BlockId, StorageId), (Block, ReplicaState)>;

/// The single storage of the simulated datanode `datanode`.
pub fn storage_of(datanode: DatanodeId) -> StorageId {
    StorageId { datanode, index: 0 }
}

/// A NameNode that is not active answered a heartbeat with deletion commands: a standby
/// must stay passive (`BPOfferService.processCommandFromActor` would drop them, but the
/// NameNode must not send them in the first place).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{namenode:?} in state {ha_state:?} sent {deletions:?} deletion commands")]
pub struct DeletionsFromNonActive {
    /// The NameNode that sent them.
    pub namenode: NameNodeId,
    /// The HA state it answered with.
    pub ha_state: HaState,
    /// The deletion commands it sent.
    pub deletions: Vec<(StorageId, Block)>,
}

#[derive(Debug, Default)]
struct DataNodeState {
    replicas: BTreeMap<BlockId, (Block, ReplicaState)>,
    /// Deletion commands taken from the active, executed later (`FsDatasetAsyncDiskService`).
    pending_deletions: Vec<Block>,
    /// What it sent, per block, in order. Bounded by the scenario's length.
    sent: BTreeMap<BlockId, Vec<(Block, ReportedState)>>,
}

/// A datanode as the NameNodes of an HA pair see it: one storage, replicas written and
/// finalized as a client's pipeline drives them, every report sent to both NameNodes,
/// deletion commands obeyed only from the NameNode it believes active and executed late.
#[derive(Debug)]
pub struct HdfsDataNode {
    storage: StorageId,
    namenodes: Vec<Arc<NameNode>>,
    /// Whether a new replica is announced with an incremental RECEIVING report (HDFS
    /// does; the seed's 2012 schedule has only full reports while writing).
    announce_receiving: bool,
    state: Mutex<DataNodeState>,
}

impl HdfsDataNode {
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

    /// [`Self::bump_generation_stamp`] for an append that is not flushed before the close:
    /// the RECEIVING report waits in the incremental report manager and the RECEIVED one
    /// replaces it before it is sent (HDFS-7217, `TestDNFencing.testQueueingWithAppend`
    /// case 3), so no RBW report leaves.
    pub fn bump_generation_stamp_unannounced(&self, block: Block) {
        let mut state = self.state.lock();
        if let Some((current, _)) = state.replicas.get(&block.id).copied() {
            let replica = Block {
                gs: block.gs,
                ..current
            };
            state
                .replicas
                .insert(replica.id, (replica, ReplicaState::Rbw));
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
    /// active (`BPOfferService.processCommandFromActor`). A NameNode that is not active
    /// and sends deletion commands anyway is an error: the standby must stay passive.
    pub fn heartbeat(&self) -> Result<(), DeletionsFromNonActive> {
        let mut state = self.state.lock();
        for nn in &self.namenodes {
            let response = nn.heartbeat(self.storage.datanode);
            if response.ha_state != HaState::Active {
                if !response.deletions.is_empty() {
                    return Err(DeletionsFromNonActive {
                        namenode: nn.id(),
                        ha_state: response.ha_state,
                        deletions: response.deletions,
                    });
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
                crate::events::debug!(
                    node = %self.storage.datanode,
                    block = block.id.0,
                    gs = block.gs,
                    "replica deleted"
                );
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
pub fn observe_datanodes(datanodes: &[Arc<HdfsDataNode>]) -> (SentReports, Holdings) {
    let mut sent = SentReports::new();
    let mut held = Holdings::new();
    for dn in datanodes {
        dn.observe(&mut sent, &mut held);
    }
    (sent, held)
}
