//! Two datanode term-fencing contexts behind `StateContextApi` (HDDS-17268).
//!
//! **The race.** A heartbeat term that reaches a restarted datanode before its term is
//! initialised must not be lost, and two endpoint threads raising the term at once must
//! not lose the higher one; otherwise a deposed SCM leader's command runs.
//!
//! **The fix** ([`LockedContext`]): one lock over the term, the terms seen before init and
//! the queue. [`UnpatchedContext`] keeps both defects of the code before the patch.

mod locked;
mod unpatched;

pub use locked::LockedContext;
pub use unpatched::UnpatchedContext;

use hadoop_ref::datanode::state_context::{EndpointState, EndpointStateMachine};
use hadoop_ref::sync::Arc;

/// `hdds.datanode.command.queue.limit`'s default.
const QUEUE_LIMIT: usize = 5000;

/// Whether a majority of the non-passive endpoints heartbeat (what term init waits for).
fn majority_heartbeating(endpoints: &[Arc<EndpointStateMachine>]) -> bool {
    let scms = endpoints.iter().filter(|e| !e.is_passive()).count();
    let heartbeating = endpoints
        .iter()
        .filter(|e| !e.is_passive() && e.state() == EndpointState::Heartbeat)
        .count();
    heartbeating > scms / 2
}
