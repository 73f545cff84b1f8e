//! Crash points of a replica on disk (HDDS-16811's operations): every mutating store call
//! of a delete pass, a repair, a tree write and a scan, recovered in both orders, with
//! recovery on open. Neither the hardened code nor the seed's patch leaves a bad outcome
//! (without recovery on open's completion of deletions the tree records, the hardened
//! peer deletion interrupted after its tree write leaves the block live for good).

use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig};
use hadoop_ref::scenarios::container::crash_points::{CrashOutcome, crash_points};

fn run(behavior: ContainerBehavior) -> Vec<CrashOutcome> {
    let dir = tempfile::tempdir().unwrap();
    let outcomes = crash_points(ContainerConfig::new(behavior), dir.path()).unwrap();
    let bad: Vec<_> = outcomes.iter().filter(|o| o.result.is_err()).collect();
    println!(
        "crash points, {behavior:?}: {} tried ({} points x 2 modes x 2 orders), {} bad",
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

#[test]
fn seed_patch_recovers_from_every_crash_point() {
    let outcomes = run(ContainerBehavior::SeedPatch);
    assert!(outcomes.len() > 20, "the crash points were enumerated");
    assert!(outcomes.iter().all(|o| o.result.is_ok()));
}
