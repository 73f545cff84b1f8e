//! Identifiers of the Ozone protocol: datanodes, SCMs, containers, pipelines, and the
//! local id of a block inside its container.

use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write_id(f, $prefix, self.0)
            }
        }

        crate::events::event_id!($name, $prefix, |id| id.0);
    };
}

/// Writes an id as its `Display` does, `prefix` then `number` (`dn3`), padded as `f`
/// asks: the prefix as it is and the number by its own `Display`, without the formatting
/// machinery's walk of a format string (ids are written at nearly every protocol event a
/// recorder keeps).
pub fn write_id(f: &mut fmt::Formatter<'_>, prefix: &str, number: u64) -> fmt::Result {
    if f.width().is_some() || f.precision().is_some() {
        return f.pad(&format!("{prefix}{number}"));
    }
    f.write_str(prefix)?;
    fmt::Display::fmt(&number, f)
}

id_type!(
    /// Identifies a datanode (its UUID in Ozone).
    DatanodeId,
    "dn"
);
id_type!(
    /// Identifies an SCM of the HA ring.
    ScmId,
    "scm"
);
id_type!(
    /// Identifies a container.
    ContainerId,
    "c"
);
id_type!(
    /// Identifies a write pipeline (a set of datanodes) in SCM.
    PipelineId,
    "p"
);

/// A block's id inside its container (`BlockID.localID`).
pub type LocalId = u64;
