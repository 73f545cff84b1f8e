//! Loom, HDFS-2742: DN1's full report listing B@5 RBW and its RECEIVED B@6 race the
//! standby's tailer replaying the block's allocation and, in the next batch, its recovery
//! to GS 6 and close; failover then races the tailer. Two spawned threads. Trunk never
//! flags DN1 corrupt; the whole-message queue and the queue without the stale-entry
//! purge are caught.

use crate::support::{assert_caught, assert_holds, explore};
use hadoop_ref::namenode::namesystem::NamesystemBehavior;
use hadoop_ref::scenarios::standby::{SEED_KEY, rbw_report_races_completion};

#[test]
fn rbw_report_is_never_judged_against_the_completed_block() {
    let exploration = explore("rbw-race/Trunk", || {
        rbw_report_races_completion(NamesystemBehavior::Trunk)
    });
    assert_holds(&exploration);
}

#[test]
fn whole_message_queue_judges_rbw_report_after_completion() {
    let exploration = explore("rbw-race/LegacyWholeMessageQueue", || {
        rbw_report_races_completion(NamesystemBehavior::LegacyWholeMessageQueue)
    });
    assert_caught(&exploration, SEED_KEY);
}

#[test]
fn superseded_rbw_entry_lingers_until_failover_without_purge() {
    let exploration = explore("rbw-race/LegacyNoStaleEntryPurge", || {
        rbw_report_races_completion(NamesystemBehavior::LegacyNoStaleEntryPurge)
    });
    assert_caught(&exploration, SEED_KEY);
}
