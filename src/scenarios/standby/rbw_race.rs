//! The loom race of the seed (HDFS-2742): a datanode's RBW report and its RECEIVED report
//! of the recovered block race the standby's tailer replaying the block's allocation,
//! recovery and close, then failover. Small enough for loom to explore every interleaving.

use super::edits::{BLOCK, BLOCK_LENGTH, FILE, block, open_file};
use super::invariants::{
    location_completeness, no_false_corruption, queue_is_sound, standby_is_passive,
};
use super::violation::violation;
use crate::namenode::namesystem::{EditOp, NamesystemFactory};
use crate::namenode::pending_messages::ReportedState;
use crate::namenode::{DatanodeId, ReplicaState};
use crate::scenarios::Violation;
use crate::sim::ha_pair::{HaPair, HaPairShape};
use crate::sim::hdfs_datanode::{HdfsDataNode, observe_datanodes};
use crate::sync::{Arc, thread};

/// **No false corruption** and **location completeness** when a datanode's reports race
/// the block's completion on the standby. DN1's full report listing B@5 RBW and its
/// RECEIVED B@6, sent on the datanode's thread, race the standby's tailer replaying the
/// block's allocation, its recovery to GS 6 and its close, two edits a batch (so a batch
/// can end between the GS edit and the block edit); then failover, still racing the
/// tailer, catches up and judges what is queued. The active had every edit, and DN1's
/// RECEIVED B@6 before the close (its COMMITTED block completes at `minReplication`); only
/// the standby's timing varies. Trunk: DN1 is never flagged
/// corrupt and is a location of B@6 on the new active. The datanode's messages all land
/// before the failover: a report still in flight at failover reaches the new active
/// unpostponed, a window HDFS shares and the seed does not cover.
pub fn rbw_report_races_completion<F: NamesystemFactory>(factory: F) -> Result<(), Violation> {
    let pair = Arc::new(HaPair::new(
        factory,
        HaPairShape {
            datanodes: 1,
            initial_gs: 4,
            max_txns_per_lock: 2,
            announce_receiving: false,
            ..HaPairShape::default()
        },
    ));
    let (active, standby) = pair.roles();
    let dn = Arc::new(HdfsDataNode::new(
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
            pipeline: vec![dn.storage()],
        },
    ])?;
    let finalized = ReportedState::Replica(ReplicaState::Finalized);
    active
        .namesystem()
        .incremental_report(dn.storage(), recovered, finalized);
    pair.client(&[EditOp::Close {
        file: FILE,
        blocks: vec![recovered],
    }])?;
    dn.receive_block(block(BLOCK, 5, 0));
    let datanode = {
        let dn = Arc::clone(&dn);
        thread::spawn_named("datanode dn1", move || {
            dn.full_block_report();
            dn.bump_generation_stamp(recovered);
            dn.finalize(recovered);
        })
    };
    let tailer = {
        let pair = Arc::clone(&pair);
        thread::spawn_named("edit tailer", move || -> Result<(), Violation> {
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
