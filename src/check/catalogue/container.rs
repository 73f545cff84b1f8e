//! The catalogue of the container reconciliation against block deletion (HDDS-16811,
//! HDDS-16808): the seed's patch (`SeedPatch`) and the hardened code (`Hardened`) hold where
//! the seed's race is the subject, and the legacy code is caught; each race this crate
//! found beyond the seed is a case where the seed's patch is caught and the hardened code
//! holds (or, for a race of the hardened code's own cleanup, the hardened code with that
//! switch off is caught).

use crate::check::catalogue::case::{Case, Expectation};
use crate::datanode::container::{ContainerBehavior, ContainerConfig};
use crate::scenarios::container::{
    ContainerClusterShape, ScannerBehavior, block_deleted_during_reconciliation_is_not_committed,
    concurrent_reconciliations, concurrent_reconciliations_with,
    data_checksum_follows_concurrent_tree_writes, delete_during_partial_repair,
    delete_during_repair, deleted_block_is_not_restored_by_reconciliation,
    deletes_and_repairs_keep_replicas_consistent,
    failed_deletion_tree_write_never_orphans_a_repair, scan_during_block_deletion,
};

/// The variant name of the hardened code with its failed-repair cleanup under the read
/// lock (`cleanup_under_write_lock` off).
const HARDENED_CLEANUP_UNDER_READ_LOCK: &str = "HardenedCleanupUnderReadLock";

/// The container reconciliation against block deletion scenarios (HDDS-16811).
pub fn container() -> Vec<Case> {
    let mut cases = Vec::new();
    repair_races(&mut cases);
    seed_reproductions(&mut cases);
    random_cluster(&mut cases);
    concurrent_reconciliation_cases(&mut cases);
    beyond_the_seed(&mut cases);
    scanner_and_deletion(&mut cases);
    cases
}

/// HDDS-7300: the scanner looks a block whose file is gone up again under the read lock,
/// after the deleting task's batch; before it, with no lock.
fn scanner_and_deletion(cases: &mut Vec<Case>) {
    cases!(
        cases,
        "scan_during_block_deletion",
        ScannerBehavior,
        |behavior, _seed| scan_during_block_deletion(behavior),
        [
            (SeedPatch, Holds),
            (Hardened, Holds),
            (LegacyRecheckWithoutLock, Caught),
        ]
    );
}

/// A deletion racing the repair of a block, small enough for loom.
fn repair_races(cases: &mut Vec<Case>) {
    cases!(
        cases,
        "delete_during_repair",
        ContainerBehavior,
        |behavior, _seed| delete_during_repair(behavior),
        [(SeedPatch, Holds), (Hardened, Holds), (Legacy, Caught)]
    );
    cases!(
        cases,
        "delete_during_partial_repair",
        ContainerBehavior,
        |behavior, _seed| delete_during_partial_repair(behavior),
        [(SeedPatch, Holds), (Hardened, Holds), (Legacy, Caught)]
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
        [(SeedPatch, Holds), (Hardened, Holds), (Legacy, Caught)]
    );
    cases!(
        cases,
        "block_deleted_during_reconciliation",
        ContainerBehavior,
        |behavior, _seed| block_deleted_during_reconciliation_is_not_committed(behavior, false),
        [(SeedPatch, Holds), (Hardened, Holds), (Legacy, Caught)]
    );
    cases!(
        cases,
        "block_deleted_during_partial_reconciliation",
        ContainerBehavior,
        |behavior, _seed| block_deleted_during_reconciliation_is_not_committed(behavior, true),
        [(SeedPatch, Holds), (Hardened, Holds), (Legacy, Caught)]
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
        [(SeedPatch, Holds), (Hardened, Holds), (Legacy, Caught)]
    );
}

/// Two reconciliations of one container, one whose peer fails mid-block: through the
/// handler (one at a time, as Ozone's replication supervisor runs them) and around it.
/// Around it the seed's patch is caught: the failed one's partial commit lands after the
/// other's whole one, the last tree write lists the whole block, and the block's second
/// chunk is lost to its metadata for good. The hardened code fails the broken repair
/// whole and removes what it pulled under the write lock, never below what is committed;
/// the same removal under the read lock unlinks the block the other reconciliation
/// commits, caught as [`HARDENED_CLEANUP_UNDER_READ_LOCK`].
fn concurrent_reconciliation_cases(cases: &mut Vec<Case>) {
    cases!(
        cases,
        "concurrent_reconciliations",
        ContainerBehavior,
        |behavior, _seed| concurrent_reconciliations(behavior, true),
        [(SeedPatch, Holds), (Hardened, Holds)]
    );
    cases!(
        cases,
        "concurrent_reconciliations_unguarded",
        ContainerBehavior,
        |behavior, _seed| concurrent_reconciliations(behavior, false),
        [(SeedPatch, Caught), (Hardened, Holds)]
    );
    cases.push(Case::new(
        "concurrent_reconciliations_unguarded",
        HARDENED_CLEANUP_UNDER_READ_LOCK,
        Expectation::Caught,
        |_seed| {
            concurrent_reconciliations_with(
                ContainerConfig {
                    cleanup_under_write_lock: false,
                    ..ContainerConfig::new(ContainerBehavior::Hardened)
                },
                false,
            )
        },
    ));
}

/// The races this crate found beyond the seed's patch: HDDS-16808's refresh in Ozone's
/// order, and a repair committed after a deleting round that unlinked its file and failed
/// its tree write.
fn beyond_the_seed(cases: &mut Vec<Case>) {
    cases!(
        cases,
        "data_checksum_follows_concurrent_tree_writes",
        ContainerBehavior,
        |behavior, _seed| data_checksum_follows_concurrent_tree_writes(behavior),
        [(SeedPatch, Caught), (Hardened, Holds)]
    );
    cases!(
        cases,
        "failed_deletion_tree_write_never_orphans_a_repair",
        ContainerBehavior,
        |behavior, _seed| failed_deletion_tree_write_never_orphans_a_repair(behavior),
        [(SeedPatch, Caught), (Hardened, Holds)]
    );
}
