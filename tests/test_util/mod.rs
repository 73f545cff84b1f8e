//! Helpers shared by the test modules.

use std::time::Duration;

use hadoop_ref::sync::thread;

pub mod allocation;
pub mod container;
pub mod datanode;
pub mod standby;
pub mod term_fencing;

/// Polls `condition` up to `attempts` times, sleeping a millisecond between tries: how a
/// test waits for the production threads (no timing is asserted).
pub fn eventually(attempts: u32, mut condition: impl FnMut() -> bool) -> bool {
    (0..attempts).any(|_| {
        let met = condition();
        if !met {
            thread::sleep(Duration::from_millis(1));
        }
        met
    })
}
