//! The SCM leader term that fences commands (HDDS-3988, HDDS-7621, HDDS-17268).
//!
//! Every SCM command carries the term of the SCM Ratis leader that created it, and a
//! heartbeat response carries the term of an SCM that believes it leads. A datanode drops
//! a command whose term is below the highest term it has taken.

/// A leader term of the SCM Ratis ring, stamped on every command by the SCM that created it.
///
/// Signed because non-HA and test SCMs use [`NON_HA_TERM`] (−1) and commands default to 0.
pub type Term = i64;

/// The term a non-HA SCM stamps (`SCMContext.INVALID_TERM`). Any lower term is bad input.
pub const NON_HA_TERM: Term = -1;

/// A term below [`NON_HA_TERM`], which no SCM can send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid SCM term {term}: terms are -1 (non-HA) or non-negative")]
pub struct InvalidTerm {
    /// The term received.
    pub term: Term,
}

/// Checks that `term` is a term an SCM can send: [`NON_HA_TERM`] or non-negative.
///
/// ```
/// # hadoop_ref::sync::run_example(|| {
/// use hadoop_ref::hdds::term::{InvalidTerm, NON_HA_TERM, validate_term};
///
/// assert_eq!(validate_term(NON_HA_TERM), Ok(-1));
/// assert_eq!(validate_term(-2), Err(InvalidTerm { term: -2 }));
/// # Ok::<(), std::convert::Infallible>(())
/// # });
/// ```
pub fn validate_term(term: Term) -> Result<Term, InvalidTerm> {
    if term < NON_HA_TERM {
        Err(InvalidTerm { term })
    } else {
        Ok(term)
    }
}
