//! The conformance kit held against the crate's own variants: a reference conforms to
//! itself, each legacy behavior diverges from the patch it lacks (HDDS-17268, HDDS-16891,
//! HDFS-2742, HDDS-16811), and the suites' scenario lists are the catalogue's.

use hadoop_ref::check::catalogue;
use hadoop_ref::check::conformance::{
    DifferentialConfig, allocation, replica, standby, term_fencing,
};
use hadoop_ref::datanode::container::ContainerBehavior;
use hadoop_ref::datanode::state_context::StateContextBehavior;
use hadoop_ref::namenode::namesystem::NamesystemBehavior;
use hadoop_ref::scm::ScmBehavior;

#[test]
fn term_fencing_suite_runs_exactly_the_catalogues_scenarios() {
    let mut listed: Vec<_> = term_fencing::scenarios::<StateContextBehavior>()
        .iter()
        .map(|s| s.name)
        .collect();
    let mut catalogued: Vec<_> = catalogue::term_fencing()
        .iter()
        .map(|c| c.scenario)
        .collect();
    listed.sort_unstable();
    catalogued.sort_unstable();
    catalogued.dedup();
    assert_eq!(listed, catalogued);
}

#[test]
fn seed_patch_conforms_to_itself() {
    let report = term_fencing::differential(
        StateContextBehavior::SeedPatch,
        StateContextBehavior::SeedPatch,
        &DifferentialConfig::default(),
    );
    report.assert_conforms();
    assert_eq!(report.cases, u64::from(DifferentialConfig::default().cases));
    assert!(report.implementation.ends_with("StateContext"));
}

#[test]
fn heartbeat_term_discarded_before_init_diverges_from_the_seed_patch() {
    for legacy in [
        StateContextBehavior::Legacy,
        StateContextBehavior::LegacyIgnoreHeartbeatTermBeforeInit,
    ] {
        let report = term_fencing::differential(
            legacy,
            StateContextBehavior::SeedPatch,
            &DifferentialConfig::default(),
        );
        let divergence = report.assert_diverges();
        println!("{legacy:?}: {divergence}");
        let last = divergence.story.events.last().expect("a step");
        assert_eq!(last.name, "take next command", "{divergence}");
        assert!(divergence.length <= 6, "{divergence}");
    }
}

#[test]
fn unlocked_term_update_alone_is_sequentially_the_seed_patch() {
    // The race needs two threads: the differential cannot see it (loom and shuttle do).
    term_fencing::differential(
        StateContextBehavior::LegacyUnlockedTermUpdate,
        StateContextBehavior::SeedPatch,
        &DifferentialConfig::default(),
    )
    .assert_conforms();
}

#[test]
fn standby_suite_runs_the_catalogues_scenarios_but_the_two_with_a_serving_active() {
    let mut listed: Vec<_> = standby::scenarios::<NamesystemBehavior>()
        .iter()
        .map(|s| s.name)
        .chain(standby::NOT_IN_SUITE)
        .collect();
    let mut catalogued: Vec<_> = catalogue::standby().iter().map(|c| c.scenario).collect();
    listed.sort_unstable();
    catalogued.sort_unstable();
    catalogued.dedup();
    assert_eq!(listed, catalogued);
}

#[test]
fn trunk_standby_conforms_to_itself() {
    let report = standby::differential(
        NamesystemBehavior::Trunk,
        NamesystemBehavior::Trunk,
        &DifferentialConfig::default(),
    );
    report.assert_conforms();
    assert_eq!(report.cases, u64::from(DifferentialConfig::default().cases));
}

#[test]
fn each_legacy_standby_diverges_from_trunk() {
    for legacy in [
        NamesystemBehavior::LegacyWholeMessageQueue,
        NamesystemBehavior::LegacyEarlyDrain,
        NamesystemBehavior::LegacyNoImpendingGenstamp,
    ] {
        let report = standby::differential(
            legacy,
            NamesystemBehavior::Trunk,
            &DifferentialConfig::default(),
        );
        let divergence = report.assert_diverges();
        println!(
            "{legacy:?}: after {} sequence(s), {} operation(s):\n{divergence}",
            divergence.found_after_cases, divergence.length
        );
    }
}

#[test]
fn allocation_suite_runs_exactly_the_catalogues_scenarios() {
    let mut listed: Vec<_> = allocation::scenarios::<ScmBehavior>()
        .iter()
        .map(|s| s.name)
        .collect();
    let mut catalogued: Vec<_> = catalogue::allocation().iter().map(|c| c.scenario).collect();
    listed.sort_unstable();
    catalogued.sort_unstable();
    catalogued.dedup();
    assert_eq!(listed, catalogued);
}

#[test]
fn each_scm_reference_conforms_to_itself() {
    for reference in [ScmBehavior::Hardened, ScmBehavior::SeedPatch] {
        let report = allocation::differential(reference, reference, &DifferentialConfig::default());
        report.assert_conforms();
        assert_eq!(report.cases, u64::from(DifferentialConfig::default().cases));
        assert!(report.implementation.ends_with("StorageContainerManager"));
    }
}

#[test]
fn scm_without_the_rebuild_diverges_from_the_seed_patch() {
    let report = allocation::differential(
        ScmBehavior::LegacyNoRebuild,
        ScmBehavior::SeedPatch,
        &DifferentialConfig::default(),
    );
    let divergence = report.assert_diverges();
    println!(
        "LegacyNoRebuild: after {} sequence(s), {} operation(s):\n{divergence}",
        divergence.found_after_cases, divergence.length
    );
    let last = divergence.story.events.last().expect("a step");
    assert_eq!(last.name, "Ratis elects a leader", "{divergence}");
}

#[test]
fn seed_patch_scm_diverges_from_hardened_on_a_re_registration() {
    let report = allocation::differential(
        ScmBehavior::SeedPatch,
        ScmBehavior::Hardened,
        &DifferentialConfig::default(),
    );
    let divergence = report.assert_diverges();
    println!(
        "SeedPatch: after {} sequence(s), {} operation(s):\n{divergence}",
        divergence.found_after_cases, divergence.length
    );
    let last = divergence.story.events.last().expect("a step");
    assert_eq!(last.name, "datanode registers again", "{divergence}");
}

#[test]
fn ungated_rebuild_alone_is_sequentially_the_seed_patch() {
    // The gate race needs two threads: the differential cannot see it (loom and shuttle do).
    allocation::differential(
        ScmBehavior::LegacyRebuildWithoutGate,
        ScmBehavior::SeedPatch,
        &DifferentialConfig::default(),
    )
    .assert_conforms();
}

#[test]
fn replica_suite_runs_the_catalogues_scenarios_but_three_beyond_the_boundary() {
    let mut listed: Vec<_> = replica::scenarios::<ContainerBehavior>()
        .iter()
        .map(|s| s.name)
        .chain(replica::NOT_IN_SUITE)
        .collect();
    let mut catalogued: Vec<_> = catalogue::container().iter().map(|c| c.scenario).collect();
    listed.sort_unstable();
    catalogued.sort_unstable();
    catalogued.dedup();
    assert_eq!(listed, catalogued);
}

#[test]
fn each_patched_replica_conforms_to_itself() {
    for reference in ContainerBehavior::PATCHED {
        let report = replica::differential(reference, reference, &DifferentialConfig::default());
        report.assert_conforms();
        assert_eq!(report.cases, u64::from(DifferentialConfig::default().cases));
        assert!(report.implementation.ends_with("ReplicaNode"));
    }
}

#[test]
fn legacy_replica_diverges_from_the_seed_patch_at_a_deleting_pass() {
    let report = replica::differential(
        ContainerBehavior::Legacy,
        ContainerBehavior::SeedPatch,
        &DifferentialConfig::default(),
    );
    let divergence = report.assert_diverges();
    println!(
        "Legacy: after {} sequence(s), {} operation(s):\n{divergence}",
        divergence.found_after_cases, divergence.length
    );
    // The block the replica never had leaves no deleted entry in its tree.
    let last = divergence.story.events.last().expect("a step");
    assert_eq!(last.name, "block deleting pass", "{divergence}");
}

#[test]
fn seed_patch_replica_diverges_from_hardened_on_a_peer_deletion() {
    let report = replica::differential(
        ContainerBehavior::SeedPatch,
        ContainerBehavior::Hardened,
        &DifferentialConfig::default(),
    );
    let divergence = report.assert_diverges();
    println!(
        "SeedPatch: after {} sequence(s), {} operation(s):\n{divergence}",
        divergence.found_after_cases, divergence.length
    );
    // HDDS-11765: the hardened replica deletes a block its peer's tree marks deleted.
    let last = divergence.story.events.last().expect("a step");
    assert_eq!(last.name, "reconcile, then scan", "{divergence}");
}
