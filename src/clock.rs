//! Time as the components see it.
//!
//! Neither loom nor shuttle models time, so no component reads the operating system's
//! clock or sleeps on a deadline: deadlines, roll intervals and heartbeat intervals read a
//! [`Clock`]. Production uses [`SystemClock`]; tests and checker scenarios use a
//! [`ManualClock`] and advance it as an explicit step, so that "the deadline passed" is an
//! event a checker interleaves like any other.
//!
//! ```
//! # hadoop_ref::sync::run_example(|| {
//! use hadoop_ref::clock::{Clock, ManualClock};
//!
//! let clock = ManualClock::new(1_000);
//! clock.advance_ms(500);
//! assert_eq!(clock.now_ms(), 1_500);
//! # Ok::<(), std::convert::Infallible>(())
//! # });
//! ```

use std::fmt;

use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::{Arc, arc_from_box};

/// A source of wall-clock time in milliseconds since the Unix epoch.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time, in milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
}

/// The operating system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl SystemClock {
    /// The clock as the `Arc<dyn Clock>` components take.
    pub fn shared() -> Arc<dyn Clock> {
        arc_from_box(Box::new(SystemClock) as Box<dyn Clock>)
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        crate::sync::system_time_ms()
    }
}

/// A clock that moves only when told to; never goes backwards.
///
/// Built on a facade atomic, so reading and advancing it are scheduling points that loom
/// and shuttle interleave with everything else. Clones share the time: hand a clone to the
/// components (as `Arc<dyn Clock>`, see [`ManualClock::shared`]) and advance the original.
#[derive(Clone)]
pub struct ManualClock {
    now_ms: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock reading `start_ms`.
    pub fn new(start_ms: u64) -> Self {
        Self {
            now_ms: Arc::new(AtomicU64::new(start_ms)),
        }
    }

    /// A clone as the `Arc<dyn Clock>` components take.
    pub fn shared(&self) -> Arc<dyn Clock> {
        arc_from_box(Box::new(self.clone()) as Box<dyn Clock>)
    }

    /// Moves the clock forward by `delta_ms` (saturating at `u64::MAX`) and returns the new
    /// time.
    pub fn advance_ms(&self, delta_ms: u64) -> u64 {
        let mut current = self.now_ms.load(Ordering::Acquire);
        loop {
            let next = current.saturating_add(delta_ms);
            match self.now_ms.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return next,
                Err(seen) => current = seen,
            }
        }
    }

    /// Moves the clock to `time_ms` if that is later than now; an earlier time is ignored,
    /// so the clock stays monotonic. Returns the time after the call.
    pub fn advance_to_ms(&self, time_ms: u64) -> u64 {
        self.now_ms
            .fetch_max(time_ms, Ordering::AcqRel)
            .max(time_ms)
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now_ms.load(Ordering::Acquire)
    }
}

impl fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualClock")
            .field("now_ms", &self.now_ms())
            .finish()
    }
}
