//! The monitors that judge state a component states when it is read (a datanode's node
//! report, an SCM's containers and pending reads, a NameNode's safe-mode consistency
//! check), on hand-written runs: each violated, held, and undecided without its events.

use hadoop_ref::check::monitor::Verdict;
use hadoop_ref::story::Event;

use crate::test_util::monitor::{ev, judge};

const ROOM: &str = "no datanode granted more containers than it has room for";
const RESERVES: &str = "serving leader reserves every granted unwritten container";
const RECOUNT: &str = "safe-mode recount";

fn report(node: &str, remaining: &str, committed: &str) -> Event {
    let fields = [
        ("remaining", remaining),
        ("committed", committed),
        ("spare", "0"),
    ];
    ev(node, "datanode::reports", "node report", &fields)
}

#[test]
fn a_datanode_is_judged_by_its_latest_node_report() {
    assert!(matches!(judge(&[], ROOM), Verdict::Undecided { .. }));
    let fits = [report("dn1", "100", "120"), report("dn1", "100", "80")];
    assert_eq!(judge(&fits, ROOM), Verdict::Ok { judged: 1 }, "it fits now");
    let over = [report("dn1", "100", "80"), report("dn2", "100", "150")];
    assert!(matches!(judge(&over, ROOM), Verdict::Violated(f) if f.step == 2));
}

const SCM: &str = "scm::container_manager";

fn pending_read(pending: &str) -> Event {
    let fields = [("datanode", "dn2"), ("pending", pending)];
    ev(
        "scm1",
        "scm::container_manager::reports",
        "pending allocations read",
        &fields,
    )
}

#[test]
fn a_ready_leader_holds_every_unwritten_container_it_reads() {
    let read = ev(
        "scm1",
        SCM,
        "containers read",
        &[("unwritten", "c1@dn2,c2@dn3")],
    );
    let ready = ev(
        "scm1",
        "scm::container_manager::leadership",
        "leader ready",
        &[],
    );
    let follower = [read.clone(), pending_read("-")];
    assert!(
        matches!(judge(&follower, RESERVES), Verdict::Undecided { .. }),
        "not a ready leader"
    );
    let held = [ready.clone(), read.clone(), pending_read("c1")];
    assert_eq!(judge(&held, RESERVES), Verdict::Ok { judged: 1 });
    let dropped = [ready, read, pending_read("-")];
    assert!(matches!(judge(&dropped, RESERVES), Verdict::Violated(f) if f.step == 3));
}

fn check(total: &str, safe: &str, recount: (&str, &str), corrupt: &str) -> Event {
    let fields = [
        ("block_total", total),
        ("block_safe", safe),
        ("recount_total", recount.0),
        ("recount_safe", recount.1),
        ("corrupt", corrupt),
    ];
    let component = "namenode::namesystem::state";
    ev("nn2", component, "safe mode consistency check", &fields)
}

#[test]
fn safe_mode_counts_agree_with_their_recount_while_nothing_is_flagged() {
    assert!(matches!(judge(&[], RECOUNT), Verdict::Undecided { .. }));
    let flagged = [check("3", "1", ("3", "2"), "1")];
    assert!(
        matches!(judge(&flagged, RECOUNT), Verdict::Undecided { .. }),
        "HDFS's own counters drift once a replica is flagged"
    );
    let agree = [check("3", "2", ("3", "2"), "0")];
    assert_eq!(judge(&agree, RECOUNT), Verdict::Ok { judged: 1 });
    let short = [
        check("3", "2", ("3", "2"), "0"),
        check("3", "1", ("3", "2"), "0"),
    ];
    assert!(matches!(judge(&short, RECOUNT), Verdict::Violated(f) if f.step == 2));
}
