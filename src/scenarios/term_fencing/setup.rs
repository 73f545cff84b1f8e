//! What every term-fencing scenario sets up the same way (HDDS-17268): in-process SCMs, a
//! command queued on one of them, the clock's start, and setup failures as violations.
//!
//! The race these scenarios chase: an SCM hands out a command stamped with the term it led
//! in, and keeps handing it out after it was deposed, so a restarted datanode must learn
//! the new leader's term before it runs the command.

use super::invariants::violation;
use crate::datanode::DatanodeError;
use crate::hdds::command::CommandKind;
use crate::hdds::ids::{DatanodeId, ScmId};
use crate::scenarios::Violation;
use crate::sim::scm_endpoint::InProcessScm;

/// Where the scenarios' clocks start (any fixed time; deadlines are relative to it).
pub const SCENARIO_START_MS: u64 = 1_700_000_000_000;

/// SCMs 1..=`count`, none of them leading yet.
pub(super) fn in_process_scms(count: u64) -> Vec<InProcessScm> {
    (1..=count).map(|i| InProcessScm::new(ScmId(i))).collect()
}

/// A datanode step that failed before the scenario could judge anything.
pub(super) fn setup_error(error: DatanodeError) -> Violation {
    violation("scenario setup", error.to_string())
}

/// Queues `kind` for `datanode` on `scm`, which must believe it leads; no deadline.
pub(super) fn queue_command(
    scm: &InProcessScm,
    datanode: DatanodeId,
    kind: CommandKind,
) -> Result<(), Violation> {
    scm.queue_command(datanode, kind, 0)
        .map(|_| ())
        .map_err(|e| violation("scenario setup", e.to_string()))
}
