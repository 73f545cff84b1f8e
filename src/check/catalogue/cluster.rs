//! The catalogue of the scenarios where the Ozone seeds meet in one `MiniOzoneCluster`:
//! deletions the SCM drives into real replicas while leadership moves.

use crate::check::catalogue::case::Case;
use crate::datanode::state_context::StateContextBehavior;
use crate::scenarios::cluster::keys_deleted_while_leadership_moves;

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
    cases
}
