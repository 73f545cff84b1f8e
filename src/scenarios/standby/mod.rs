//! The HA standby's handling of datanode messages that arrive before their edits
//! (HDFS-2742): scenarios and invariants shared by the loom and shuttle tests, the soak
//! tool and the tests.
//!
//! **The race.** Datanodes report to both NameNodes at once; the standby learns block
//! state only when its tailer replays the edits, late. A report judged against a later
//! state marks a healthy replica corrupt, which can end in data loss.
//!
//! **The fix.** The standby postpones what it cannot judge yet (`PendingDataNodeMessages`)
//! and judges a block's queued reports as replay reaches the block
//! (`BlockManager.processQueuedMessages`); failover replays every edit before it stops
//! postponing (`FSNamesystem.startActiveServices`).
//!
//! Real NameNodes (namesystem, tailer, shared edit log, HA transitions) in a
//! [`HaPair`](crate::sim::ha_pair::HaPair), with
//! [`HdfsDataNode`](crate::sim::hdfs_datanode::HdfsDataNode)s that write, finalize, report
//! to both NameNodes and delete late. The invariants: [`standby_is_passive`],
//! [`safe_mode_matches_recount`], [`queue_is_sound`] (with per-(block, datanode) FIFO),
//! [`no_false_corruption`], [`location_completeness`], [`no_stale_location`],
//! [`no_block_lost`] and [`generation_stamp_never_reused`]. The scenarios: the seed's scripted reproductions
//! (the ten-step data-loss chain, the safe-mode credit, the failover catch-up and the
//! superseded-entry schedules, and HDFS-14941's split batches), the loom race
//! [`rbw_report_races_completion`], HDFS-14941's race
//! [`replica_reported_between_split_batches_is_recorded`], the random
//! [`failovers_lose_no_replica_and_keep_counts`], and the appends that leave a datanode
//! out of their pipeline, [`appends_leave_no_stale_location`]. One liveness property,
//! [`standby_queue_empties`] (HDFS-17905), closes the heal phase of
//! [`deleted_blocks_leave_no_queued_reports`].

mod append;
mod block_drain;
mod cluster;
mod departed;
mod edits;
mod genstamp;
mod invariants;
mod leak;
mod queued_as_reported;
mod rbw_race;
mod reporter;
mod scripted;
mod violation;

pub use append::{
    AppendClusterShape, FailoverPoint, append_leaving_a_datanode_out,
    appends_leave_no_stale_location,
};
pub use block_drain::{
    JUDGED_AT_BLOCK_EDIT, JUDGED_IN_ARRIVAL_ORDER, judged_at_block_edit, judged_in_arrival_order,
    queued_reports_judged_at_their_block_edit,
};
pub use cluster::{StandbyClusterShape, failovers_lose_no_replica_and_keep_counts};
pub use departed::{
    DEPARTED_SEED_KEY, NO_DEPARTED_DATANODE_REPORT, departed_datanode_leaves_no_queued_report,
    no_report_of_a_departed_datanode,
};
pub use edits::BLOCK_LENGTH;
pub use genstamp::{
    replica_reported_between_genstamp_and_block_edits_is_recorded,
    replica_reported_between_split_batches_is_recorded,
};
pub use invariants::{
    LOCATION_COMPLETENESS, NO_FALSE_CORRUPTION, QUEUE_PER_PAIR_FIFO, SAFE_MODE_RECOUNT,
    STANDBY_IS_PASSIVE, check_namenode, check_pair_namenodes, check_pair_quiescent,
    check_quiescent, generation_stamp_never_reused, location_completeness, no_block_lost,
    no_false_corruption, no_stale_location, queue_is_sound, safe_mode_matches_recount,
    standby_is_passive,
};
pub use leak::{
    LEAK_SEED_KEY, STANDBY_QUEUE_EMPTIES, deleted_blocks_leave_no_queued_reports,
    standby_queue_empties,
};
pub use queued_as_reported::stale_replica_queued_as_reported;
pub use rbw_race::rbw_report_races_completion;
pub use scripted::{
    DN1_KEPT_AS_EXCESS_SEED, failover_judges_queued_reports_after_catch_up,
    rbw_report_before_close_loses_no_replica, safe_mode_credits_replicas_reported_before_close,
    superseded_queued_report_is_purged,
};
pub use violation::SEED_KEY;
