//! The monitors of a replica's data, the standby's end state and the cluster's replication
//! factor, on hand-written runs: each violated, held, and undecided without its events.

use hadoop_ref::check::monitor::Verdict;
use hadoop_ref::story::Event;

use crate::test_util::monitor::{ev, judge};

fn violated_at(verdict: &Verdict) -> Option<usize> {
    match verdict {
        Verdict::Violated(finding) => Some(finding.step),
        _ => None,
    }
}

const LIVE: &str = "no block of a live key lost";
const CHECKSUM: &str = "data checksum in memory, persisted and in the tree file agree (HDDS-16808)";
const LOCATIONS: &str = "location completeness";
const QUEUE: &str = "the standby's queue empties";
const FACTOR: &str = "no container left below its replication factor";

fn commit(partial: bool) -> Event {
    let mut fields = vec![("container", "c1"), ("block", "1"), ("decision", "commit")];
    if partial {
        fields.push(("partial", "true"));
    }
    ev(
        "dn1",
        "datanode::container::reconcile::commit",
        "commit decided",
        &fields,
    )
}

#[test]
fn a_partial_commit_after_a_whole_one_loses_a_live_block() {
    assert!(matches!(judge(&[], LIVE), Verdict::Undecided { .. }));
    assert_eq!(
        judge(&[commit(true), commit(false)], LIVE),
        Verdict::Ok { judged: 1 }
    );
    assert_eq!(
        violated_at(&judge(&[commit(false), commit(true)], LIVE)),
        Some(2)
    );
    let deleted = ev(
        "dn1",
        "datanode::container::deletion",
        "block deleted",
        &[("container", "c1"), ("block", "1"), ("tx", "1")],
    );
    let then_deleted = [commit(false), commit(true), deleted];
    assert_eq!(judge(&then_deleted, LIVE), Verdict::Ok { judged: 1 });
}

fn tree(root: &str) -> Event {
    let fields = [
        ("container", "c1"),
        ("by", "reconciliation"),
        ("root", root),
    ];
    ev(
        "dn1",
        "datanode::container::checksum_tree",
        "tree written",
        &fields,
    )
}

fn refreshed(to: &str) -> Event {
    let fields = [("container", "c1"), ("from", "none"), ("to", to)];
    ev(
        "dn1",
        "datanode::container::replica",
        "checksum refreshed",
        &fields,
    )
}

#[test]
fn the_data_checksum_ends_on_the_last_tree_written() {
    assert!(matches!(
        judge(&[tree("aa")], CHECKSUM),
        Verdict::Undecided { .. }
    ));
    let in_order = [tree("aa"), refreshed("aa"), tree("bb"), refreshed("bb")];
    assert_eq!(judge(&in_order, CHECKSUM), Verdict::Ok { judged: 1 });
    let crossed = [tree("aa"), tree("bb"), refreshed("bb"), refreshed("aa")];
    assert_eq!(violated_at(&judge(&crossed, CHECKSUM)), Some(4));
}

const NN: &str = "namenode::namesystem::reports";

fn finalized(verdict: &str) -> Event {
    let fields = [
        ("datanode", "dn1"),
        ("block", "blk_100"),
        ("gs", "1"),
        ("state", "FINALIZED"),
        ("report", "incremental"),
        ("verdict", verdict),
    ];
    ev("nn1", NN, "report processed", &fields)
}

fn completed() -> Event {
    let fields = [
        ("block", "blk_100"),
        ("gs", "1"),
        ("how", "forced by replay"),
    ];
    ev(
        "nn1",
        "namenode::namesystem::completion",
        "block completed",
        &fields,
    )
}

fn to_active() -> Event {
    let fields = [("stale_datanodes", "1")];
    ev(
        "nn1",
        "namenode::namesystem::failover",
        "transition to active",
        &fields,
    )
}

#[test]
fn a_replica_reported_before_its_block_is_known_becomes_a_location() {
    assert!(matches!(judge(&[], LOCATIONS), Verdict::Undecided { .. }));
    let stored = [completed(), finalized("ok"), to_active()];
    assert_eq!(judge(&stored, LOCATIONS), Verdict::Ok { judged: 1 });
    let dropped = [finalized("unknown block"), completed(), to_active()];
    assert_eq!(violated_at(&judge(&dropped, LOCATIONS)), Some(2));
    let still_standby = [finalized("unknown block"), completed()];
    assert!(matches!(
        judge(&still_standby, LOCATIONS),
        Verdict::Undecided { .. }
    ));
    let reported_again = [
        finalized("unknown block"),
        completed(),
        finalized("ok"),
        to_active(),
    ];
    assert_eq!(judge(&reported_again, LOCATIONS), Verdict::Ok { judged: 1 });
}

fn quiescent() -> Event {
    let fields = [("why", "heal phase over")];
    ev(
        "driver",
        "scenarios::standby::leak",
        "cluster quiescent",
        &fields,
    )
}

fn queue_read() -> Event {
    let fields = [("queued", "1"), ("blocks", "blk_7")];
    ev(
        "nn2",
        "namenode::namesystem::state",
        "pending messages read",
        &fields,
    )
}

#[test]
fn the_standby_queue_is_empty_once_the_run_is_quiescent() {
    assert!(matches!(
        judge(&[queue_read()], QUEUE),
        Verdict::Undecided { .. }
    ));
    let drained = [queue_read(), quiescent()];
    assert_eq!(judge(&drained, QUEUE), Verdict::Ok { judged: 1 });
    let leaked = [queue_read(), quiescent(), queue_read()];
    assert_eq!(violated_at(&judge(&leaked, QUEUE)), Some(3));
}

const SCM: &str = "scm::container_manager";

fn created(dn: &str) -> Event {
    ev(
        dn,
        "datanode::container::replica_set",
        "container created",
        &[("container", "c1")],
    )
}

fn force_deleted(dn: &str) -> Event {
    let fields = [
        (
            "command",
            "DeleteContainer { container: ContainerId(1), force: true }",
        ),
        ("term", "1"),
        ("outcome", "Executed"),
    ];
    ev(dn, "datanode::dispatcher", "command run", &fields)
}

#[test]
fn a_container_keeps_its_pipeline_replicas_once_the_cluster_is_quiescent() {
    let reserved = ev(
        "scm1",
        SCM,
        "slots reserved",
        &[("container", "c1"), ("datanodes", "dn1,dn2,dn3")],
    );
    let report = ev(
        "scm1",
        "scm::container_manager::reports",
        "container report processed",
        &[
            ("datanode", "dn4"),
            ("confirmed", "c1"),
            ("pending_removed", "-"),
        ],
    );
    let quiescent = ev(
        "driver",
        "scenarios::cluster::over_replicated",
        "cluster quiescent",
        &[],
    );
    let replicas = [
        reserved,
        created("dn1"),
        created("dn2"),
        created("dn3"),
        report,
    ];
    assert!(matches!(
        judge(&replicas, FACTOR),
        Verdict::Undecided { .. }
    ));
    let mut one_excess = replicas.to_vec();
    one_excess.extend([force_deleted("dn4"), quiescent.clone()]);
    assert_eq!(judge(&one_excess, FACTOR), Verdict::Ok { judged: 1 });
    let mut double = replicas.to_vec();
    double.extend([force_deleted("dn4"), force_deleted("dn2"), quiescent]);
    assert_eq!(violated_at(&judge(&double, FACTOR)), Some(8));
}
