//! The catalogue of the scenarios where the Ozone seeds meet in one `MiniOzoneCluster`:
//! deletions the SCM drives into real replicas while leadership moves, and a deposed
//! leader's force delete reaching a replica under repair.

use crate::check::catalogue::case::Case;
use crate::datanode::state_context::StateContextBehavior;
use crate::scenarios::cluster::{
    keys_deleted_while_leadership_moves, stale_force_delete_during_repair,
};

/// The cross-seed scenarios.
pub fn cluster() -> Vec<Case> {
    let mut cases = Vec::new();
    cases!(
        cases,
        "keys_deleted_while_leadership_moves",
        StateContextBehavior,
        |behavior, seed| keys_deleted_while_leadership_moves(behavior, seed),
        [(SeedPatch, Holds), (Hardened, Holds)]
    );
    // HDDS-17268's MC4 order (the new leader heard first) with HDDS-16811's repair of the
    // same replica in flight.
    cases!(
        cases,
        "stale_force_delete_during_repair",
        StateContextBehavior,
        |behavior, _seed| stale_force_delete_during_repair(behavior),
        [
            (SeedPatch, Holds),
            (Hardened, Holds),
            (Legacy, Caught),
            (LegacyIgnoreHeartbeatTermBeforeInit, Caught),
        ]
    );
    cases
}
