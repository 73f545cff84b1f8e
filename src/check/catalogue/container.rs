//! The catalogue of the container reconciliation against block deletion (HDDS-16811, HDDS-16808).

use crate::check::catalogue::case::Case;
use crate::datanode::container::ContainerBehavior;
use crate::scenarios::container::{
    ContainerClusterShape, block_deleted_during_reconciliation_is_not_committed,
    concurrent_reconciliations, delete_during_partial_repair, delete_during_repair,
    deleted_block_is_not_restored_by_reconciliation, deletes_and_repairs_keep_replicas_consistent,
};

/// The container reconciliation against block deletion scenarios (HDDS-16811).
pub fn container() -> Vec<Case> {
    let mut cases = Vec::new();
    repair_races(&mut cases);
    seed_reproductions(&mut cases);
    random_cluster(&mut cases);
    concurrent_reconciliation_cases(&mut cases);
    cases
}

/// A deletion racing the repair of a block, small enough for loom.
fn repair_races(cases: &mut Vec<Case>) {
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
}

/// The seed's reproductions, MC2 then MC3 and its MISSING_CHUNK variant: each a fixed
/// sequence of steps on no thread, so one execution says all.
fn seed_reproductions(cases: &mut Vec<Case>) {
    let first = cases.len();
    cases!(
        cases,
        "deleted_block_not_restored",
        ContainerBehavior,
        |behavior, _seed| deleted_block_is_not_restored_by_reconciliation(behavior),
        [(Fixed, Holds), (Legacy, Caught)]
    );
    cases!(
        cases,
        "block_deleted_during_reconciliation",
        ContainerBehavior,
        |behavior, _seed| block_deleted_during_reconciliation_is_not_committed(behavior, false),
        [(Fixed, Holds), (Legacy, Caught)]
    );
    cases!(
        cases,
        "block_deleted_during_partial_reconciliation",
        ContainerBehavior,
        |behavior, _seed| block_deleted_during_reconciliation_is_not_committed(behavior, true),
        [(Fixed, Holds), (Legacy, Caught)]
    );
    for case in &mut cases[first..] {
        case.sequential = true;
    }
}

/// Three replicas under random deletions, repairs and scans.
fn random_cluster(cases: &mut Vec<Case>) {
    cases!(
        cases,
        "deletes_and_repairs_keep_replicas_consistent",
        ContainerBehavior,
        |behavior, seed| deletes_and_repairs_keep_replicas_consistent(
            behavior,
            seed,
            ContainerClusterShape::default()
        ),
        [(Fixed, Holds), (Legacy, Caught)]
    );
}

/// Two reconciliations of one container, one whose peer fails mid-block: through the
/// handler (one at a time) and around it (the cleanup never cuts below what is
/// committed). Only the fixed behavior has that cleanup, so it is the only variant.
fn concurrent_reconciliation_cases(cases: &mut Vec<Case>) {
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
}
