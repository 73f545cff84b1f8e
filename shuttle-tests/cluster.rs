//! Shuttle, where the Ozone seeds meet: the `MiniOzoneCluster` scenarios of the catalogue
//! under random and PCT schedules: three datanode threads tick while a fourth deletes a
//! key and moves SCM leadership; every fixed variant must hold.

use crate::support;

use crate::support::{PCT3, RANDOM};
use hadoop_ref::check::catalogue;
use hadoop_ref::scenarios::cluster::SEED_KEY;

shuttle_tests! {
    cases: catalogue::cluster(), seed_key: SEED_KEY;
    deletions_survive_leadership_moves_random: "keys_deleted_while_leadership_moves" / "SeedPatch", RANDOM;
    deletions_survive_leadership_moves_pct: "keys_deleted_while_leadership_moves" / "SeedPatch", PCT3;
    deletions_survive_leadership_moves_when_hardened_random: "keys_deleted_while_leadership_moves" / "Hardened", RANDOM;
}

#[test]
fn every_cluster_case_is_listed() {
    support::assert_every_case_listed(&catalogue::cluster(), include_str!("cluster.rs"));
}
