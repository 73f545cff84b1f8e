//! What the term-fencing boundary hands out and shows (HDDS-17268): a command taken from
//! the queue with the term it was handed out under, and the term as one thread saw it.
//!
//! **The race.** A deposed leader's command handed out after the datanode had already
//! taken a higher term (from a heartbeat response or a queued command) is the defect; a
//! term that goes down within one process lifetime is its trace.
//!
//! **The fix** is the context's; these plain values let the scenarios judge any
//! implementation of the boundary by what it handed out and what each thread observed.

use crate::hdds::command::ScmCommand;
use crate::hdds::term::Term;

/// A command taken from the queue, with what the context knew when it handed it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchedCommand {
    /// The command.
    pub command: ScmCommand,
    /// The context's term when the command was handed out (equal to the command's term).
    pub term_at_dispatch: Term,
    /// The highest term any heartbeat response had carried into this context (since the
    /// last restart) when the command was handed out. `None` if no response had a term.
    pub heartbeat_term_high_water: Option<Term>,
}

/// The term as one thread saw it, with the process lifetime it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermObservation {
    /// Restarts of the context before the observation.
    pub incarnation: u64,
    /// The term, `None` before init.
    pub term: Option<Term>,
}
