//! Crash points of a replica on disk (HDDS-16811's operations): every mutating store call
//! of a delete pass, a repair, a tree write and a scan, recovered in both orders. With
//! recovery on open (`ContainerConfig::recover_on_open`, on for `Hardened`) neither the
//! hardened code nor the seed's patch leaves a bad outcome (without its completion of
//! deletions the tree records, the hardened peer deletion interrupted after its tree write
//! leaves the block live for good); without it, as in Ozone, an interrupted delete pass
//! can leave its block live.

use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig};
use hadoop_ref::scenarios::container::crash_points::{CrashOutcome, RecoveryOrder, crash_points};

fn run(behavior: ContainerBehavior) -> Vec<CrashOutcome> {
    run_with(ContainerConfig::new(behavior))
}

fn run_with(config: ContainerConfig) -> Vec<CrashOutcome> {
    let behavior = config.behavior;
    let recovery = if config.recover_on_open {
        "with"
    } else {
        "without"
    };
    let dir = tempfile::tempdir().unwrap();
    let outcomes = crash_points(config, dir.path()).unwrap();
    let bad: Vec<_> = outcomes.iter().filter(|o| o.result.is_err()).collect();
    println!(
        "crash points, {behavior:?} {recovery} recovery on open: {} tried ({} points x 2 modes x 2 orders), {} bad",
        outcomes.len(),
        outcomes.len() / 4,
        bad.len()
    );
    for outcome in &bad {
        println!(
            "  {:?} stopped after {} operation(s) by a {:?}, {:?}: {}",
            outcome.operation,
            outcome.point,
            outcome.mode,
            outcome.order,
            outcome.result.as_ref().unwrap_err()
        );
    }
    outcomes
}

#[test]
fn hardened_recovers_from_every_crash_point() {
    let outcomes = run(ContainerBehavior::Hardened);
    assert!(outcomes.len() > 20, "the crash points were enumerated");
    assert!(outcomes.iter().all(|o| o.result.is_ok()));
}

/// Ozone's code has no recovery on open: a delete pass interrupted between its file
/// unlinks and its database batch leaves metadata without a file, and when a
/// reconciliation runs before the next pass the block is still live after both (every bad
/// outcome is of this kind: a delete pass, the reconcile-first order).
#[test]
fn seed_patch_without_recovery_leaves_an_interrupted_deletion_live() {
    let outcomes = run(ContainerBehavior::SeedPatch);
    let bad: Vec<_> = outcomes.iter().filter(|o| o.result.is_err()).collect();
    assert!(!bad.is_empty(), "the interrupted deletions were not caught");
    for outcome in bad {
        let message = outcome.result.as_ref().unwrap_err().to_string();
        assert_eq!(outcome.order, RecoveryOrder::ReconcileFirst, "{message}");
        assert!(
            message.contains("a block whose deletion was executed is not live"),
            "{message}"
        );
    }
}

#[test]
fn seed_patch_with_recovery_on_open_recovers_from_every_crash_point() {
    let outcomes = run_with(ContainerConfig {
        recover_on_open: true,
        ..ContainerConfig::new(ContainerBehavior::SeedPatch)
    });
    assert!(outcomes.len() > 20, "the crash points were enumerated");
    assert!(outcomes.iter().all(|o| o.result.is_ok()));
}
