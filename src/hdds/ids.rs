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
    };
}

/// Writes an id as its `Display` does, `prefix` then `number` (`dn3`), padded as `f`
/// asks: into a buffer on the stack, without the formatting machinery's walk of a format
/// string (ids are written at nearly every protocol event a recorder keeps).
pub fn write_id(f: &mut fmt::Formatter<'_>, prefix: &str, number: u64) -> fmt::Result {
    const MOST: usize = 16;
    if prefix.len() > MOST {
        return write!(f, "{prefix}{number}");
    }
    let mut text = [0u8; MOST + 20];
    text[..prefix.len()].copy_from_slice(prefix.as_bytes());
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = number;
    loop {
        at -= 1;
        // A digit is below 10: the cast keeps it.
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let end = prefix.len() + digits.len() - at;
    text[prefix.len()..end].copy_from_slice(&digits[at..]);
    // A prefix and ASCII digits are UTF-8.
    match std::str::from_utf8(&text[..end]) {
        Ok(text) => f.pad(text),
        Err(_) => write!(f, "{prefix}{number}"),
    }
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
