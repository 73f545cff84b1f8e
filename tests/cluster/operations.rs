//! `MiniOzoneCluster` operations a tester reaches for: a leader deposed without hearing
//! it (HDDS-17268's stale leader), a lagging SCM installing a snapshot of the compacted
//! log, and each datanode's record of the commands it ran with the term at dispatch.

use hadoop_ref::datanode::dispatcher::CommandOutcome;
use hadoop_ref::hdds::command::CommandKind;
use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;

fn two_scms() -> MiniOzoneCluster {
    MiniOzoneCluster::builder().scms(2).build().unwrap()
}

/// Until it hears, the deposed leader still believes it leads at its old term: it queues
/// commands stamped with that term, and the datanodes, which heard the new leader's
/// term, drop them.
#[test]
fn a_leader_deposed_unheard_keeps_its_term_until_told() {
    let cluster = two_scms();
    let key = cluster.write_key(1).unwrap();
    cluster.run_until_quiescent(10).unwrap();
    cluster.transfer_leadership_unheard(1).unwrap();
    assert_eq!(cluster.leader_index().unwrap(), 1);
    let old = cluster.scm(0).unwrap();
    assert!(old.context().is_leader, "it has not heard");
    let dn = cluster.datanode(0).unwrap().id();
    let stale = CommandKind::DeleteContainer {
        container: key.container,
        force: true,
    };
    let command = old.send_command(dn, stale).unwrap();
    assert_eq!(command.term, 1);
    cluster.run_until_quiescent(10).unwrap();
    assert_eq!(cluster.live_blocks(0, key.container).unwrap(), 1, "fenced");
    assert!(cluster.datanode(0).unwrap().context().stats().dropped_stale > 0);
    cluster.notify_deposed(0).unwrap();
    assert!(!old.context().is_leader);
}

/// The SCMs' round runs every SCM's services by what each believes: a deposed leader that
/// has not heard still sends its block deleting round, stamped with its old term, and the
/// datanodes drop it.
#[test]
fn the_services_of_a_leader_deposed_unheard_still_run() {
    let cluster = two_scms();
    let key = cluster.write_key(2).unwrap();
    cluster.run_until_quiescent(10).unwrap();
    cluster.delete_key(&key).unwrap();
    cluster.transfer_leadership_unheard(1).unwrap();
    cluster.tick_scms().unwrap();
    let old = cluster.scm(0).unwrap();
    let dn = cluster.datanode(0).unwrap().id();
    let queued = old.queued_commands(dn);
    assert!(
        queued
            .iter()
            .any(|c| c.term == 1 && matches!(c.kind, CommandKind::DeleteBlocks { .. })),
        "{queued:?}"
    );
    cluster.run_until_quiescent(20).unwrap();
    assert_eq!(
        cluster.live_blocks(0, key.container).unwrap(),
        0,
        "the new leader's"
    );
    let ran = cluster.commands_run(0).unwrap();
    assert!(
        ran.iter()
            .filter(|r| matches!(r.dispatched.command.kind, CommandKind::DeleteBlocks { .. }))
            .all(|r| r.dispatched.command.term == 2),
        "{ran:?}"
    );
}

/// Each command a datanode took is recorded with its term, the datanode's term at
/// dispatch and how it ended.
#[test]
fn each_datanode_records_the_commands_it_ran_with_the_term_at_dispatch() {
    let cluster = two_scms();
    let key = cluster.write_key(2).unwrap();
    cluster.run_until_quiescent(10).unwrap();
    let history = cluster.commands_run(1).unwrap();
    let close = history
        .iter()
        .find(|r| matches!(r.dispatched.command.kind, CommandKind::CloseContainer { container, .. } if container == key.container))
        .expect("the close was run");
    assert_eq!(close.dispatched.command.term, 1);
    assert_eq!(close.dispatched.term_at_dispatch, 1);
    assert_eq!(close.outcome, CommandOutcome::Executed);
    assert!(cluster.commands_run(9).is_err(), "no such datanode");
}

/// A follower that lags behind a compacted log installs the snapshot and then knows every
/// container the leader created.
#[test]
fn a_lagging_scm_installs_the_snapshot_of_the_compacted_log() {
    let cluster = MiniOzoneCluster::builder().scms(3).build().unwrap();
    let keys: Vec<_> = (0..3).map(|_| cluster.write_key(1).unwrap()).collect();
    let follower = cluster.scm(2).unwrap();
    assert!(follower.container(keys[2].container).is_none(), "it lags");
    cluster.compact_log();
    let applied = cluster.catch_up_scm(2).unwrap();
    assert_eq!(
        applied,
        cluster.catch_up_scm(0).unwrap(),
        "as far as the leader"
    );
    for key in &keys {
        assert!(
            follower.container(key.container).is_some(),
            "{}",
            key.container
        );
    }
}

/// The liveness property every cluster case ends with fails when the cluster cannot
/// settle, and says what never happened: here a delete transaction a cut-off datanode
/// never acknowledged.
#[test]
fn a_cluster_that_cannot_settle_says_what_never_happened() {
    use hadoop_ref::scenarios::cluster::invariants::cluster_settles_after_healing;

    let cluster = two_scms();
    let key = cluster.write_key(2).unwrap();
    cluster.run_until_quiescent(10).unwrap();
    assert!(cluster.in_flight().unwrap().is_empty());
    for scm in 0..2 {
        cluster.set_link(0, scm, false).unwrap();
    }
    let tx = cluster.delete_key(&key).unwrap();
    let violation = cluster_settles_after_healing(&cluster, 10).unwrap_err();
    let text = violation.to_string();
    assert!(
        text.contains("the cluster settles once the faults heal"),
        "{text}"
    );
    assert!(
        text.contains(&format!("delete transactions {tx:?}")),
        "{text}"
    );
    assert_eq!(cluster.in_flight().unwrap().delete_transactions, tx);
    cluster.heal_all();
    cluster_settles_after_healing(&cluster, 50).unwrap();
    assert!(cluster.in_flight().unwrap().is_empty());
}
