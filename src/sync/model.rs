//! The facade's lock types for the model builds (loom and shuttle), wrapping the checker's
//! std-shaped primitives into `parking_lot`'s shape.
//!
//! Both checkers offer `std::sync`'s API: `lock()` returns a `LockResult` and
//! `Condvar::wait` takes the guard by value. The wrappers here ignore poisoning (a panic
//! already failed the checker's run) and let [`Condvar::wait`] borrow the guard.

use std::ops::{Deref, DerefMut};
use std::sync::PoisonError;

#[cfg(loom)]
use super::loom as backend;
#[cfg(all(feature = "shuttle", not(loom)))]
use super::shuttle as backend;

use backend::{RawCondvar, RawMutex, RawMutexGuard};
// Under shuttle the facade's read-write lock is `shuttle_lock`'s.
#[cfg(loom)]
use backend::{RawRwLock, RawRwLockReadGuard, RawRwLockWriteGuard};

pub use backend::{Arc, Weak, arc_from_box, atomic, run_example, thread};

/// Runs a documentation example of a production driver (threads paced by the wall
/// clock) or of a whole cluster: in the model builds, not at all. A driver's free-running
/// loops never end within a model's bounds, a cluster's thousands of lock operations
/// exceed them, and what either shows is the production build's behaviour; the checkers
/// explore the same code through the scenarios instead.
pub fn run_driver_example<E: std::fmt::Debug>(_body: impl FnOnce() -> Result<(), E>) {}

/// A mutual exclusion lock whose `lock()` returns the guard directly.
#[derive(Debug)]
pub struct Mutex<T> {
    raw: RawMutex<T>,
}

/// The guard of a [`Mutex`]; the lock is released when it is dropped.
#[derive(Debug)]
pub struct MutexGuard<'a, T> {
    // `None` only for the duration of `Condvar::wait`, which holds the raw guard itself.
    raw: Option<RawMutexGuard<'a, T>>,
}

impl<T> Mutex<T> {
    /// Creates an unlocked mutex holding `value`.
    pub fn new(value: T) -> Self {
        Self {
            raw: RawMutex::new(value),
        }
    }

    /// Blocks until the lock is held.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        MutexGuard {
            raw: Some(self.raw.lock().unwrap_or_else(PoisonError::into_inner)),
        }
    }

    /// Consumes the mutex and returns the value.
    // Under shuttle this lock serves the model channel only, which never consumes one.
    #[cfg_attr(all(feature = "shuttle", not(loom)), allow(dead_code))]
    pub fn into_inner(self) -> T {
        self.raw
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T> MutexGuard<'_, T> {
    fn raw(&self) -> &RawMutexGuard<'_, T> {
        match &self.raw {
            Some(raw) => raw,
            None => unreachable!("a MutexGuard is vacated only inside Condvar::wait"),
        }
    }
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.raw()
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        match &mut self.raw {
            Some(raw) => raw,
            None => unreachable!("a MutexGuard is vacated only inside Condvar::wait"),
        }
    }
}

/// A condition variable whose `wait` borrows the guard, as in `parking_lot`.
#[derive(Debug, Default)]
pub struct Condvar {
    raw: RawCondvar,
}

impl Condvar {
    /// Creates a condition variable with no waiters.
    pub fn new() -> Self {
        Self {
            raw: RawCondvar::new(),
        }
    }

    /// Releases the guard's lock, blocks until notified, and takes the lock again.
    pub fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
        let Some(raw) = guard.raw.take() else {
            unreachable!("a MutexGuard is vacated only inside Condvar::wait")
        };
        guard.raw = Some(self.raw.wait(raw).unwrap_or_else(PoisonError::into_inner));
    }

    /// Wakes one waiter.
    pub fn notify_one(&self) {
        self.raw.notify_one();
    }

    /// Wakes every waiter.
    pub fn notify_all(&self) {
        self.raw.notify_all();
    }
}

/// A reader-writer lock whose `read()` and `write()` return the guards directly.
#[cfg(loom)]
#[derive(Debug)]
pub struct RwLock<T> {
    raw: RawRwLock<T>,
}

/// Shared guard of a [`RwLock`].
#[cfg(loom)]
pub type RwLockReadGuard<'a, T> = RawRwLockReadGuard<'a, T>;
/// Exclusive guard of a [`RwLock`].
#[cfg(loom)]
pub type RwLockWriteGuard<'a, T> = RawRwLockWriteGuard<'a, T>;

#[cfg(loom)]
impl<T> RwLock<T> {
    /// Creates an unlocked lock holding `value`.
    pub fn new(value: T) -> Self {
        Self {
            raw: RawRwLock::new(value),
        }
    }

    /// Blocks until a shared lock is held.
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        self.raw.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Blocks until the exclusive lock is held.
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        self.raw.write().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(loom)]
impl<T: Default> Default for RwLock<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}
