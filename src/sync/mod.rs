//! The one synchronization facade of the crate.
//!
//! Every lock, atomic, thread, channel and `ArcSwap` a component uses comes from here, so
//! that the same source runs in three builds:
//!
//! | build | how | backend |
//! |---|---|---|
//! | production | `cargo build` | `parking_lot`, `std` atomics and threads, `crossbeam-channel`, `arc-swap` |
//! | loom | `RUSTFLAGS="--cfg loom"` | `loom::sync`, `loom::thread`, the model channel and `ArcSwap` |
//! | shuttle | `--features shuttle` | shuttle's semaphores and atomics around `std` locks and atomics, `shuttle::thread`, the same model channel and `ArcSwap` |
//!
//! The API has `parking_lot`'s shape in all three: `lock()`, `read()` and `write()` return
//! the guard (poisoning is ignored, a panic already failed the run) and
//! [`Condvar::wait`] takes `&mut guard`. Neither checker can see inside `crossbeam-channel`
//! or `arc-swap`, so the model builds use a small Mutex + Condvar queue ([`channel`]) and
//! an `RwLock<Arc<T>>` ([`ArcSwap`]) with the same API.
//!
//! Under shuttle a task that runs alone (no thread it spawned through the facade still
//! runs) takes no scheduling point of the facade's: its locks, atomics and `RwCell`s are
//! the `std` ones there, since a point with one choice explores nothing. A cluster
//! scenario builds, heals and checks its cluster alone; those points were most of an
//! execution. A lock taken alone and contended once a thread is spawned under it is
//! handed off at a scheduling point (`src/sync/shuttle_lock.rs`).
//!
//! Time is not modelled by either checker: components read time from a
//! [`Clock`](crate::clock::Clock) and no logic depends on a timeout firing. In the model
//! builds a timed wait returns at once as timed out, which callers treat like a spurious
//! wakeup.
//!
//! The few std primitives a *harness* needs outside the model (a stopwatch, an iteration
//! counter, a ghost variable) are in [`crate::unmodelled`], not here.
//!
//! Documentation examples run in all three builds: each wraps its body in
//! [`run_example`], which runs it directly in production and inside the checker's model
//! in the loom and shuttle builds (their primitives work nowhere else), so `cargo test`
//! passes as typed in every build. An example of a production driver, whose threads are
//! paced by the wall clock, uses [`run_driver_example`] and runs in production only.
//!
//! # Example
//!
//! ```
//! use hadoop_ref::sync::{Arc, Mutex, run_example, thread};
//!
//! run_example(|| {
//!     let counter = Arc::new(Mutex::new(0u32));
//!     let c = Arc::clone(&counter);
//!     let handle = thread::spawn(move || *c.lock() += 1);
//!     handle.join().expect("the thread does not panic");
//!     assert_eq!(*counter.lock(), 1);
//!     Ok::<(), ()>(())
//! });
//! ```

#[cfg(all(loom, feature = "shuttle"))]
compile_error!("build with either `--cfg loom` or `--features shuttle`, not both");

#[cfg(not(any(loom, feature = "shuttle")))]
mod production;
#[cfg(not(any(loom, feature = "shuttle")))]
pub use production::*;

#[cfg(loom)]
mod loom;

#[cfg(all(feature = "shuttle", not(loom)))]
mod shuttle;

#[cfg(any(loom, feature = "shuttle"))]
mod model;
#[cfg(any(loom, feature = "shuttle"))]
pub use model::*;
// Under shuttle, the facade's own lock (no scheduling point while a task runs alone);
// the model channel keeps shuttle's (`model::Mutex`, `model::Condvar`).
#[cfg(all(feature = "shuttle", not(loom)))]
mod shuttle_lock;
#[cfg(all(feature = "shuttle", not(loom)))]
pub use shuttle_lock::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

#[cfg(any(loom, feature = "shuttle"))]
mod model_arc_swap;
#[cfg(any(loom, feature = "shuttle"))]
pub use model_arc_swap::ArcSwap;

/// Channels with `crossbeam-channel`'s API (a Mutex + Condvar queue in the model builds).
#[cfg(any(loom, feature = "shuttle"))]
pub mod channel {
    pub use super::model_channel::{
        Receiver, RecvError, RecvTimeoutError, SendError, Sender, TryRecvError, bounded, unbounded,
    };
}
#[cfg(any(loom, feature = "shuttle"))]
mod model_channel;

/// Waits up to `wait` for a driver thread's stop signal (a message, or the sender's
/// disconnect): the pacing wait of the production drivers. No decision may depend on the
/// wait running its full length; in the model builds it returns at once.
pub fn stop_requested(stopped: &channel::Receiver<()>, wait: std::time::Duration) -> bool {
    !matches!(
        stopped.recv_timeout(wait),
        Err(channel::RecvTimeoutError::Timeout)
    )
}

mod os;
pub use os::system_time_ms;

mod rw_cell;
/// A value read and written in short closures, whose reads commute: a `parking_lot`
/// `RwLock` in production; under loom, one scheduling point per access that loom knows
/// commutes with other reads (a version load) or conflicts with everything (an
/// increment), so its partial-order reduction explores one order of two reads; under
/// shuttle, the facade's `Mutex`. A closure must not touch a checker primitive (under
/// loom, one that reaches a scheduling point panics rather than hang the model). Why the
/// loom form is sound is in `src/sync/rw_cell.rs`.
///
/// ```
/// use hadoop_ref::sync::{RwCell, run_example};
///
/// run_example(|| {
///     let blocks = RwCell::new(vec![1u64]);
///     blocks.write(|blocks| blocks.push(2));
///     assert_eq!(blocks.read(Vec::len), 2);
///     Ok::<(), ()>(())
/// });
/// ```
pub use rw_cell::RwCell;
