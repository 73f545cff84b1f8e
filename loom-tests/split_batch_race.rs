//! Loom, HDFS-14941: DN1's RECEIVED report of a new block races the standby's tailer
//! replaying, one edit a batch, the block's `OP_SET_GENSTAMP`, the file's creation and the
//! block's `OP_ADD_BLOCK`; the active then closes the file and failover catches up. Two
//! spawned threads. Trunk records DN1's replica in every interleaving (the GS edit only
//! records an impending stamp); without HDFS-14941 the report that lands between the GS
//! edit and the block edit is dropped.

use crate::support::{assert_caught, assert_holds, explore};
use hadoop_ref::namenode::namesystem::NamesystemBehavior;
use hadoop_ref::scenarios::standby::{
    SEED_KEY, replica_reported_between_split_batches_is_recorded,
};

#[test]
fn replica_reported_between_split_batches_is_always_recorded() {
    let exploration = explore("split-batch/Trunk", || {
        replica_reported_between_split_batches_is_recorded(NamesystemBehavior::Trunk)
    });
    assert_holds(&exploration);
}

#[test]
fn without_impending_genstamp_a_replica_reported_between_batches_is_dropped() {
    let exploration = explore("split-batch/LegacyNoImpendingGenstamp", || {
        replica_reported_between_split_batches_is_recorded(
            NamesystemBehavior::LegacyNoImpendingGenstamp,
        )
    });
    assert_caught(&exploration, SEED_KEY);
}
