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

use crate::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use crate::sync::{Arc, Condvar, Mutex, arc_from_box};

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

/// A [`ManualClock`] whose moves wake the services paced by it: what drives the threads
/// of a started `MiniOzoneCluster` under a checker (and on real threads, where a pacer
/// thread moves it every interval of wall time).
///
/// A service waits for the clock to move ([`wait_moved`](Self::wait_moved)) instead of
/// sleeping out its interval, so "the interval passed" is the scheduling point a checker
/// interleaves, never a timeout. A service that must stop is woken by its
/// [`StopFlag`]: [`stop`](Self::stop) sets it under the pace's lock, so no waiter misses
/// it.
///
/// ```
/// # hadoop_ref::sync::run_example(|| {
/// use hadoop_ref::clock::{Clock, Pace, StopFlag};
/// use hadoop_ref::sync::thread;
///
/// let pace = Pace::new(0);
/// let stop = StopFlag::new();
/// let (service_pace, service_stop) = (pace.clone(), stop.clone());
/// let service = thread::spawn(move || {
///     let mut seen = service_pace.moves();
///     let mut runs = 0;
///     while let Some(moved) = service_pace.wait_moved(seen, &service_stop) {
///         seen = moved;
///         runs += 1;
///     }
///     runs
/// });
/// pace.advance_ms(1_000);
/// pace.stop(&stop);
/// assert!(service.join().expect("no panic") <= 1);
/// assert_eq!(pace.clock().now_ms(), 1_000);
/// # Ok::<(), std::convert::Infallible>(())
/// # });
/// ```
#[derive(Clone)]
pub struct Pace {
    clock: ManualClock,
    moved: Arc<PaceSignal>,
}

struct PaceSignal {
    /// How many times the clock moved through this pace.
    moves: Mutex<u64>,
    changed: Condvar,
}

/// Tells the services waiting on a [`Pace`] to stop.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    /// A flag not set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether it was set.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// Sets it. Services waiting on a [`Pace`] see it only once woken: stop those with
    /// [`Pace::stop`].
    pub fn set(&self) {
        self.0.store(true, Ordering::Release);
    }
}

impl Pace {
    /// A pace over a new clock reading `start_ms`.
    pub fn new(start_ms: u64) -> Self {
        Self::over(ManualClock::new(start_ms))
    }

    /// A pace over `clock` (moves made on the clock directly wake nobody).
    pub fn over(clock: ManualClock) -> Self {
        Self {
            clock,
            moved: Arc::new(PaceSignal {
                moves: Mutex::new(0),
                changed: Condvar::new(),
            }),
        }
    }

    /// The clock it moves.
    pub fn clock(&self) -> &ManualClock {
        &self.clock
    }

    /// Moves the clock by `delta_ms` and wakes every waiting service; returns the new time.
    pub fn advance_ms(&self, delta_ms: u64) -> u64 {
        let now_ms = self.clock.advance_ms(delta_ms);
        *self.moved.moves.lock() += 1;
        self.moved.changed.notify_all();
        now_ms
    }

    /// How many times the clock moved through this pace: what a service has seen.
    pub fn moves(&self) -> u64 {
        *self.moved.moves.lock()
    }

    /// Waits until the clock moved past `seen` moves, or `stop` is set. Returns the moves
    /// now, or `None` once stopped (a stop wins over a move).
    pub fn wait_moved(&self, seen: u64, stop: &StopFlag) -> Option<u64> {
        let mut moves = self.moved.moves.lock();
        loop {
            if stop.is_set() {
                return None;
            }
            if *moves != seen {
                return Some(*moves);
            }
            self.moved.changed.wait(&mut moves);
        }
    }

    /// Sets `stop` and wakes every waiting service, so those holding it return.
    pub fn stop(&self, stop: &StopFlag) {
        let _moves = self.moved.moves.lock();
        stop.set();
        self.moved.changed.notify_all();
    }
}

impl fmt::Debug for Pace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pace")
            .field("now_ms", &self.clock.now_ms())
            .field("moves", &self.moves())
            .finish()
    }
}
