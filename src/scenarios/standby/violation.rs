//! How the standby scenarios report what they saw broken: the seed key every violation
//! names, and the simulation's errors turned into violations. A NameNode that is not
//! active sending deletion commands breaks **standby is passive**; any other error of the
//! HA pair means the scenario could not set up what it meant to test.

use crate::scenarios::Violation;
use crate::sim::ha_pair::PairError;
use crate::sim::hdfs_datanode::DeletionsFromNonActive;

/// The seed every violation of the standby scenarios names.
pub const SEED_KEY: &str = "HDFS-2742";

/// A violation of this seed's `property`.
pub(super) fn violation(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: SEED_KEY,
        property,
        detail,
    }
}

impl From<DeletionsFromNonActive> for Violation {
    fn from(error: DeletionsFromNonActive) -> Self {
        violation("standby is passive", error.to_string())
    }
}

impl From<PairError> for Violation {
    fn from(error: PairError) -> Self {
        match error {
            PairError::DeletionsFromNonActive(error) => error.into(),
            other => violation("scenario setup", other.to_string()),
        }
    }
}
