//! The catalogue of the HA standby's handling of early datanode messages (HDFS-2742).

use crate::check::catalogue::case::Case;
use crate::namenode::namesystem::NamesystemBehavior;
use crate::scenarios::standby::{
    StandbyClusterShape, failover_judges_queued_reports_after_catch_up,
    rbw_report_before_close_loses_no_replica, rbw_report_races_completion,
    safe_mode_credits_replicas_reported_before_close, standby_cluster,
    superseded_queued_report_is_purged,
};

/// The seed's scripted reproductions: no thread, one execution says all.
const SCRIPTED: [&str; 4] = [
    "rbw_report_before_close_loses_no_replica",
    "safe_mode_credits_replicas_reported_before_close",
    "failover_judges_queued_reports_after_catch_up",
    "superseded_queued_report_is_purged",
];

/// The HA standby scenarios (HDFS-2742).
pub fn standby() -> Vec<Case> {
    let mut cases = Vec::new();
    cases!(
        cases,
        "rbw_report_before_close_loses_no_replica",
        NamesystemBehavior,
        |behavior, _seed| rbw_report_before_close_loses_no_replica(behavior),
        [(Fixed, Holds), (LegacyWholeMessageQueue, Caught)]
    );
    cases!(
        cases,
        "safe_mode_credits_replicas_reported_before_close",
        NamesystemBehavior,
        |behavior, _seed| safe_mode_credits_replicas_reported_before_close(behavior),
        [(Fixed, Holds), (LegacyEarlyDrain, Caught)]
    );
    cases!(
        cases,
        "failover_judges_queued_reports_after_catch_up",
        NamesystemBehavior,
        |behavior, _seed| failover_judges_queued_reports_after_catch_up(behavior),
        [(Fixed, Holds), (LegacyHaStateCheck, Caught)]
    );
    cases!(
        cases,
        "superseded_queued_report_is_purged",
        NamesystemBehavior,
        |behavior, _seed| superseded_queued_report_is_purged(behavior),
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
        |behavior, seed| standby_cluster(behavior, seed, StandbyClusterShape::default()),
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
        case.sequential = SCRIPTED.contains(&case.scenario);
        let deep = (case.scenario == "rbw_report_races_completion"
            && case.variant == NamesystemBehavior::LegacyNoStaleEntryPurge.name())
            || (case.scenario == "standby_cluster"
                && case.variant == NamesystemBehavior::LegacyEarlyDrain.name());
        case.random_reaches = !deep;
    }
    cases
}
