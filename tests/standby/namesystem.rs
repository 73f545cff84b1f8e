//! The HA standby (HDFS-2742) on the seed's scripted reproductions, without a checker:
//! each fixed behaviour holds and each legacy switch shows its defect; edit replay
//! errors; the safe-mode sequences of `TestHASafeMode`.

use hadoop_ref::namenode::DatanodeId;
use hadoop_ref::namenode::evaluation::BlockUcState;
use hadoop_ref::namenode::namesystem::{
    EditOp, FileId, HaState, NamenodeConfig, Namesystem, NamesystemBehavior, ReplayError,
};
use hadoop_ref::namenode::pending_messages::ReportedState;
use hadoop_ref::namenode::{BlockId, ReplicaState};
use hadoop_ref::scenarios::Violation;
use hadoop_ref::scenarios::standby::{
    SEED_KEY, failover_judges_queued_reports_after_catch_up,
    rbw_report_before_close_loses_no_replica,
    replica_reported_between_genstamp_and_block_edits_is_recorded,
    safe_mode_credits_replicas_reported_before_close, superseded_queued_report_is_purged,
};

use crate::test_util::standby::{B, FILE, LEN, block, open_file, received, standby, storage};

const DATANODES: [DatanodeId; 3] = [DatanodeId(1), DatanodeId(2), DatanodeId(3)];

/// The seed's data-loss chain in its older-GS variant: DN1's RBW@5 report and every
/// FINALIZED@6 report arrive before the standby replays the block's allocation, recovery
/// to GS 6 and close.
fn seed_schedule(ns: &Namesystem) {
    ns.full_report(storage(1), &[(block(B, 5, 0), ReplicaState::Rbw)]);
    for dn in 1..=3 {
        received(ns, dn, block(B, 6, LEN));
    }
    let mut edits = open_file(5, 3);
    edits.extend([
        EditOp::SetGenstamp(6),
        EditOp::UpdateBlocks {
            file: FILE,
            blocks: vec![block(B, 6, 0)],
            pipeline: Vec::new(),
        },
        EditOp::Close {
            file: FILE,
            blocks: vec![block(B, 6, LEN)],
        },
    ]);
    assert_eq!(ns.apply_edits(&edits), Ok(edits.len()));
}

#[test]
fn rbw_report_before_allocation_is_judged_against_the_block_under_construction() {
    let ns = standby(NamesystemBehavior::Trunk, 4);
    seed_schedule(&ns);
    let stored = ns.block(B).unwrap();
    assert_eq!(stored.state, BlockUcState::Complete);
    assert_eq!(
        stored.locations.len(),
        3,
        "every FINALIZED replica is a location"
    );
    assert!(ns.corrupt_replicas().is_empty());
    assert_eq!(ns.queue_metrics().count, 0);
    ns.transition_to_active(&[], &DATANODES).unwrap();
    assert!(
        ns.corrupt_replicas().is_empty(),
        "no false corruption after failover"
    );
    assert_eq!(ns.ha_state(), HaState::Active);
}

#[test]
fn whole_message_queue_judges_rbw_report_after_completion() {
    // The first six steps of the seed's data-loss chain (older-GS variant) on the legacy
    // queue: the queued full report is processed after the batch that completed the
    // block, and DN1's healthy replica is marked corrupt, on the standby.
    let ns = standby(NamesystemBehavior::LegacyWholeMessageQueue, 4);
    seed_schedule(&ns);
    let corrupt = ns.corrupt_replicas();
    assert_eq!(
        corrupt
            .get(&B)
            .map(|s| s.iter().copied().collect::<Vec<_>>()),
        Some(vec![storage(1)]),
        "the seed's false corruption"
    );
    assert_eq!(ns.ha_state(), HaState::Standby);
}

/// The 2012 code recounted only the block total after each batch (`setBlockTotal`): a
/// replica reported while its block was under construction is never credited.
#[test]
fn whole_message_queue_recounts_only_the_block_total_after_each_batch() {
    let ns = standby(NamesystemBehavior::LegacyWholeMessageQueue, 0);
    ns.apply_edits(&open_file(1, 1)).unwrap();
    received(&ns, 1, block(B, 1, LEN));
    ns.apply_edits(&[EditOp::Close {
        file: FILE,
        blocks: vec![block(B, 1, LEN)],
    }])
    .unwrap();
    let counts = ns.safe_mode();
    assert_eq!((counts.block_total, counts.block_safe), (1, 0));
    assert_eq!(ns.recount_safe_mode(), (1, 1), "the replica is stored");
}

/// A scripted reproduction as a scenario.
type Scripted = fn(NamesystemBehavior) -> Result<(), Violation>;

/// Each scripted reproduction over the HA pair: trunk's standby holds every invariant,
/// and the legacy switch the schedule was written for breaks the named one.
#[test]
fn scripted_reproductions_hold_on_trunk_and_catch_their_legacy_switch() {
    let scripted: [(&str, Scripted, NamesystemBehavior, &str); 6] = [
        (
            "data-loss chain",
            rbw_report_before_close_loses_no_replica,
            NamesystemBehavior::LegacyWholeMessageQueue,
            "no data-loss chain",
        ),
        (
            "safe-mode credit",
            safe_mode_credits_replicas_reported_before_close,
            NamesystemBehavior::LegacyEarlyDrain,
            "safe-mode recount",
        ),
        (
            "failover catch-up",
            failover_judges_queued_reports_after_catch_up,
            NamesystemBehavior::LegacyHaStateCheck,
            "location completeness",
        ),
        (
            "superseded entry",
            superseded_queued_report_is_purged,
            NamesystemBehavior::LegacyNoStaleEntryPurge,
            "no false corruption",
        ),
        (
            "safe-mode credit, 2012 queue",
            safe_mode_credits_replicas_reported_before_close,
            NamesystemBehavior::LegacyWholeMessageQueue,
            "safe-mode recount",
        ),
        (
            "GS and block edits in different batches",
            replica_reported_between_genstamp_and_block_edits_is_recorded,
            NamesystemBehavior::LegacyNoImpendingGenstamp,
            "location completeness",
        ),
    ];
    for (name, scenario, legacy, property) in scripted {
        assert_eq!(
            scenario(NamesystemBehavior::Trunk),
            Ok(()),
            "{name} on trunk"
        );
        let caught = scenario(legacy).expect_err(name);
        assert_eq!(
            (caught.seed, caught.property),
            (SEED_KEY, property),
            "{name}: {caught}"
        );
    }
}

#[test]
fn each_reproduction_holds_for_the_fixes_it_does_not_target() {
    for behavior in NamesystemBehavior::ALL {
        for (name, scenario, targeted) in [
            (
                "data-loss chain",
                rbw_report_before_close_loses_no_replica as Scripted,
                NamesystemBehavior::LegacyWholeMessageQueue,
            ),
            (
                "safe-mode credit",
                safe_mode_credits_replicas_reported_before_close,
                NamesystemBehavior::LegacyEarlyDrain,
            ),
            (
                "superseded entry",
                superseded_queued_report_is_purged,
                NamesystemBehavior::LegacyNoStaleEntryPurge,
            ),
            (
                "GS and block edits in different batches",
                replica_reported_between_genstamp_and_block_edits_is_recorded,
                NamesystemBehavior::LegacyNoImpendingGenstamp,
            ),
        ] {
            // The failover catch-up schedule's appends also trip the whole-message queue,
            // which judges reports at once; the others isolate their defect.
            if behavior != targeted && behavior != NamesystemBehavior::LegacyWholeMessageQueue {
                assert_eq!(scenario(behavior), Ok(()), "{name} on {behavior:?}");
            }
        }
    }
}

#[test]
fn early_drain_leaves_safe_mode_counts_at_10_of_15() {
    let ns = standby(NamesystemBehavior::LegacyEarlyDrain, 0);
    let mut edits = vec![EditOp::SetGenstamp(1)];
    for f in 0..15u64 {
        edits.push(EditOp::AddFile {
            file: FileId(f),
            replication: 1,
        });
        edits.push(EditOp::AddBlock {
            file: FileId(f),
            penultimate: None,
            last: block(BlockId(f as i64), 1, 0),
        });
    }
    ns.apply_edits(&edits).unwrap();
    for f in 0..15 {
        received(&ns, 1, block(BlockId(f), 1, LEN));
    }
    let closes: Vec<EditOp> = (0..15u64)
        .map(|f| EditOp::Close {
            file: FileId(f),
            blocks: vec![block(BlockId(f as i64), 1, LEN)],
        })
        .collect();
    ns.apply_edits(&closes).unwrap();
    let counts = ns.safe_mode();
    assert_eq!((counts.block_total, counts.block_safe), (15, 0));
    assert_eq!(ns.recount_safe_mode(), (15, 15));
    assert!(
        !ns.leave_safe_mode_if_threshold_reached(),
        "stuck in safe mode"
    );
}

#[test]
fn append_and_delete_adjust_safe_mode_counts() {
    // testAppendWhileInSafeMode: 5/5 → 4/4 after reopen → 0/4 after DN deletions → 0/0.
    let ns = standby(NamesystemBehavior::Trunk, 0);
    let mut edits = vec![
        EditOp::SetGenstamp(1),
        EditOp::AddFile {
            file: FILE,
            replication: 1,
        },
    ];
    let mut penultimate = None;
    for id in 0..5 {
        let last = block(BlockId(id), 1, 0);
        edits.push(EditOp::AddBlock {
            file: FILE,
            penultimate,
            last,
        });
        penultimate = Some(block(BlockId(id), 1, LEN));
    }
    edits.push(EditOp::Close {
        file: FILE,
        blocks: (0..5).map(|id| block(BlockId(id), 1, LEN)).collect(),
    });
    ns.apply_edits(&edits).unwrap();
    for id in 0..5 {
        received(&ns, 1, block(BlockId(id), 1, LEN));
    }
    let count = |ns: &Namesystem| (ns.safe_mode().block_safe, ns.safe_mode().block_total);
    assert_eq!(count(&ns), (5, 5));
    ns.apply_edits(&[EditOp::Append { file: FILE }]).unwrap();
    assert_eq!(count(&ns), (4, 4));
    for id in 0..5 {
        ns.incremental_report(
            storage(1),
            block(BlockId(id), 1, LEN),
            ReportedState::Deleted,
        );
    }
    assert_eq!(count(&ns), (0, 4));
    ns.apply_edits(&[EditOp::Delete { file: FILE }]).unwrap();
    assert_eq!(count(&ns), (0, 0));
}

#[test]
fn replay_refuses_edits_that_do_not_fit() {
    let ns = standby(NamesystemBehavior::Trunk, 0);
    ns.apply_edits(&open_file(2, 1)).unwrap();
    let cases = [
        (
            EditOp::UpdateBlocks {
                file: FILE,
                blocks: vec![block(BlockId(7), 2, 0)],
                pipeline: Vec::new(),
            },
            ReplayError::BlockIdMismatch {
                file: FILE,
                position: 0,
                stored: B,
                edit: BlockId(7),
            },
        ),
        (
            EditOp::UpdateBlocks {
                file: FILE,
                blocks: vec![block(B, 1, 0)],
                pipeline: Vec::new(),
            },
            ReplayError::GenerationStamp {
                block: B,
                stored: 2,
                edit: 1,
            },
        ),
        (
            EditOp::Append { file: FileId(9) },
            ReplayError::UnknownFile(FileId(9)),
        ),
        (
            EditOp::Append { file: FILE },
            ReplayError::CannotReopen(FILE),
        ),
        (
            EditOp::AddFile {
                file: FILE,
                replication: 1,
            },
            ReplayError::FileExists(FILE),
        ),
    ];
    for (op, error) in cases {
        assert_eq!(ns.apply_edits(&[op]), Err((0, error)));
    }
    assert_eq!(ns.block(B).unwrap().block.gs, 2, "nothing changed");
}

#[test]
fn report_for_an_unknown_block_is_handled_not_an_error() {
    let ns = standby(NamesystemBehavior::Trunk, 10);
    received(&ns, 1, block(BlockId(77), 3, LEN));
    ns.full_report(
        storage(2),
        &[(block(BlockId(78), 3, LEN), ReplicaState::Finalized)],
    );
    assert_eq!(
        ns.queue_metrics().count,
        0,
        "unknown and not future: never queued"
    );
    assert!(
        ns.take_deletion_commands(DatanodeId(1)).is_empty(),
        "the standby sends nothing"
    );
}

/// Postmortem: a standby kept every report of a block it did not know, for deletion it
/// never hands out, until failover (about 62 MiB for a million reports). Each storage now
/// keeps at most its bound, and the dropped ones are counted.
#[test]
fn reports_of_unknown_blocks_are_bounded_per_storage() {
    let limit = 10;
    let ns = Namesystem::standby(
        NamenodeConfig {
            unknown_replica_deletions_per_storage_limit: limit,
            ..NamenodeConfig::default()
        },
        100,
    );
    for id in 0..100 {
        received(&ns, 1, block(BlockId(1_000 + id), 1, LEN));
    }
    received(&ns, 2, block(BlockId(5_000), 1, LEN));
    assert_eq!(ns.block_metrics().unknown_replica_deletions_dropped, 90);
    // A report already recorded is not a new entry.
    received(&ns, 1, block(BlockId(1_000), 1, LEN));
    assert_eq!(ns.block_metrics().unknown_replica_deletions_dropped, 90);
}
