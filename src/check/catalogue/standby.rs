//! The catalogue of the HA standby's handling of early datanode messages (HDFS-2742).

use crate::check::catalogue::case::Case;
use crate::namenode::namesystem::NamesystemBehavior;
use crate::scenarios::standby::{
    ClusterShape as StandbyShape, rbw_report_races_completion, schedule_12_1, schedule_12_2,
    schedule_12_3, schedule_12_5, standby_cluster,
};

/// The HA standby scenarios (HDFS-2742).
pub fn standby() -> Vec<Case> {
    let mut cases = Vec::new();
    cases!(
        cases,
        "schedule_12_1_data_loss_chain",
        NamesystemBehavior,
        |behavior, _seed| schedule_12_1(behavior),
        [(Fixed, Holds), (LegacyWholeMessageQueue, Caught)]
    );
    cases!(
        cases,
        "schedule_12_2_safe_mode_credit",
        NamesystemBehavior,
        |behavior, _seed| schedule_12_2(behavior),
        [(Fixed, Holds), (LegacyEarlyDrain, Caught)]
    );
    cases!(
        cases,
        "schedule_12_3_failover_catch_up",
        NamesystemBehavior,
        |behavior, _seed| schedule_12_3(behavior),
        [(Fixed, Holds), (LegacyHaStateCheck, Caught)]
    );
    cases!(
        cases,
        "schedule_12_5_superseded_entry",
        NamesystemBehavior,
        |behavior, _seed| schedule_12_5(behavior),
        [(Fixed, Holds), (LegacyNoStaleEntryPurge, Caught)]
    );
    cases!(
        cases,
        "rbw_report_races_completion",
        NamesystemBehavior,
        |behavior, _seed| rbw_report_races_completion(behavior),
        [
            (Fixed, Holds),
            (LegacyWholeMessageQueue, Caught),
            (LegacyNoStaleEntryPurge, Caught)
        ]
    );
    cases!(
        cases,
        "standby_cluster",
        NamesystemBehavior,
        |behavior, seed| standby_cluster(behavior, seed, StandbyShape::default()),
        [
            (Fixed, Holds),
            (LegacyWholeMessageQueue, Caught),
            (LegacyEarlyDrain, Caught)
        ]
    );
    // Both catches need one thread to run many steps alone: the tailer replaying every
    // batch before the datanode's first report, or the writer closing a file while its
    // replicas' reports wait. PCT finds them within 3 schedules; the random scheduler
    // took 49 067 (rbw race) and 3 182 (cluster) in one soak run each, and none within
    // the shuttle tests' bound of 20 000 for their seed.
    for case in &mut cases {
        case.sequential = case.scenario.starts_with("schedule_");
        let deep = (case.scenario == "rbw_report_races_completion"
            && case.variant == NamesystemBehavior::LegacyNoStaleEntryPurge.name())
            || (case.scenario == "standby_cluster"
                && case.variant == NamesystemBehavior::LegacyEarlyDrain.name());
        case.random_reaches = !deep;
    }
    cases
}
