//! The SCM side's "eventually" properties, checked once a cluster has settled.
//!
//! **The race (HDDS-16891).** A restarted SCM or a new leader rebuilds what it lost from
//! the datanodes' reports: it waits in safe mode for them, and reserves slots for
//! allocations not reported yet. A rule that never fires leaves it refusing allocations.
//! **The fix** bounds both: safe mode ends once every datanode has registered and sent a
//! node report, and an unconfirmed reservation ages out of `TwoWindowBucket` after two
//! roll intervals. [`scms_leave_safe_mode`] and [`pending_allocations_roll_out`] check
//! that both happen within a bound, and print what never happened when they do not.

use super::invariants::SEED_KEY;
use crate::scenarios::Violation;
use crate::sim::mini_cluster::MiniOzoneCluster;

/// HDDS-16891's seed key: both properties are its.
const ALLOCATION_SEED: &str = "HDDS-16891";

/// The property [`scms_leave_safe_mode`] checks.
pub const SCMS_LEAVE_SAFE_MODE: &str = "every running SCM leaves safe mode";

/// The property [`pending_allocations_roll_out`] checks.
pub const PENDING_ALLOCATIONS_ROLL_OUT: &str = "pending allocations roll out of their windows";

fn liveness(property: &'static str, detail: String) -> Violation {
    Violation {
        seed: ALLOCATION_SEED,
        property,
        detail,
    }
}

fn setup(error: impl ToString) -> Violation {
    Violation {
        seed: SEED_KEY,
        property: "scenario setup",
        detail: error.to_string(),
    }
}

/// **Every running SCM leaves safe mode** (liveness): within `bound_ticks` ticks of a
/// healed cluster, no running SCM (a restarted one included) is still in safe mode. A
/// violation names each SCM still in it and the datanodes it never heard a node report
/// from.
pub fn scms_leave_safe_mode(
    cluster: &MiniOzoneCluster,
    bound_ticks: usize,
) -> Result<(), Violation> {
    for _ in 0..bound_ticks {
        if cluster.scms_in_safe_mode().is_empty() {
            return Ok(());
        }
        cluster.tick().map_err(setup)?;
    }
    let left = cluster.scms_in_safe_mode();
    if left.is_empty() {
        return Ok(());
    }
    let story: Vec<String> = left.iter().map(ToString::to_string).collect();
    Err(liveness(
        SCMS_LEAVE_SAFE_MODE,
        format!("after {bound_ticks} ticks: {}", story.join("; ")),
    ))
}

/// **Pending allocations roll out of their windows** (liveness): once no allocation is in
/// flight, `wait_ms` later (two roll intervals suffice,
/// [`MiniOzoneCluster::roll_interval_ms`]) and one more tick, no running SCM holds a
/// pending allocation on any datanode. A violation lists each reservation left, by SCM
/// and datanode. Moves the cluster's clock: check it last.
pub fn pending_allocations_roll_out(
    cluster: &MiniOzoneCluster,
    wait_ms: u64,
) -> Result<(), Violation> {
    cluster.clock().advance_ms(wait_ms);
    cluster.tick().map_err(setup)?;
    let left = cluster.pending_allocations();
    if left.is_empty() {
        return Ok(());
    }
    let story: Vec<String> = left.iter().map(ToString::to_string).collect();
    Err(liveness(
        PENDING_ALLOCATIONS_ROLL_OUT,
        format!(
            "{wait_ms} ms after the last allocation (roll interval {} ms): {}",
            cluster.roll_interval_ms(),
            story.join("; ")
        ),
    ))
}
