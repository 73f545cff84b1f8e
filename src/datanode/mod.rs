//! The datanode's control plane: SCM-term fencing of commands (HDDS-17268), and its
//! container replicas with block deletion and reconciliation (HDDS-16811).
//!
//! - [`state_context`]: the command queue and the leader-SCM term that fences commands of
//!   a stale leader (`StateContext`).
//! - [`heartbeat`]: one `HeartbeatEndpointTask` per SCM endpoint and the [`ScmEndpoint`]
//!   boundary it talks through.
//! - [`commands`]: SCM commands and the dispatcher whose handlers re-check term and
//!   deadline when they run.
//! - [`container_set`]: the replicas the command handlers act on.
//! - [`container`]: container replicas with their block files, metadata and checksum
//!   tree, the block deleting service, reconciliation and the on-demand scanner.
//! - [`daemon`]: the production driver, a thread per endpoint plus the command processor.
//!
//! [`ScmEndpoint`]: heartbeat::ScmEndpoint

pub mod commands;
pub mod container;
pub mod container_set;
pub mod daemon;
mod error;
pub mod heartbeat;
pub mod state_context;

pub use crate::ids::{ContainerId, DatanodeId, ScmId};
pub use error::DatanodeError;

/// A leader term of the SCM Ratis ring, stamped on every command by the SCM that created it.
///
/// Signed because non-HA and test SCMs use [`NON_HA_TERM`] (−1) and commands default to 0.
pub type Term = i64;

/// The term a non-HA SCM stamps (`SCMContext.INVALID_TERM`). Any lower term is bad input.
pub const NON_HA_TERM: Term = -1;

/// Checks that `term` is a term an SCM can send: [`NON_HA_TERM`] or non-negative.
pub fn validate_term(term: Term) -> Result<Term, DatanodeError> {
    if term < NON_HA_TERM {
        Err(DatanodeError::InvalidTerm { term })
    } else {
        Ok(term)
    }
}
