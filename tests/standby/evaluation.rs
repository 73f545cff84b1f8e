//! The corrupt-replica decision table (`BlockManager.checkReplicaCorrupt`) and the
//! under-construction acceptance table (`BlockManager.isBlockUnderConstruction`), row by
//! row, and what they decide for the replicas a standby sees early.

use hadoop_ref::namenode::evaluation::{
    BlockUcState, CorruptReason, RbwOnCompleteRule, ReplicaRules, ReplicaVerdict, StoredBlockView,
    check_replica_corrupt, is_block_under_construction,
};
use hadoop_ref::namenode::{Block, BlockId, ReplicaState};

use BlockUcState::{Committed, Complete, UnderConstruction, UnderRecovery};
use CorruptReason::{GenstampMismatch, InvalidState, SizeMismatch};
use ReplicaState::{Finalized, Rbw, Rur, Rwr, Temporary};
use ReplicaVerdict::{Corrupt, Ignored, Ok};

const SHIPPED: ReplicaRules = ReplicaRules::TRUNK;
const V2012: ReplicaRules = ReplicaRules::HDFS_2012;
const PRE_2791: ReplicaRules = ReplicaRules {
    rbw_on_complete: RbwOnCompleteRule::AlwaysCorrupt,
    older_gs_on_incomplete: true,
};

fn stored(gs: i64, length: u64, state: BlockUcState) -> StoredBlockView {
    StoredBlockView { gs, length, state }
}

fn reported(gs: i64, length: u64) -> Block {
    Block {
        id: BlockId(1),
        gs,
        length,
    }
}

fn verdict(r: Block, st: ReplicaState, s: StoredBlockView) -> ReplicaVerdict {
    check_replica_corrupt(&r, st, &s, SHIPPED)
}

#[test]
fn finalized_replica_of_a_complete_or_committed_block_must_match_gs_and_length() {
    for state in [Complete, Committed] {
        assert_eq!(
            verdict(reported(5, 10), Finalized, stored(6, 10, state)),
            Corrupt(GenstampMismatch)
        );
        assert_eq!(
            verdict(reported(7, 10), Finalized, stored(6, 10, state)),
            Corrupt(GenstampMismatch)
        );
        assert_eq!(
            verdict(reported(6, 9), Finalized, stored(6, 10, state)),
            Corrupt(SizeMismatch)
        );
        assert_eq!(
            verdict(reported(6, 10), Finalized, stored(6, 10, state)),
            Ok
        );
    }
}

#[test]
fn finalized_replica_of_a_block_being_written_was_fine_at_any_gs_in_2012() {
    for state in [UnderConstruction, UnderRecovery] {
        for gs in [4, 6, 8] {
            let verdict =
                check_replica_corrupt(&reported(gs, 3), Finalized, &stored(6, 10, state), V2012);
            assert_eq!(verdict, Ok);
        }
    }
}

#[test]
fn older_finalized_replica_of_a_block_under_construction_is_corrupt_since_hdfs_5723() {
    assert_eq!(
        verdict(reported(4, 3), Finalized, stored(6, 10, UnderConstruction)),
        Corrupt(GenstampMismatch)
    );
    for gs in [6, 8] {
        assert_eq!(
            verdict(reported(gs, 3), Finalized, stored(6, 10, UnderConstruction)),
            Ok
        );
    }
    // HDFS-5723 covers UNDER_CONSTRUCTION only: a block under recovery still accepts it.
    assert_eq!(
        verdict(reported(4, 3), Finalized, stored(6, 10, UnderRecovery)),
        Ok
    );
}

#[test]
fn rbw_and_rwr_of_an_incomplete_block_were_fine_at_any_gs_in_2012() {
    for state in [UnderConstruction, UnderRecovery, Committed] {
        for st in [Rbw, Rwr] {
            for gs in [4, 6, 8] {
                let verdict =
                    check_replica_corrupt(&reported(gs, 0), st, &stored(6, 10, state), V2012);
                assert_eq!(verdict, Ok);
            }
        }
    }
}

#[test]
fn older_rbw_and_rwr_of_an_incomplete_block_are_corrupt_in_trunk() {
    for state in [UnderConstruction, UnderRecovery, Committed] {
        for st in [Rbw, Rwr] {
            assert_eq!(
                verdict(reported(4, 0), st, stored(6, 10, state)),
                Corrupt(GenstampMismatch)
            );
            for gs in [6, 8] {
                assert_eq!(verdict(reported(gs, 0), st, stored(6, 10, state)), Ok);
            }
        }
    }
}

#[test]
fn rbw_and_rwr_of_a_complete_block_with_another_gs_are_corrupt() {
    for st in [Rbw, Rwr] {
        assert_eq!(
            verdict(reported(5, 0), st, stored(6, 10, Complete)),
            Corrupt(GenstampMismatch)
        );
    }
}

#[test]
fn equal_gs_rbw_of_a_complete_block_is_ignored_since_hdfs_2791() {
    assert_eq!(
        verdict(reported(6, 0), Rbw, stored(6, 10, Complete)),
        Ignored
    );
    assert_eq!(
        check_replica_corrupt(&reported(6, 0), Rbw, &stored(6, 10, Complete), PRE_2791),
        Corrupt(InvalidState),
        "the rule the seed's schedule was written against"
    );
}

#[test]
fn equal_gs_rwr_of_a_complete_block_is_corrupt() {
    assert_eq!(
        verdict(reported(6, 0), Rwr, stored(6, 10, Complete)),
        Corrupt(InvalidState)
    );
}

#[test]
fn rur_and_temporary_are_always_corrupt() {
    for st in [Rur, Temporary] {
        for state in [UnderConstruction, UnderRecovery, Committed, Complete] {
            assert_eq!(
                verdict(reported(6, 10), st, stored(6, 10, state)),
                Corrupt(InvalidState)
            );
        }
    }
}

#[test]
fn rbw_length_is_never_compared() {
    assert_eq!(verdict(reported(6, 999), Rbw, stored(6, 10, Committed)), Ok);
    assert_eq!(
        verdict(reported(6, 999), Rbw, stored(6, 10, Complete)),
        Ignored
    );
}

#[test]
fn under_construction_acceptance_table() {
    let rows = [
        (Finalized, UnderConstruction, true),
        (Finalized, UnderRecovery, true),
        (Finalized, Committed, false),
        (Finalized, Complete, false),
        (Rbw, UnderConstruction, true),
        (Rbw, UnderRecovery, true),
        (Rbw, Committed, true),
        (Rbw, Complete, false),
        (Rwr, Committed, true),
        (Rwr, Complete, false),
        (Rur, UnderConstruction, false),
        (Temporary, UnderConstruction, false),
    ];
    for (st, stored_state, accepted) in rows {
        assert_eq!(
            is_block_under_construction(stored_state, st),
            accepted,
            "{st:?} against {stored_state:?}"
        );
    }
}

#[test]
fn seed_schedule_older_gs_variant_is_corrupt_under_both_rules() {
    // The seed's data-loss chain, older-GS variant: DN1's queued RBW@5 judged against
    // COMPLETE@6 once the standby has replayed the close.
    for rule in [SHIPPED, PRE_2791] {
        assert!(matches!(
            check_replica_corrupt(&reported(5, 0), Rbw, &stored(6, 10, Complete), rule),
            Corrupt(_)
        ));
    }
    // Judged where it belongs, against the block under construction@5, it is healthy.
    assert_eq!(
        verdict(reported(5, 0), Rbw, stored(5, 0, UnderConstruction)),
        Ok
    );
}
