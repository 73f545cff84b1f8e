//! HDFS-14941 on the standby: a datanode's report of a new block that arrives after the
//! standby replayed the block's `OP_SET_GENSTAMP` but before the edit that adds the block
//! (the two in different tailer batches).
//!
//! **The race.** Without the fix the GS edit moves the counter of the future test, so the
//! report is not future, its block is unknown, and it is dropped: the standby misses the
//! replica until the datanode's next full report, and a failover meanwhile starts without
//! that location. **The fix** (`BlockIdManager.setImpendingGenerationStamp`): the GS edit
//! only records an impending stamp, the report is queued as future and drained when the
//! block edit attaches the block; at failover the impending stamp is applied after the
//! queue's drain (`FSNamesystem.startActiveServices`).

use super::edits::{BLOCK, BLOCK_LENGTH, FILE, block, open_file};
use super::invariants::{
    generation_stamp_never_reused, location_completeness, no_false_corruption, queue_is_sound,
    standby_is_passive,
};
use super::reporter::{FINALIZED, Reporter, standby};
use super::violation::violation;
use crate::namenode::namesystem::{EditOp, NamesystemFactory};
use crate::namenode::{DatanodeId, ReplicaState};
use crate::scenarios::Violation;
use crate::sim::ha_pair::{HaPair, HaPairShape};
use crate::sim::hdfs_datanode::{HdfsDataNode, Holdings, observe_datanodes, storage_of};
use crate::sync::{Arc, thread};

/// **Location completeness** and **generation stamp never reused** on the schedule of
/// `TestUpdateBlockTailing.testStandbyAddBlockIBRRace`, sequential: the standby replays
/// `OP_SET_GENSTAMP 1` and the file's creation, DN1's RECEIVED B@1 arrives, then the
/// standby replays the block edit and the close, and one more `OP_SET_GENSTAMP 2` (a
/// pipeline GS whose block edit never came). After failover DN1 must be a location of B
/// without any full report, and the new active's counter must be 2.
pub fn replica_reported_between_genstamp_and_block_edits_is_recorded<F: NamesystemFactory>(
    factory: F,
) -> Result<(), Violation> {
    let setup = |error: String| violation("scenario setup", error);
    let ns = standby(factory, 0);
    let edits = open_file(FILE, 1, block(BLOCK, 1, 0));
    let (genstamp_and_file, block_edit) = edits.split_at(2);
    ns.apply_edits(genstamp_and_file)
        .map_err(|(_, e)| setup(e.to_string()))?;
    let finished = block(BLOCK, 1, BLOCK_LENGTH);
    let mut dn1 = Reporter::default();
    dn1.incremental(&*ns, 1, finished, FINALIZED);
    let mut rest = block_edit.to_vec();
    rest.extend([
        EditOp::Close {
            file: FILE,
            blocks: vec![finished],
        },
        EditOp::SetGenstamp(2),
    ]);
    ns.apply_edits(&rest)
        .map_err(|(_, e)| setup(e.to_string()))?;
    ns.transition_to_active(&[], &[DatanodeId(1)])
        .map_err(|e| setup(e.to_string()))?;
    let view = ns.view();
    let held: Holdings = [(
        (BLOCK, storage_of(DatanodeId(1))),
        (finished, ReplicaState::Finalized),
    )]
    .into();
    let name = "new active";
    queue_is_sound(name, &view, &dn1.sent)?;
    location_completeness(name, &view, &dn1.sent, &held)?;
    generation_stamp_never_reused(name, &view, 2)
}

/// **Location completeness** when a datanode's RECEIVED report races the standby's
/// tailer replaying, one edit a batch, the block's `OP_SET_GENSTAMP`, the file's creation
/// and the block's `OP_ADD_BLOCK`; then the active closes the file and failover catches
/// up. The report that lands between the GS edit and the block edit is dropped without
/// HDFS-14941 (the new active lacks DN1's location); with it, it is queued and applied
/// when the block edit attaches the block.
pub fn replica_reported_between_split_batches_is_recorded<F: NamesystemFactory>(
    factory: F,
) -> Result<(), Violation> {
    let pair = Arc::new(HaPair::new(
        factory,
        HaPairShape {
            datanodes: 1,
            max_txns_per_lock: 1,
            announce_receiving: false,
            ..HaPairShape::default()
        },
    ));
    let dn = Arc::clone(&pair.datanodes()[0]);
    let finished = block(BLOCK, 1, BLOCK_LENGTH);
    pair.client(&open_file(FILE, 1, block(BLOCK, 1, 0)))?;
    let datanode = {
        let dn = Arc::clone(&dn);
        thread::spawn_named("datanode dn1", move || {
            dn.receive_block(finished);
            dn.finalize(finished);
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
    pair.client(&[EditOp::Close {
        file: FILE,
        blocks: vec![finished],
    }])?;
    tailer.join().map_err(|_| panicked())??;
    pair.failover()?;
    check_new_active(&pair, &[dn])
}

/// The invariants of the new active once every message has landed, before any datanode
/// sends a full report (which would repair a dropped replica).
fn check_new_active(pair: &HaPair, dns: &[Arc<HdfsDataNode>]) -> Result<(), Violation> {
    let (active, _) = pair.roles();
    let logged = pair.highest_logged_genstamp();
    let view = active.namesystem().view();
    let (sent, held) = observe_datanodes(dns);
    let name = format!("{:?} (new active)", active.id());
    standby_is_passive(&name, &view)?;
    queue_is_sound(&name, &view, &sent)?;
    no_false_corruption(&name, &view, &sent)?;
    location_completeness(&name, &view, &sent, &held)?;
    generation_stamp_never_reused(&name, &view, logged)
}
