//! Harness bookkeeping that must stay *outside* a checker's model, built on `std` and
//! identical in every build: an execution counter, a stopwatch, shared harness state, a
//! quiet panic for expected catches, a ghost variable, a process-wide exclusive section, a
//! fresh OS thread (or one started to wait for later), a pause and the core count for the soak tool, and a counting
//! allocator.
//!
//! A loom or shuttle run re-executes its closure many times; a count of those executions,
//! or the wall time they took, has to survive between executions, which a model primitive
//! cannot do (a loom type kept across iterations breaks the model). A ghost variable must
//! add no scheduling point, so it must be invisible to the checker.
//!
//! This is the one file outside the `sync` backends that may use `std::sync` and
//! `std::thread` (`ci/check-sync-facade`), and no component may import it
//! (`ci/check-layering`): it serves the simulation, the scenarios, the checkers, tests,
//! benches and the soak tool.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Counts events across checker iterations.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    /// A counter at zero.
    pub const fn new() -> Self {
        Self(AtomicU64::new(0))
    }

    /// Adds one and returns the new count.
    pub fn increment(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The current count.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Sets the count back to zero.
    pub fn reset(&self) {
        self.0.store(0, Ordering::Relaxed);
    }
}

/// Wall time elapsed since it was started.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch(Instant);

impl Stopwatch {
    /// Starts now.
    pub fn start() -> Self {
        Self(Instant::now())
    }

    /// Time since [`Stopwatch::start`].
    pub fn elapsed(&self) -> Duration {
        self.0.elapsed()
    }
}

/// Runs `f` on a new OS thread and waits for it; `Err` carries its panic.
///
/// Shuttle keeps per-OS-thread state between runs (its execution state and its pool of
/// task stacks), so a harness gives every checker run a thread of its own, which also
/// keeps a panic of one run from leaving that state behind for the next.
pub fn on_new_os_thread<T, F>(f: F) -> std::thread::Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    std::thread::spawn(f).join()
}

/// An OS thread started by [`start_os_thread`], to wait for.
#[derive(Debug)]
pub struct OsThread(std::thread::JoinHandle<()>);

/// Starts `f` on a new OS thread, outside any model: a tool's worker, which runs its own
/// checker execution where one is needed.
pub fn start_os_thread(f: impl FnOnce() + Send + 'static) -> OsThread {
    OsThread(std::thread::spawn(f))
}

impl OsThread {
    /// Waits for the thread to end; `Err` with its panic's message if it panicked.
    pub fn join(self) -> Result<(), String> {
        self.0
            .join()
            .map_err(|payload| panic_message(payload.as_ref()))
    }
}

/// A panic's message: its payload's text, or a placeholder for a payload of another type.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "panic without a message".to_owned())
}

/// Blocks the calling OS thread for `duration`: a tool's polling pause, outside any model.
pub fn pause(duration: Duration) {
    std::thread::sleep(duration);
}

/// The number of cores this process may run on (1 when it cannot be told).
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The payload of a panic a harness raises on purpose to end a checker's run at a
/// violation it has already recorded: [`quiet_expected_panics`] keeps it off stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpectedPanic;

/// Installs, once per process, a panic hook that prints nothing for an [`ExpectedPanic`]
/// and hands every other panic to the hook that was there before.
///
/// Loom and shuttle end a run only on a panic; a harness that has already kept the
/// violation (and its story) panics with [`ExpectedPanic`], so an expected catch prints no
/// message and no backtrace.
pub fn quiet_expected_panics() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<ExpectedPanic>().is_none() {
                previous(info);
            }
        }));
    });
}

/// State a harness shares between clones of a handle and across threads, behind `std`'s
/// lock: what a checker run hands out (the violation an execution found, the schedule a
/// scheduler made, the events a collector recorded) without a panic and without a
/// scheduling point.
#[derive(Debug, Default)]
pub struct Shared<T>(Arc<Mutex<T>>);

impl<T> Shared<T> {
    /// A handle on `value`.
    pub fn new(value: T) -> Self {
        Self(Arc::new(Mutex::new(value)))
    }

    /// Runs `f` on the value, holding the lock (keep `f` short: it cannot block).
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl<T> Shared<Option<T>> {
    /// Puts `value` in, replacing what was there.
    pub fn put(&self, value: T) {
        self.with(|slot| *slot = Some(value));
    }

    /// Takes what is in, leaving `None`.
    pub fn take(&self) -> Option<T> {
        self.with(Option::take)
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

/// A ghost variable for a harness: the highest value recorded since the last reset.
///
/// A scenario records what it saw right after a step returns and reads it right before
/// the next step starts. Being invisible to the checkers, the record adds no scheduling
/// point, so the exploration covers exactly the interleavings of the code under test.
#[derive(Debug)]
pub struct HighWater(std::sync::atomic::AtomicI64);

impl HighWater {
    const NONE: i64 = i64::MIN;

    /// Nothing recorded.
    pub const fn new() -> Self {
        Self(std::sync::atomic::AtomicI64::new(Self::NONE))
    }

    /// Raises the record to `value` if it is higher.
    pub fn record(&self, value: i64) {
        self.0.fetch_max(value, Ordering::SeqCst);
    }

    /// The highest value recorded, `None` if nothing was (or `i64::MIN` was the highest).
    pub fn get(&self) -> Option<i64> {
        let value = self.0.load(Ordering::SeqCst);
        (value != Self::NONE).then_some(value)
    }

    /// Forgets everything recorded.
    pub fn reset(&self) {
        self.0.store(Self::NONE, Ordering::SeqCst);
    }
}

impl Default for HighWater {
    fn default() -> Self {
        Self::new()
    }
}

/// The system allocator, counting live heap bytes and their peak: a bench declares it as
/// its `#[global_allocator]` to measure what a step keeps, not only how long it takes.
///
/// ```ignore
/// #[global_allocator]
/// static HEAP: CountingAllocator = CountingAllocator::new();
/// HEAP.reset_peak();
/// let before = HEAP.live_bytes();
/// step();
/// let kept = HEAP.live_bytes() - before;
/// let transient = HEAP.peak_bytes() - before;
/// ```
#[derive(Debug)]
pub struct CountingAllocator {
    live: AtomicUsize,
    peak: AtomicUsize,
}

impl CountingAllocator {
    /// Nothing counted yet.
    pub const fn new() -> Self {
        Self {
            live: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        }
    }

    /// Heap bytes allocated and not yet freed.
    pub fn live_bytes(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    /// The highest [`CountingAllocator::live_bytes`] since the last reset.
    pub fn peak_bytes(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// Starts a new peak from the live bytes now.
    pub fn reset_peak(&self) {
        self.peak.store(self.live_bytes(), Ordering::Relaxed);
    }
}

impl Default for CountingAllocator {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every call forwards to `System` with the caller's layout and pointer unchanged;
// the counters only observe sizes.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            let live = self.live.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            self.peak.fetch_max(live, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc` is passed on as is.
        unsafe { System.dealloc(ptr, layout) };
        self.live.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

/// A value made once per process and kept for its life: what a harness registers once
/// (a `tracing` dispatcher) outside any checker's model.
#[derive(Debug)]
pub struct Once<T>(std::sync::OnceLock<T>);

impl<T> Once<T> {
    /// An empty cell, for a `static`.
    pub const fn new() -> Self {
        Self(std::sync::OnceLock::new())
    }

    /// The value, made by `init` on the first call.
    pub fn get_or_init(&self, init: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(init)
    }

    /// The value, if it is made.
    pub fn get(&self) -> Option<&T> {
        self.0.get()
    }

    /// Makes the value `value`, or hands it back if it is made already.
    pub fn set(&self, value: T) -> Result<(), T> {
        self.0.set(value)
    }
}

/// A handle on a value shared by reference count across OS threads, outside any
/// checker's model (`std`'s `Arc`): a harness's hook handed to the threads a run starts.
pub type Handle<T> = Arc<T>;

impl<T> Default for Once<T> {
    fn default() -> Self {
        Self::new()
    }
}
