//! The seed of the container scenarios (HDDS-16811): its key, the blocks its
//! reproductions name, and how their findings become [`Violation`]s.

use crate::datanode::container::ContainerError;
use crate::hdds::ids::LocalId;
use crate::scenarios::Violation;

/// The seed every violation of the container scenarios names.
pub const SEED_KEY: &str = "HDDS-16811";

/// The block of the two-node scenarios.
pub const BLOCK_X: LocalId = 1;

/// The second block of the seed's MC2 reproduction, deleted by a later transaction.
pub const BLOCK_Y: LocalId = 2;

/// The violation of `property`, with what was seen.
pub(super) fn violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: SEED_KEY,
        property,
        detail,
    }
}

/// A scenario that could not be set up (a component refused a step the scenario needs).
pub(super) fn setup(error: ContainerError) -> Violation {
    violation("scenario setup", error.to_string())
}
