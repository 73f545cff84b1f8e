//! The catalogue of the container reconciliation against block deletion (HDDS-16811, HDDS-16808).

use crate::check::catalogue::case::Case;
use crate::datanode::container::ContainerBehavior;
use crate::scenarios::container::{
    ClusterShape as ContainerClusterShape, concurrent_reconciliations, container_cluster,
    delete_during_partial_repair, delete_during_repair, mc2_deleted_block_restored,
    mc3_block_deleted_during_reconciliation,
};

/// The container reconciliation against block deletion scenarios (HDDS-16811).
pub fn container() -> Vec<Case> {
    let mut cases = Vec::new();
    cases!(
        cases,
        "delete_during_repair",
        ContainerBehavior,
        |behavior, _seed| delete_during_repair(behavior),
        [(Fixed, Holds), (Legacy, Caught)]
    );
    cases!(
        cases,
        "delete_during_partial_repair",
        ContainerBehavior,
        |behavior, _seed| delete_during_partial_repair(behavior),
        [(Fixed, Holds), (Legacy, Caught)]
    );
    cases!(
        cases,
        "mc2_deleted_block_restored",
        ContainerBehavior,
        |behavior, _seed| mc2_deleted_block_restored(behavior),
        [(Fixed, Holds), (Legacy, Caught)]
    );
    cases!(
        cases,
        "mc3_metadata_without_file",
        ContainerBehavior,
        |behavior, _seed| mc3_block_deleted_during_reconciliation(behavior, false),
        [(Fixed, Holds), (Legacy, Caught)]
    );
    cases!(
        cases,
        "mc3_missing_chunk",
        ContainerBehavior,
        |behavior, _seed| mc3_block_deleted_during_reconciliation(behavior, true),
        [(Fixed, Holds), (Legacy, Caught)]
    );
    cases!(
        cases,
        "container_cluster",
        ContainerBehavior,
        |behavior, seed| container_cluster(behavior, seed, ContainerClusterShape::default()),
        [(Fixed, Holds), (Legacy, Caught)]
    );
    // Two reconciliations of one container, one whose peer fails mid-block: through the
    // handler (one at a time) and around it (the cleanup never cuts below what is
    // committed). Only the fixed behavior has that cleanup, so it is the only variant.
    cases!(
        cases,
        "concurrent_reconciliations",
        ContainerBehavior,
        |behavior, _seed| concurrent_reconciliations(behavior, true),
        [(Fixed, Holds)]
    );
    cases!(
        cases,
        "concurrent_reconciliations_unguarded",
        ContainerBehavior,
        |behavior, _seed| concurrent_reconciliations(behavior, false),
        [(Fixed, Holds)]
    );
    for case in &mut cases {
        case.sequential = case.scenario.starts_with("mc");
    }
    cases
}
