//! The HA pair's plumbing (HDFS-2742): the shared edit log's fencing and bounds, the
//! tailer's batches, stop and errors, the production tailer thread, the NameNode's
//! transitions, and the namesystem's active-side duties (replication checks, safe-mode
//! exit, datanode removal).

use std::time::Duration;

use hadoop_ref::namenode::DatanodeId;
use hadoop_ref::namenode::edit_log::{EditLogError, NameNodeId, SharedEditLog};
use hadoop_ref::namenode::edit_tailer::{EditLogTailer, TailerThread};
use hadoop_ref::namenode::ha::{DatanodeProtocol, NameNode};
use hadoop_ref::namenode::namesystem::{
    EditOp, HaState, NamenodeConfig, Namesystem, NamesystemApi, ReplayError, excess_order,
};
use hadoop_ref::sync::{Arc, thread};

use crate::test_util::standby::{
    B, FILE, LEN, block, close_file, create_and_close, open_file, received, storage,
};

/// Datanode `dn` reports `B@1` FINALIZED to `nn`.
fn finalized(nn: &dyn NamesystemApi, dn: u64) {
    received(nn, dn, block(B, 1, LEN));
}

/// A log in which an active created `FILE`, had DN1's replica of `B@1` reported and
/// closed the file.
fn logged_file() -> Arc<SharedEditLog> {
    let log = Arc::new(SharedEditLog::new(64));
    let writer = Namesystem::active(NamenodeConfig::default(), 0);
    log.fence(NameNodeId(0));
    let apply = |ops: &[EditOp]| writer.apply_edits(ops);
    log.log_edits(NameNodeId(0), &open_file(1, 1), apply)
        .unwrap();
    finalized(&writer, 1);
    log.log_edits(NameNodeId(0), &[close_file()], apply)
        .unwrap();
    log
}

/// The active `nn` creates `FILE` with `replication`, the datanodes `finalized_on` report
/// `B@1` FINALIZED to it, and it closes the file.
fn write_file(nn: &NameNode, replication: usize, finalized_on: &[u64]) {
    nn.log_edits(&open_file(1, replication)).unwrap();
    for dn in finalized_on {
        finalized(nn.namesystem().as_ref(), *dn);
    }
    nn.log_edits(&[close_file()]).unwrap();
}

fn pair(max_txns_per_lock: usize) -> (Arc<SharedEditLog>, NameNode, NameNode) {
    let log = Arc::new(SharedEditLog::new(64));
    let config = NamenodeConfig::default();
    let nn0 = NameNode::active(
        NameNodeId(0),
        config.clone(),
        0,
        Arc::clone(&log),
        max_txns_per_lock,
    );
    let nn1 = NameNode::standby(
        NameNodeId(1),
        config,
        0,
        Arc::clone(&log),
        max_txns_per_lock,
    );
    (log, nn0, nn1)
}

#[test]
fn fenced_writer_is_refused_and_nothing_is_applied() {
    let log = SharedEditLog::new(8);
    let ns = Namesystem::active(NamenodeConfig::default(), 0);
    log.fence(NameNodeId(1));
    let refused = log.log_edits(NameNodeId(0), &[EditOp::SetGenstamp(5)], |ops| {
        ns.apply_edits(ops)
    });
    assert_eq!(
        refused,
        Err(EditLogError::Fenced {
            writer: NameNodeId(0),
            holder: Some(NameNodeId(1)),
        })
    );
    assert_eq!(ns.generation_stamp(), 0, "a refused append applies nothing");
    assert_eq!(log.end(), 0);
}

#[test]
fn full_log_refuses_before_applying() {
    let log = SharedEditLog::new(2);
    let ns = Namesystem::active(NamenodeConfig::default(), 0);
    log.fence(NameNodeId(0));
    let ops = [
        EditOp::SetGenstamp(1),
        EditOp::SetGenstamp(2),
        EditOp::SetGenstamp(3),
    ];
    assert_eq!(
        log.log_edits(NameNodeId(0), &ops, |ops| ns.apply_edits(ops)),
        Err(EditLogError::Full { capacity: 2 })
    );
    assert_eq!(ns.generation_stamp(), 0);
}

#[test]
fn batch_refused_by_the_writer_is_neither_applied_nor_logged() {
    let log = SharedEditLog::new(8);
    let ns = Namesystem::active(NamenodeConfig::default(), 0);
    log.fence(NameNodeId(0));
    let before = ns.view();
    let ops = [EditOp::SetGenstamp(1), EditOp::Append { file: FILE }];
    assert_eq!(
        log.log_edits(NameNodeId(0), &ops, |ops| ns.apply_edits(ops)),
        Err(EditLogError::Replay {
            index: 1,
            error: ReplayError::UnknownFile(FILE),
        })
    );
    assert_eq!(log.read_from(0, 10), vec![]);
    assert_eq!(ns.view(), before, "the first edit was not applied either");
}

#[test]
fn tailer_applies_capped_batches_in_order_and_stops_between_them() {
    let (_log, nn0, nn1) = pair(2);
    write_file(&nn0, 1, &[1]);
    assert_eq!(nn1.tailer().tail_once(), Ok(2));
    assert_eq!(nn1.tailer().position(), 2);
    assert!(
        nn1.namesystem().block(B).is_none(),
        "the block edit is next"
    );
    assert_eq!(nn1.tailer().stop(), 2);
    assert_eq!(
        nn1.tailer().tail_once(),
        Ok(0),
        "a stopped tailer applies nothing"
    );
    nn1.tailer().resume();
    assert_eq!(nn1.tailer().tail_once(), Ok(2));
    assert_eq!(nn1.tailer().tail_once(), Ok(0), "caught up");
    assert!(nn1.namesystem().block(B).is_some());
}

/// A standby whose namespace already holds the file: the log's AddFile edit cannot apply.
fn standby_holding_the_file() -> Arc<Namesystem> {
    let standby = Arc::new(Namesystem::standby(NamenodeConfig::default(), 0));
    standby
        .apply_edits(&[EditOp::AddFile {
            file: FILE,
            replication: 1,
        }])
        .unwrap();
    standby
}

#[test]
fn tailer_stays_at_the_start_of_a_batch_that_does_not_fit() {
    let log = logged_file();
    let standby = standby_holding_the_file();
    let before = standby.view();
    let tailer = EditLogTailer::new(Arc::clone(&log), standby.clone(), 0, 10);
    let error = tailer.tail_once().expect_err("AddFile does not fit");
    assert_eq!(
        error.position, 1,
        "the refused edit follows the genstamp edit"
    );
    assert_eq!(error.error, ReplayError::FileExists(FILE));
    assert_eq!(
        tailer.position(),
        0,
        "the batch is retried whole, nothing skipped"
    );
    assert_eq!(standby.view(), before, "nothing of the batch was applied");
}

#[test]
fn tailer_thread_tails_until_shut_down() {
    let log = logged_file();
    let standby = Arc::new(Namesystem::standby(NamenodeConfig::default(), 0));
    let tailer = Arc::new(EditLogTailer::new(log, standby.clone(), 0, 1));
    let mut driver = TailerThread::start(Arc::clone(&tailer), Duration::from_millis(1));
    // Full batches are followed at once by the next, so the thread reaches the end; the
    // test waits for that state, with a bound on the polls, never for a time.
    for _ in 0..10_000 {
        if tailer.position() == 4 {
            break;
        }
        thread::sleep(Duration::from_millis(1));
    }
    driver.shutdown();
    assert_eq!(tailer.position(), 4);
    assert!(standby.block(B).is_some());
    driver.shutdown();
}

#[test]
fn tailer_thread_reports_a_refused_batch_and_keeps_running() {
    let log = logged_file();
    let standby = standby_holding_the_file();
    let tailer = Arc::new(EditLogTailer::new(log, standby.clone(), 0, 10));
    let mut driver = TailerThread::start(Arc::clone(&tailer), Duration::from_millis(1));
    // Two refusals mean the thread survived the first and retried; the test waits for
    // that state with a bound on the polls, never for a time.
    for _ in 0..10_000 {
        if driver.failed_batches() >= 2 {
            break;
        }
        thread::sleep(Duration::from_millis(1));
    }
    assert!(
        driver.failed_batches() >= 2,
        "the thread retries after a refusal"
    );
    assert_eq!(tailer.position(), 0, "the refused batch is not skipped");
    driver.shutdown();
}

#[test]
fn failover_fences_catches_up_and_drains_then_old_active_tails_from_its_last_edit() {
    let (log, nn0, nn1) = pair(100);
    write_file(&nn0, 1, &[1]);
    finalized(nn1.namesystem().as_ref(), 1);
    assert_eq!(
        nn1.namesystem().queue_metrics().count,
        1,
        "future at the standby"
    );
    nn1.transition_to_active(&[DatanodeId(1)]).unwrap();
    nn0.transition_to_standby();
    assert_eq!(log.writer(), Some(NameNodeId(1)));
    assert_eq!(nn1.namesystem().queue_metrics().count, 0);
    assert!(
        nn1.namesystem()
            .block(B)
            .unwrap()
            .locations
            .contains(&storage(1))
    );
    assert!(matches!(
        nn0.log_edits(&[EditOp::SetGenstamp(9)]),
        Err(EditLogError::Fenced { .. })
    ));
    // The new active logs; the old one, now standby, tails exactly the new edits.
    nn1.log_edits(&[EditOp::SetReplication {
        file: FILE,
        replication: 2,
    }])
    .unwrap();
    assert_eq!(nn0.tailer().tail_once(), Ok(1));
    assert_eq!(nn0.namesystem().ha_state(), HaState::Standby);
}

#[test]
fn standby_answers_heartbeats_without_commands() {
    let (_log, nn0, nn1) = pair(100);
    write_file(&nn0, 1, &[1]);
    finalized(nn0.namesystem().as_ref(), 2);
    let response = nn1.heartbeat(DatanodeId(2));
    assert_eq!(response.ha_state, HaState::Standby);
    assert!(response.deletions.is_empty());
}

#[test]
fn lowering_replication_on_the_active_deletes_the_excess_replicas_the_seed_ranks_first() {
    let (_log, nn0, _nn1) = pair(100);
    write_file(&nn0, 3, &[1, 2, 3]);
    nn0.log_edits(&[EditOp::SetReplication {
        file: FILE,
        replication: 1,
    }])
    .unwrap();
    let kept = (1..=3)
        .max_by_key(|dn| excess_order(0, B, storage(*dn)))
        .unwrap();
    for dn in 1..=3 {
        let expected = if dn == kept {
            vec![]
        } else {
            vec![(storage(dn), block(B, 1, LEN))]
        };
        assert_eq!(nn0.heartbeat(DatanodeId(dn)).deletions, expected, "dn{dn}");
    }
    assert_eq!(nn0.namesystem().block_metrics().deletions_scheduled, 2);
}

#[test]
fn safe_mode_is_left_at_the_threshold_and_holds_deletions_until_then() {
    // With the default 99.9%, floor(1 × 0.999) = 0 blocks would do; ask for all.
    let config = NamenodeConfig {
        safemode_threshold_per_mille: 1000,
        ..NamenodeConfig::default()
    };
    let ns = Namesystem::standby(config, 0);
    ns.apply_edits(&create_and_close(1)).unwrap();
    assert!(!ns.leave_safe_mode_if_threshold_reached(), "0 of 1 safe");
    finalized(&ns, 1);
    finalized(&ns, 2);
    ns.transition_to_active(&[], &[]).unwrap();
    assert!(ns.safe_mode().on, "still in safe mode as active");
    assert!(
        (1..=2).all(|dn| ns.take_deletion_commands(DatanodeId(dn)).is_empty()),
        "held back"
    );
    assert!(ns.leave_safe_mode_if_threshold_reached());
    let doomed = (1..=2)
        .min_by_key(|dn| excess_order(0, B, storage(*dn)))
        .unwrap();
    assert_eq!(
        ns.take_deletion_commands(DatanodeId(doomed)),
        vec![(storage(doomed), block(B, 1, LEN))],
        "the excess replica goes once safe mode is off"
    );
}

#[test]
fn threshold_is_the_floor_of_total_times_threshold() {
    use hadoop_ref::namenode::namesystem::SafeModeCounts;
    let counts = SafeModeCounts {
        on: true,
        block_total: 15,
        block_safe: 14,
    };
    assert_eq!(counts.block_threshold(999), 14);
    assert!(counts.threshold_reached(999));
    assert!(!counts.threshold_reached(1000));
    assert_eq!(counts.block_threshold(u64::MAX), 15, "capped at 100%");
}

#[test]
fn removed_datanode_loses_locations_and_queued_reports() {
    let ns = Namesystem::standby(NamenodeConfig::default(), 0);
    ns.apply_edits(&create_and_close(1)).unwrap();
    finalized(&ns, 1);
    // A report of a future GS from the same datanode waits in the queue.
    received(&ns, 1, block(B, 7, LEN));
    assert_eq!(ns.queue_metrics().count, 1);
    assert_eq!(ns.remove_datanode(DatanodeId(1)), 1);
    assert_eq!(ns.queue_metrics().count, 0);
    assert!(ns.block(B).unwrap().locations.is_empty());
    assert_eq!(ns.recount_safe_mode(), (1, 0));
    assert_eq!(
        ns.safe_mode().block_safe,
        0,
        "the count follows the removal"
    );
}
