//! Shuttle, where the Ozone seeds meet: the `MiniOzoneCluster` scenarios of the catalogue
//! under random and PCT schedules: deletions while SCM leadership moves; a deposed
//! leader's force delete reaching a replica under repair, stepped and through the whole
//! cluster; keys granted across a leader
//! change, judged by the datanodes' own reports; a replicate's target keeping its room
//! while the copy is made, and across a leader change (HDDS-14924); a re-elected leader
//! sending a copy again (HDDS-8473); deletions across a transfer, a restart
//! and reconciliation; HDDS-16811's trigger on a QUASI_CLOSED container; an
//! over-replicated container's excess deleted by two leaders across a failover
//! (HDDS-16449); a restored block in a DELETING container (HDDS-14416); and the random
//! cluster with seeded faults. Fixed variants hold,
//! legacy ones are caught.

use crate::support;

use crate::support::{PCT3, RANDOM};
use hadoop_ref::check::catalogue;
use hadoop_ref::scenarios::cluster::SEED_KEY;

shuttle_tests! {
    cases: catalogue::cluster(), seed_key: SEED_KEY;
    deletions_survive_leadership_moves_random: "keys_deleted_while_leadership_moves" / "SeedPatch", RANDOM;
    deletions_survive_leadership_moves_pct: "keys_deleted_while_leadership_moves" / "SeedPatch", PCT3;
    deletions_survive_leadership_moves_when_hardened_random: "keys_deleted_while_leadership_moves" / "Hardened", RANDOM;
    stale_force_delete_fenced_during_repair_random: "stale_force_delete_during_repair" / "SeedPatch", RANDOM;
    stale_force_delete_fenced_during_repair_pct: "stale_force_delete_during_repair" / "SeedPatch", PCT3;
    stale_force_delete_fenced_during_repair_when_hardened_random: "stale_force_delete_during_repair" / "Hardened", RANDOM;
    stale_force_delete_removes_the_repaired_replica_before_the_patch_random: "stale_force_delete_during_repair" / "Legacy", RANDOM;
    stale_force_delete_removes_the_repaired_replica_when_term_discarded_random: "stale_force_delete_during_repair" / "LegacyIgnoreHeartbeatTermBeforeInit", RANDOM;
    stale_force_delete_removes_the_repaired_replica_when_term_discarded_pct: "stale_force_delete_during_repair" / "LegacyIgnoreHeartbeatTermBeforeInit", PCT3;
    deposed_leaders_force_delete_fenced_through_the_cluster_random: "deposed_leaders_force_delete_through_the_cluster" / "SeedPatch", RANDOM;
    deposed_leaders_force_delete_fenced_through_the_cluster_pct: "deposed_leaders_force_delete_through_the_cluster" / "SeedPatch", PCT3;
    deposed_leaders_force_delete_fenced_through_the_cluster_when_hardened_random: "deposed_leaders_force_delete_through_the_cluster" / "Hardened", RANDOM;
    deposed_leaders_force_delete_removes_the_replica_before_the_patch_random: "deposed_leaders_force_delete_through_the_cluster" / "Legacy", RANDOM;
    deposed_leaders_force_delete_removes_the_replica_when_term_discarded_random: "deposed_leaders_force_delete_through_the_cluster" / "LegacyIgnoreHeartbeatTermBeforeInit", RANDOM;
    deposed_leaders_force_delete_removes_the_replica_when_term_discarded_pct: "deposed_leaders_force_delete_through_the_cluster" / "LegacyIgnoreHeartbeatTermBeforeInit", PCT3;
    deposed_leaders_force_delete_removes_the_replica_without_a_term_fence_random: "deposed_leaders_force_delete_through_the_cluster" / "LegacyNoTermFence", RANDOM;
    deposed_leaders_force_delete_removes_the_replica_without_a_heartbeat_term_random: "deposed_leaders_force_delete_through_the_cluster" / "LegacyTermFromCommandsOnly", RANDOM;
    excess_deleted_once_across_a_failover_random: "over_replicated_container_across_a_leader_change" / "SeedPatch", RANDOM;
    excess_deleted_once_across_a_failover_pct: "over_replicated_container_across_a_leader_change" / "SeedPatch", PCT3;
    excess_deleted_once_across_a_failover_when_hardened_random: "over_replicated_container_across_a_leader_change" / "Hardened", RANDOM;
    excess_delete_only_repeated_with_the_sorted_order_random: "over_replicated_container_across_a_leader_change" / "LegacyTermFence", RANDOM;
    excess_delete_only_repeated_with_the_sorted_order_pct: "over_replicated_container_across_a_leader_change" / "LegacyTermFence", PCT3;
    stale_excess_delete_dropped_with_each_scms_order_random: "over_replicated_container_across_a_leader_change" / "LegacyExcessOrder", RANDOM;
    stale_excess_delete_dropped_with_each_scms_order_pct: "over_replicated_container_across_a_leader_change" / "LegacyExcessOrder", PCT3;
    double_delete_leaves_the_container_below_its_factor_random: "over_replicated_container_across_a_leader_change" / "Legacy", RANDOM;
    double_delete_leaves_the_container_below_its_factor_pct: "over_replicated_container_across_a_leader_change" / "Legacy", PCT3;
    deposed_processor_deletes_once_with_the_fences_random: "over_replicated_container_while_the_deposed_leader_processes" / "SeedPatch", RANDOM;
    deposed_processor_deletes_once_with_the_fences_pct: "over_replicated_container_while_the_deposed_leader_processes" / "SeedPatch", PCT3;
    deposed_processor_deletes_once_when_hardened_random: "over_replicated_container_while_the_deposed_leader_processes" / "Hardened", RANDOM;
    deposed_processor_delete_only_repeated_with_the_sorted_order_random: "over_replicated_container_while_the_deposed_leader_processes" / "LegacyTermFence", RANDOM;
    deposed_processor_double_delete_with_each_scms_order_random: "over_replicated_container_while_the_deposed_leader_processes" / "LegacyExcessOrder", RANDOM;
    deposed_processor_double_delete_with_each_scms_order_pct: "over_replicated_container_while_the_deposed_leader_processes" / "LegacyExcessOrder", PCT3;
    deposed_processor_double_delete_random: "over_replicated_container_while_the_deposed_leader_processes" / "Legacy", RANDOM;
    deposed_processor_double_delete_pct: "over_replicated_container_while_the_deposed_leader_processes" / "Legacy", PCT3;
    replication_target_keeps_its_room_random: "replica_copied_while_keys_are_granted" / "Hardened", RANDOM;
    replication_target_keeps_its_room_pct: "replica_copied_while_keys_are_granted" / "Hardened", PCT3;
    replication_target_keeps_its_room_with_the_seeds_rebuild_random: "replica_copied_while_keys_are_granted" / "HardenedWithoutTargetRebuild", RANDOM;
    replication_target_granted_past_its_room_without_its_allocation_random: "replica_copied_while_keys_are_granted" / "LegacyUnaccounted", RANDOM;
    replication_target_granted_past_its_room_without_its_allocation_pct: "replica_copied_while_keys_are_granted" / "LegacyUnaccounted", PCT3;
    replication_target_keeps_its_room_across_a_leader_change_random: "replica_copied_while_leadership_moves" / "Hardened", RANDOM;
    replication_target_keeps_its_room_across_a_leader_change_pct: "replica_copied_while_leadership_moves" / "Hardened", PCT3;
    replication_target_forgotten_by_the_new_leader_random: "replica_copied_while_leadership_moves" / "HardenedWithoutTargetRebuild", RANDOM;
    replication_target_forgotten_by_the_new_leader_pct: "replica_copied_while_leadership_moves" / "HardenedWithoutTargetRebuild", PCT3;
    reelected_leader_sends_the_copy_again_random: "replica_copied_across_a_reelection" / "Hardened", RANDOM;
    reelected_leader_sends_the_copy_again_pct: "replica_copied_across_a_reelection" / "Hardened", PCT3;
    reelected_leader_waits_for_a_dead_op_random: "replica_copied_across_a_reelection" / "LegacyPendingOpsKept", RANDOM;
    reelected_leader_waits_for_a_dead_op_pct: "replica_copied_across_a_reelection" / "LegacyPendingOpsKept", PCT3;
    granted_slots_survive_leadership_moves_random: "keys_written_while_leadership_moves" / "SeedPatch", RANDOM;
    granted_slots_survive_leadership_moves_pct: "keys_written_while_leadership_moves" / "SeedPatch", PCT3;
    granted_slots_survive_leadership_moves_when_hardened_random: "keys_written_while_leadership_moves" / "Hardened", RANDOM;
    granted_slots_granted_again_without_rebuild_random: "keys_written_while_leadership_moves" / "LegacyNoRebuild", RANDOM;
    granted_slots_granted_again_without_rebuild_pct: "keys_written_while_leadership_moves" / "LegacyNoRebuild", PCT3;
    granted_slots_granted_again_when_rebuild_races_allocation_random: "keys_written_while_leadership_moves" / "LegacyRebuildWithoutGate", RANDOM;
    granted_slots_granted_again_when_rebuild_races_allocation_pct: "keys_written_while_leadership_moves" / "LegacyRebuildWithoutGate", PCT3;
    deleted_blocks_stay_deleted_through_repair_random: "deletions_across_transfer_restart_and_repair" / "SeedPatch", RANDOM;
    deleted_blocks_stay_deleted_through_repair_pct: "deletions_across_transfer_restart_and_repair" / "SeedPatch", PCT3;
    deleted_blocks_stay_deleted_through_repair_when_hardened_random: "deletions_across_transfer_restart_and_repair" / "Hardened", RANDOM;
    deleted_block_copied_back_by_repair_before_the_patch_random: "deletions_across_transfer_restart_and_repair" / "Legacy", RANDOM;
    quasi_closed_key_stays_deleted_through_reconcile_random: "key_deleted_from_a_quasi_closed_container_during_reconcile" / "SeedPatch", RANDOM;
    quasi_closed_key_stays_deleted_through_reconcile_pct: "key_deleted_from_a_quasi_closed_container_during_reconcile" / "SeedPatch", PCT3;
    quasi_closed_key_stays_deleted_through_reconcile_when_hardened_random: "key_deleted_from_a_quasi_closed_container_during_reconcile" / "Hardened", RANDOM;
    quasi_closed_key_copied_back_by_reconcile_before_the_patch_random: "key_deleted_from_a_quasi_closed_container_during_reconcile" / "Legacy", RANDOM;
    quasi_closed_key_copied_back_by_reconcile_before_the_patch_pct: "key_deleted_from_a_quasi_closed_container_during_reconcile" / "Legacy", PCT3;
    emptied_container_deleted_with_the_patch_random: "emptied_container_deleted_despite_a_restored_block" / "SeedPatch", RANDOM;
    emptied_container_deleted_with_the_patch_pct: "emptied_container_deleted_despite_a_restored_block" / "SeedPatch", PCT3;
    emptied_container_deleted_when_hardened_random: "emptied_container_deleted_despite_a_restored_block" / "Hardened", RANDOM;
    restored_block_force_deleted_with_its_replica_random: "emptied_container_deleted_despite_a_restored_block" / "LegacyReplica", RANDOM;
    restored_block_force_deleted_with_its_replica_pct: "emptied_container_deleted_despite_a_restored_block" / "LegacyReplica", PCT3;
    closed_replica_force_deleted_before_the_quasi_closed_rule_random: "emptied_container_deleted_despite_a_restored_block" / "LegacyClosedOnlyRule", RANDOM;
    restored_block_lives_in_a_deleting_container_before_the_force_delete_random: "emptied_container_deleted_despite_a_restored_block" / "Legacy", RANDOM;
    restored_block_lives_in_a_deleting_container_before_the_force_delete_pct: "emptied_container_deleted_despite_a_restored_block" / "Legacy", PCT3;
    random_cluster_holds_when_hardened_random: "random_cluster_with_faults" / "Hardened", RANDOM;
    random_cluster_holds_when_hardened_pct: "random_cluster_with_faults" / "Hardened", PCT3;
    random_cluster_catches_the_seed_patches_random: "random_cluster_with_faults" / "SeedPatch", RANDOM;
    random_cluster_catches_the_legacy_code_random: "random_cluster_with_faults" / "Legacy", RANDOM;
    random_cluster_catches_the_legacy_code_pct: "random_cluster_with_faults" / "Legacy", PCT3;
}

#[test]
fn every_cluster_case_is_listed() {
    support::assert_every_case_listed(&catalogue::cluster(), include_str!("cluster.rs"));
}

/// `tick_scms` racing a leader transfer: an SCM deposed in the middle of its round (its
/// replication manager closing a container's replicas, its block deleting service sending
/// a transaction) skips the rest of the round rather than failing the tick, as a real
/// service does. Before, the tick failed with `ScmError::NotLeader` (within a few
/// schedules).
#[test]
fn tick_scms_racing_a_transfer_skips_the_deposed_round() {
    use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;
    use hadoop_ref::sync::{Arc, thread};

    shuttle::check_random(
        || {
            let cluster = MiniOzoneCluster::builder().scms(2).build().unwrap();
            let deleted = cluster.write_key(1).unwrap();
            cluster.run_until_quiescent(10).unwrap();
            cluster.delete_key(&deleted).unwrap();
            let closing = cluster.open_key(1).unwrap();
            cluster.write_blocks(&closing).unwrap();
            cluster.close_key(&closing).unwrap();
            // The datanodes take the closes; their reports (OPEN still) call for new ones.
            for dn in 0..cluster.datanode_count() {
                cluster.tick_datanode(dn).unwrap();
            }
            let cluster = Arc::new(cluster);
            let mover = Arc::clone(&cluster);
            let transfer = thread::spawn(move || mover.transfer_leadership(1));
            let tick = cluster.tick_scms();
            transfer.join().unwrap().unwrap();
            tick.unwrap();
        },
        2_000,
    );
}
