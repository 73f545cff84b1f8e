//! The explorer of a cluster case's actions (`check::explore`): its fingerprint keys a
//! state by what decides the cluster's future, not by the order that reached it, and
//! tells apart states an invariant tells apart; its search catches a legacy variant and
//! lets a fixed one hold; its counterexamples read back as written.

use std::hash::{DefaultHasher, Hasher};

use hadoop_ref::check::catalogue::{self, Expectation};
use hadoop_ref::check::explore::{
    Action, CounterexampleFile, ExploreCase, Options, Verdict, explore, replay_path,
};
use hadoop_ref::clock::Clock;
use hadoop_ref::scenarios::Violation;
use hadoop_ref::scenarios::cluster::explorable::{DriverStep, Explorable};
use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;
use hadoop_ref::unmodelled::Shared;

fn case(scenario: &str, variant: &str) -> ExploreCase {
    catalogue::explorable()
        .into_iter()
        .find(|c| c.scenario == scenario && c.variant == variant)
        .unwrap_or_else(|| panic!("no explorable case {scenario}/{variant}"))
}

fn fingerprint(cluster: &MiniOzoneCluster) -> u64 {
    let mut hasher = DefaultHasher::new();
    cluster.digest(&mut hasher).unwrap();
    hasher.finish()
}

/// `case` built and run along `actions` (driver steps at their scripts' next position).
fn run(case: &ExploreCase, actions: &[Action]) -> Explorable {
    let built = case.build().unwrap();
    let mut positions = vec![0; built.scripts.len()];
    for &action in actions {
        let at = match action {
            Action::Driver { script } => {
                positions[script] += 1;
                positions[script] - 1
            }
            _ => 0,
        };
        action.apply(&built, at).unwrap();
    }
    built
}

/// A named change of a cluster.
type Change = (&'static str, fn(&MiniOzoneCluster));

const REPAIR: &str = "deletions_across_transfer_restart_and_repair";

/// Once the leader's reconcile commands reached datanodes 2 and 3, each one's command
/// processor taking its command touches its own datanode only: in either order they reach
/// one state, one fingerprint, and the partial-order reduction calls them independent.
#[test]
fn two_orders_of_commuting_actions_reach_one_fingerprint() {
    let repair = case(REPAIR, "SeedPatch");
    let delivered = [
        Action::Driver { script: 1 },
        Action::Heartbeat { dn: 1, scm: 0 },
        Action::Heartbeat { dn: 2, scm: 0 },
    ];
    let (dn2, dn3) = (Action::Process { dn: 1 }, Action::Process { dn: 2 });
    let before = run(&repair, &delivered);
    assert!(dn2.independent(dn3, &Action::leading(&before.cluster)));
    let order = |first, second| {
        let mut path = delivered.to_vec();
        path.extend([first, second]);
        fingerprint(&run(&repair, &path).cluster)
    };
    assert_eq!(order(dn2, dn3), order(dn3, dn2));
    // The fingerprint is not blind to them: each took a command.
    assert_ne!(order(dn2, dn3), fingerprint(&before.cluster));
}

/// Two heartbeats of one datanode race on its term: they are not independent.
#[test]
fn heartbeats_of_one_datanode_are_not_independent() {
    let leading = vec![true, false];
    let a = Action::Heartbeat { dn: 1, scm: 0 };
    let b = Action::Heartbeat { dn: 1, scm: 1 };
    assert!(!a.independent(b, &leading));
    assert!(!Action::Supervise { dn: 0 }.independent(Action::DeleteBlocks { dn: 1 }, &leading));
    assert!(Action::DeleteBlocks { dn: 0 }.independent(Action::DeleteBlocks { dn: 1 }, &leading));
}

/// States that differ in one thing an invariant reads (a replica's blocks, a link, the
/// leader's term, a datanode's term, a pipeline a datanode left) have different
/// fingerprints; a step that changes nothing keeps it.
#[test]
fn states_differing_in_a_judged_field_never_collide() {
    let repair = case(REPAIR, "SeedPatch");
    let base = fingerprint(&repair.build().unwrap().cluster);
    let changed: [Change; 5] = [
        ("a block written to one replica", |c| {
            let key = c.open_key(1).unwrap();
            let dn = c.datanode(1).unwrap().id();
            c.write_replica(&key, dn, &key.blocks).unwrap();
        }),
        ("a link healed", |c| c.set_link(0, 0, true).unwrap()),
        ("leadership moved", |c| c.transfer_leadership(1).unwrap()),
        ("a datanode restarted", |c| c.restart_datanode(2).unwrap()),
        ("a pipeline left", |c| {
            c.leave_pipeline(1, hadoop_ref::hdds::ids::PipelineId(9))
                .unwrap()
        }),
    ];
    for (what, change) in changed {
        let built = repair.build().unwrap();
        change(&built.cluster);
        assert_ne!(fingerprint(&built.cluster), base, "{what}");
    }
    let idle = repair.build().unwrap();
    idle.cluster.datanode(1).unwrap().scan_step();
    assert_eq!(fingerprint(&idle.cluster), base, "a scan with none queued");
}

/// An SCM reads a datanode's storage reports only as their container slots (the space
/// check, the placement policy) and whether there are any (safe mode): a report that
/// moves the bytes within a slot keeps the fingerprint; one that gains a slot, or an
/// SCM that never heard from the datanode, does not.
#[test]
fn storage_reports_count_by_the_slots_an_scm_reads() {
    use hadoop_ref::hdds::report::StorageReport;
    let repair = case(REPAIR, "SeedPatch");
    let with_report = |remaining: Option<u64>| {
        let built = repair.build().unwrap();
        let cluster = &built.cluster;
        let scm = cluster.scm(0).unwrap();
        let dn = cluster.datanode(0).unwrap().id();
        let reports = remaining.map_or_else(Vec::new, |r| vec![StorageReport::new(r, 0, 0)]);
        scm.process_node_report(dn, reports).unwrap();
        fingerprint(cluster)
    };
    let size = repair
        .build()
        .unwrap()
        .cluster
        .scm(0)
        .unwrap()
        .config()
        .container_size;
    assert_eq!(
        with_report(Some(3 * size)),
        with_report(Some(3 * size + size / 2))
    );
    assert_ne!(with_report(Some(3 * size)), with_report(Some(4 * size)));
    assert_ne!(with_report(Some(0)), with_report(None));
}

fn options(depth: usize) -> Options {
    Options {
        depth,
        time_limit: None,
        ..Options::default()
    }
}

/// The explorer finds the double delete of HDDS-16449 (both fences gone) in one action,
/// and with either fence every state of the case holds (the whole state space, seen).
#[test]
fn explorer_catches_the_double_delete_and_exhausts_the_fixed_case() {
    let scenario = "over_replicated_container_across_a_leader_change";
    let legacy = explore(&case(scenario, "Legacy"), &options(4), &[]);
    let Verdict::Caught { path, violation } = &legacy.verdict else {
        panic!("legacy held: {legacy:?}");
    };
    assert_eq!(
        violation.property,
        "no container left below its replication factor"
    );
    assert_eq!(
        replay_path(&case(scenario, "Legacy"), path),
        Err(violation.clone())
    );
    let fixed = explore(&case(scenario, "SeedPatch"), &options(30), &[]);
    assert_eq!(fixed.verdict, Verdict::Held);
    assert!(fixed.exhausted, "{fixed:?}");
}

/// The explorer reaches HDDS-16811's two windows in the quasi-closed container's case: the
/// deletion before the repair compares trees with the first action (the driver's delete),
/// the deletion during a reconciliation of the replica at the shortest judged path that
/// runs one; each reported at the fewest actions that reach it, none beyond the depth.
#[test]
fn explorer_reports_the_depth_each_race_window_is_reached_at() {
    let scenario = "key_deleted_from_a_quasi_closed_container_during_reconcile";
    let windows = catalogue::windows::windows_of(scenario);
    let reached = |depth| explore(&case(scenario, "SeedPatch"), &options(depth), windows).windows;
    let at = |windows: &[(String, Option<usize>)], name: &str| {
        windows
            .iter()
            .find(|(window, _)| window.ends_with(name))
            .unwrap_or_else(|| panic!("no window {name}: {windows:?}"))
            .1
    };
    let (before, during) = (
        "deletion before the repair compares trees",
        "deletion during a reconciliation of the replica",
    );
    let deep = reached(7);
    assert_eq!(at(&deep, before), Some(1), "{deep:?}");
    assert_eq!(at(&deep, during), Some(7), "{deep:?}");
    let shallow = reached(6);
    assert_eq!(at(&shallow, during), None, "{shallow:?}");
}

/// Sleep sets with state caching (Godefroid): a state reached again with fewer actions
/// asleep tries only the actions its earlier arrival left asleep, and is judged once. So
/// with the sleep sets the search judges the states it judges without them, once each,
/// and runs fewer executions (the repair case reaches states again by many orders).
#[test]
fn a_state_reached_again_is_judged_once_and_tries_only_what_slept() {
    let repair = case(REPAIR, "SeedPatch");
    let reduced = explore(&repair, &options(7), &[]);
    let hashed = explore(
        &repair,
        &Options {
            partial_order: false,
            ..options(7)
        },
        &[],
    );
    assert_eq!(reduced.levels.len(), hashed.levels.len());
    let states = |r: &hadoop_ref::check::explore::Report| -> Vec<usize> {
        r.levels.iter().map(|(states, _)| *states).collect()
    };
    assert_eq!(states(&reduced), states(&hashed));
    assert_eq!(reduced.judged, hashed.judged);
    assert!(
        reduced.executions < hashed.executions,
        "{} executions with the sleep sets, {} without",
        reduced.executions,
        hashed.executions
    );
}

/// Only a state whose scripts are done is judged, so a state with more script steps left
/// than actions left to the depth is not run: to depth 2 of the deletions under a leader
/// change (two scripts of one step each), the first action must be a script's and the
/// second the other's; nothing else is run, and the search says it did not see all.
#[test]
fn a_state_that_cannot_finish_its_scripts_within_the_depth_is_not_run() {
    let deletions = case("keys_deleted_while_leadership_moves", "SeedPatch");
    let shallow = explore(&deletions, &options(2), &[]);
    assert_eq!(shallow.verdict, Verdict::Held);
    assert!(shallow.judged >= 1, "{shallow:?}");
    let ran_only_drivers = shallow.transitions == 2 + shallow.judged;
    assert!(ran_only_drivers, "{shallow:?}");
    assert!(
        shallow.beyond_reach > 0 && !shallow.exhausted,
        "{shallow:?}"
    );
    // Two actions short of the scripts' two steps: nothing can be judged, nothing run.
    let none = explore(&deletions, &options(1), &[]);
    assert_eq!((none.transitions, none.judged), (0, 0), "{none:?}");
}

/// The deletions under a leader change start settled: the keys' containers closed and
/// nothing in flight, so every command their exploration orders against the leader's move
/// is the deletion's (a close racing a move is the random cluster's to explore).
#[test]
fn the_deletions_under_a_leader_change_start_with_nothing_in_flight() {
    let built = case("keys_deleted_while_leadership_moves", "SeedPatch")
        .build()
        .unwrap();
    let in_flight = built.cluster.in_flight().unwrap();
    assert!(in_flight.is_empty(), "{in_flight}");
    let leader = built.cluster.leader().unwrap();
    let containers = leader.containers();
    assert!(!containers.is_empty());
    assert!(
        containers
            .iter()
            .all(|c| c.state == hadoop_ref::scm::LifeCycleState::Closed),
        "{containers:?}"
    );
}

/// With and without reduction, the same verdict at the same depth, the reduced search
/// with fewer executions; with the sleep sets or without, the same states by depth.
#[test]
fn reduction_keeps_the_verdict_and_saves_executions() {
    for (scenario, variant, depth) in [
        (
            "over_replicated_container_while_the_deposed_leader_processes",
            "SeedPatch",
            4,
        ),
        (
            "over_replicated_container_across_a_leader_change",
            "Legacy",
            2,
        ),
    ] {
        let explored = case(scenario, variant);
        let reduced = explore(&explored, &options(depth), &[]);
        let plain = Options {
            hashing: false,
            partial_order: false,
            ..options(depth)
        };
        let plain = explore(&explored, &plain, &[]);
        let verdict = |report: &hadoop_ref::check::explore::Report| match &report.verdict {
            Verdict::Caught { path, .. } => Some(path.len()),
            Verdict::Held => None,
            Verdict::Error(error) => panic!("{error}"),
        };
        assert_eq!(verdict(&reduced), verdict(&plain), "{variant}");
        assert!(
            reduced.executions <= plain.executions,
            "{variant}: {reduced:?} {plain:?}"
        );
        let hashed_alone = Options {
            partial_order: false,
            ..options(depth)
        };
        let hashed_alone = explore(&explored, &hashed_alone, &[]);
        assert_eq!(reduced.levels.len(), hashed_alone.levels.len(), "{variant}");
        for (with, without) in reduced.levels.iter().zip(&hashed_alone.levels) {
            assert_eq!(with.0, without.0, "{variant}: states by depth");
        }
    }
}

/// A counterexample reads back as written, and every action's text parses back.
#[test]
fn counterexample_file_round_trips() {
    let actions = vec![
        Action::Driver { script: 1 },
        Action::Heartbeat { dn: 2, scm: 0 },
        Action::Process { dn: 2 },
        Action::Supervise { dn: 0 },
        Action::DeleteContainer { dn: 1 },
        Action::Scan { dn: 1 },
        Action::DeleteBlocks { dn: 2 },
        Action::ReplicationManager { scm: 1 },
        Action::Processors { scm: 0 },
        Action::ScmDeleteBlocks { scm: 1 },
    ];
    for action in &actions {
        assert_eq!(action.to_string().parse::<Action>(), Ok(*action));
    }
    assert!("heartbeat dn0 scm1".parse::<Action>().is_err());
    let dir = tempfile::tempdir().unwrap();
    let file = CounterexampleFile {
        scenario: REPAIR.into(),
        variant: "Legacy".into(),
        actions,
    };
    let path = file.write_in(dir.path()).unwrap();
    assert!(CounterexampleFile::is_one(&path));
    assert_eq!(CounterexampleFile::read(&path).unwrap(), file);
}

/// HDDS-16891: the new leader's division is leader-ready (the RPC layer's leader check
/// open) before its state machine's `notifyLeaderReady` has the services rebuild the
/// pending allocations. A grant in between, with the old leader's second container not
/// yet reported, over-grants without the gate; the seed's gate refuses it (`NotReady`).
/// The explorer's shortest counterexample: the client's first grant, its write and the
/// second grant, the transfer to division-ready, the third grant, both writes, then the
/// notification.
#[test]
fn a_grant_between_division_ready_and_the_rebuild_needs_the_gate() {
    let scenario = "keys_written_while_leadership_moves";
    let client = Action::Driver { script: 0 };
    let ratis = Action::Driver { script: 1 };
    let path = [client, client, client, ratis, client, client, client, ratis];
    let caught = replay_path(&case(scenario, "LegacyRebuildWithoutGate"), &path)
        .expect_err("the grant before the rebuild over-grants");
    assert_eq!(
        caught.property,
        "no datanode granted more containers than it has room for"
    );
    for fixed in ["SeedPatch", "Hardened"] {
        assert_eq!(
            replay_path(&case(scenario, fixed), &path),
            Ok(()),
            "{fixed}"
        );
    }
}

/// Two workers expanding each depth side by side see the states one worker sees, depth
/// by depth, and catch a legacy variant at the same depth.
#[test]
fn two_workers_reach_the_states_one_reaches() {
    let scenario = "over_replicated_container_while_the_deposed_leader_processes";
    let with = |variant: &str, workers: usize| {
        let options = Options {
            workers,
            ..options(7)
        };
        explore(&case(scenario, variant), &options, &[])
    };
    let (one, two) = (with("SeedPatch", 1), with("SeedPatch", 2));
    assert_eq!(one.verdict, Verdict::Held);
    assert_eq!(two.verdict, Verdict::Held);
    let states = |report: &hadoop_ref::check::explore::Report| -> Vec<usize> {
        report.levels.iter().map(|(states, _)| *states).collect()
    };
    assert_eq!(states(&one), states(&two));
    let caught_at = |report: hadoop_ref::check::explore::Report| match report.verdict {
        Verdict::Caught { path, .. } => path.len(),
        other => panic!("legacy not caught: {other:?}"),
    };
    assert_eq!(caught_at(with("Legacy", 1)), caught_at(with("Legacy", 2)));
}

/// Regression (the audit's first finding): a reconciliation's fingerprint left out what
/// its comparison read of a peer. Datanode 3 compared its tree with datanode 1's before
/// or after datanode 1's block deleting service ran, and both states had one fingerprint,
/// so the search expanded one of them for both, though the end of the round adopts the
/// peer's deletions as read. The fingerprint now holds the round's trees.
#[test]
fn a_reconciliation_fingerprint_holds_what_it_read_of_its_peer() {
    let emptied = case(
        "emptied_container_deleted_despite_a_restored_block",
        "SeedPatch",
    );
    let parse =
        |text: &str| -> Vec<Action> { text.split(", ").map(|a| a.parse().unwrap()).collect() };
    let read_after_deletion = parse(
        "driver 1, heartbeat dn1 scm1, process dn1, delete-blocks dn1, driver 2, \
         heartbeat dn3 scm1, process dn3, supervise dn3, supervise dn3",
    );
    let read_before_deletion = parse(
        "driver 1, heartbeat dn1 scm1, process dn1, driver 2, heartbeat dn3 scm1, \
         process dn3, supervise dn3, supervise dn3, delete-blocks dn1",
    );
    let ended = |path: &[Action]| {
        let mut path = path.to_vec();
        path.push(Action::Supervise { dn: 2 });
        fingerprint(&run(&emptied, &path).cluster)
    };
    assert_ne!(ended(&read_after_deletion), ended(&read_before_deletion));
    assert_ne!(
        fingerprint(&run(&emptied, &read_after_deletion).cluster),
        fingerprint(&run(&emptied, &read_before_deletion).cluster)
    );
}

/// A case whose driver keeps a flag outside the cluster: script 1 notes whether the
/// clock has moved, script 2 moves it, script 3 moves it again if the flag is up. Both
/// orders of the first two reach one fingerprint with two futures.
fn case_with_a_flag_outside_the_cluster() -> Result<Explorable, Violation> {
    let setup = |e: hadoop_ref::sim::mini_cluster::ClusterError| Violation {
        seed: "test",
        property: "set-up",
        detail: e.to_string(),
    };
    let cluster = MiniOzoneCluster::builder().scms(1).build().map_err(setup)?;
    let flag = Shared::new(false);
    let start_ms = cluster.clock().now_ms();
    let (noted, read) = (flag.clone(), flag);
    let scripts = vec![
        vec![DriverStep::new("note an unmoved clock", move |cluster| {
            let unmoved = cluster.clock().now_ms() == start_ms;
            noted.with(|flag| *flag = unmoved);
            Ok(())
        })],
        vec![DriverStep::new("move the clock", |cluster| {
            cluster.clock().advance_ms(1_000);
            Ok(())
        })],
        vec![DriverStep::new("move it again if noted", move |cluster| {
            if read.with(|flag| *flag) {
                cluster.clock().advance_ms(1_000);
            }
            Ok(())
        })],
    ];
    Ok(Explorable::new(cluster, scripts, |_| Ok(())))
}

/// The audit catches a fingerprint that leaves out state which decides the future,
/// naming both paths; without it, the search holds.
#[test]
fn the_audit_catches_a_fingerprint_that_leaves_out_state() {
    let flagged = ExploreCase::new(
        "flag_outside_the_cluster",
        "Test",
        Expectation::Holds,
        case_with_a_flag_outside_the_cluster,
    );
    let unaudited = explore(&flagged, &options(3), &[]);
    assert_eq!(unaudited.verdict, Verdict::Held);
    let audited = Options {
        audit_fingerprints: true,
        ..options(3)
    };
    let report = explore(&flagged, &audited, &[]);
    let Verdict::Error(error) = &report.verdict else {
        panic!("the audit let it pass: {report:?}");
    };
    assert!(
        error.contains("a state's fingerprint decides its future"),
        "{error}"
    );
    assert!(error.contains("[driver 1, driver 2]"), "{error}");
    assert!(error.contains("[driver 2, driver 1]"), "{error}");
}

/// The catalogue's fixed cases pass the audit where their fingerprints collide first.
#[test]
fn fixed_cases_pass_the_fingerprint_audit() {
    for (scenario, variant, depth) in [
        (
            "over_replicated_container_across_a_leader_change",
            "SeedPatch",
            5,
        ),
        ("keys_written_while_leadership_moves", "SeedPatch", 3),
    ] {
        let audited = Options {
            audit_fingerprints: true,
            ..options(depth)
        };
        let report = explore(&case(scenario, variant), &audited, &[]);
        assert_eq!(report.verdict, Verdict::Held, "{scenario}: {report:?}");
    }
}
