//! HDFS-15422 on the standby: a report queued as corrupt-looking keeps what the datanode
//! said.
//!
//! **The race.** A datanode left out of a recovery reports its replica at the old stamp
//! while the standby already replayed the block's completion at the new one; the standby
//! postpones it. Queued with the stored block's stamp and length in place of its own, the
//! entry passes at failover for a current replica: the stale replica becomes a location.
//!
//! **The fix** (`BlockManager.processReportedBlock` queues the reported block, not the
//! stored one): the entry is the report; failover flags the stale replica corrupt.

use super::edits::{BLOCK, BLOCK_LENGTH, FILE, block, open_file};
use super::invariants::{no_stale_location, queue_is_sound};
use super::reporter::{FINALIZED, Reporter, standby};
use super::violation::violation;
use crate::namenode::DatanodeId;
use crate::namenode::namesystem::{EditOp, NamesystemFactory};
use crate::scenarios::Violation;
use crate::sim::hdfs_datanode::storage_of;

/// **Queue soundness** and **no stale location**, sequential: the standby replays a file
/// whose block DN1 and DN2 finished at stamp 1, a recovery to stamp 2 with DN1 alone, and
/// the close at 2, and DN1's report at 2. DN2, left out, reports its replica at stamp 1:
/// corrupt-looking against the COMPLETE block, it is queued, and the entry must be DN2's
/// report. At failover it is judged: DN2 must not become a live location.
pub fn stale_replica_queued_as_reported<F: NamesystemFactory>(factory: F) -> Result<(), Violation> {
    let ns = standby(factory, 0);
    let mut edits = open_file(FILE, 3, block(BLOCK, 1, 0));
    edits.extend([
        EditOp::SetGenstamp(2),
        EditOp::UpdateBlocks {
            file: FILE,
            blocks: vec![block(BLOCK, 2, 0)],
            pipeline: vec![storage_of(DatanodeId(1))],
        },
        EditOp::Close {
            file: FILE,
            blocks: vec![block(BLOCK, 2, BLOCK_LENGTH)],
        },
    ]);
    ns.apply_edits(&edits)
        .map_err(|(_, error)| violation("scenario setup", error.to_string()))?;
    let mut reporter = Reporter::default();
    reporter.incremental(&*ns, 1, block(BLOCK, 2, BLOCK_LENGTH), FINALIZED);
    reporter.incremental(&*ns, 2, block(BLOCK, 1, BLOCK_LENGTH), FINALIZED);
    queue_is_sound("standby", &ns.view(), &reporter.sent)?;
    ns.transition_to_active(&[], &[DatanodeId(1), DatanodeId(2)])
        .map_err(|error| violation("scenario setup", error.to_string()))?;
    no_stale_location("new active", &ns.view(), &reporter.sent)
}
