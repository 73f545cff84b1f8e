//! Production backend: `parking_lot` locks, `std` atomics and threads,
//! `crossbeam-channel` and `arc-swap`.

pub use arc_swap::ArcSwap;
pub use parking_lot::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use std::sync::Arc;

/// Atomic integers (`std::sync::atomic`).
pub mod atomic {
    pub use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
}

/// Threads (`std::thread`).
pub mod thread {
    pub use std::thread::{JoinHandle, sleep, spawn, yield_now};
}

/// Channels (`crossbeam-channel`).
pub mod channel {
    pub use crossbeam_channel::{
        Receiver, RecvError, RecvTimeoutError, SendError, Sender, TryRecvError, bounded, unbounded,
    };
}

/// An `Arc` of a boxed value, typically a trait object: `arc_from_box(Box::new(clock) as
/// Box<dyn Clock>)`. Works in every build, where `Arc::new(x) as Arc<dyn Trait>` does not
/// (loom's `Arc` cannot coerce to an unsized type).
pub fn arc_from_box<T: ?Sized>(boxed: Box<T>) -> Arc<T> {
    Arc::from(boxed)
}

/// Runs a documentation example: in the production build, directly.
pub fn run_example<E: std::fmt::Debug>(body: impl Fn() -> Result<(), E> + Send + Sync + 'static) {
    if let Err(error) = body() {
        panic!("the example failed: {error:?}");
    }
}

/// Runs a documentation example of a production driver (threads paced by the wall
/// clock): in the production build, directly.
pub fn run_driver_example<E: std::fmt::Debug>(body: impl FnOnce() -> Result<(), E>) {
    if let Err(error) = body() {
        panic!("the example failed: {error:?}");
    }
}
