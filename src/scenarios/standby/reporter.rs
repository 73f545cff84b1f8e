//! A hand-driven datanode for the sequential schedules (HDFS-2742).
//!
//! **The race.** A standby may flag a replica corrupt on a report its datanode has since
//! superseded; only what the datanode actually sent, in order, tells a false flag from a
//! true one. **The fix** is the namesystem's; this reporter sends incremental reports
//! straight to one namesystem and records them, per (block, storage), as the invariants'
//! oracle of "healthy" (the latest report a datanode sent about a block).

use crate::namenode::namesystem::{HaState, NamenodeConfig, NamesystemApi, NamesystemFactory};
use crate::namenode::pending_messages::ReportedState;
use crate::namenode::{Block, DatanodeId, GenerationStamp, NameNodeId, ReplicaState};
use crate::sim::hdfs_datanode::{SentReports, storage_of};
use crate::sync::Arc;

/// A FINALIZED replica (an incremental RECEIVED report).
pub(super) const FINALIZED: ReportedState = ReportedState::Replica(ReplicaState::Finalized);

/// Records what hand-driven datanodes send, for the oracle.
#[derive(Debug, Default)]
pub(super) struct Reporter {
    pub(super) sent: SentReports,
}

impl Reporter {
    /// Datanode `dn` reports `block` in `state` to `ns`.
    pub(super) fn incremental(
        &mut self,
        ns: &dyn NamesystemApi,
        dn: u64,
        block: Block,
        state: ReportedState,
    ) {
        let storage = storage_of(DatanodeId(dn));
        self.sent
            .entry((block.id, storage))
            .or_default()
            .push((block, state));
        ns.incremental_report(storage, block, state);
    }
}

/// A standby namesystem built by `factory`, at generation stamp `gs`: `nn1`, the standby
/// of a pair, in its events.
pub(super) fn standby<F: NamesystemFactory>(
    factory: F,
    gs: GenerationStamp,
) -> Arc<dyn NamesystemApi> {
    let config = NamenodeConfig {
        namenode_id: Some(NameNodeId(1)),
        ..NamenodeConfig::default()
    };
    factory.create(HaState::Standby, config, gs)
}
