//! Shuttle, where the Ozone seeds meet: the `MiniOzoneCluster` scenarios of the catalogue
//! under random and PCT schedules: three datanode threads tick while a fourth deletes a
//! key and moves SCM leadership (every fixed variant must hold), and a deposed leader's
//! force delete reaches a replica under repair (fenced by the patch, caught before it).

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
}

#[test]
fn every_cluster_case_is_listed() {
    support::assert_every_case_listed(&catalogue::cluster(), include_str!("cluster.rs"));
}
