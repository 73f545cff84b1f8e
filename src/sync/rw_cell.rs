//! [`RwCell`]: a value read and written in short closures, whose reads commute.
//!
//! A lock tells a checker that two accesses conflict whether they read or write: loom's
//! partial-order reduction then explores both orders of two reads, which no protocol can
//! tell apart, and a model whose threads mostly read one replica's storage multiplies its
//! executions for nothing. An `RwCell` states its conflicts exactly: reads commute with
//! reads, a write conflicts with every access.
//!
//! | build | an access is |
//! |---|---|
//! | production | a `parking_lot` `RwLock` read or write around the closure |
//! | loom | one atomic access to a version (a load for a read, an increment for a write), the scheduling point, then the closure on a lock loom does not see |
//! | shuttle | as loom, without the version: shuttle's scheduling point (the one its atomics begin with), then the closure on an unseen lock (a shuttle lock would be two scheduling points, its acquire and its release); no point while the calling task runs alone (no other thread of the execution is running), where a point has one choice |
//!
//! **Why this form is sound.** Loom and shuttle run one thread at a time and switch only
//! at their own primitives. The version access is the access's only scheduling point and the
//! closure runs right after it, so in every explored execution the closure's effect takes
//! place at that point, atomically, exactly where a lock's critical section would. The
//! closure must therefore touch no checker primitive (no lock, atomic, channel or
//! thread): one that does may let another thread in, and that thread's access to the cell
//! panics (`RwCell` closure reached a scheduling point) rather than deadlock the model. Loom's loads commute with loads and conflict with increments, which is
//! the reads-commute relation above.

#[cfg(loom)]
pub use loom_backend::RwCell;
#[cfg(not(any(loom, feature = "shuttle")))]
pub use production::RwCell;
#[cfg(all(feature = "shuttle", not(loom)))]
pub use shuttle_backend::RwCell;

#[cfg(not(any(loom, feature = "shuttle")))]
mod production {
    /// A value read and written in short closures, whose reads commute (see the module
    /// docs): here a `parking_lot` `RwLock`.
    #[derive(Debug, Default)]
    pub struct RwCell<T> {
        lock: parking_lot::RwLock<T>,
    }

    impl<T> RwCell<T> {
        /// A cell holding `value`.
        pub fn new(value: T) -> Self {
            Self {
                lock: parking_lot::RwLock::new(value),
            }
        }

        /// Runs `read` on the value; other reads may run at once.
        pub fn read<R>(&self, read: impl FnOnce(&T) -> R) -> R {
            read(&self.lock.read())
        }

        /// Runs `write` on the value, alone.
        pub fn write<R>(&self, write: impl FnOnce(&mut T) -> R) -> R {
            write(&mut self.lock.write())
        }
    }
}

#[cfg(loom)]
mod loom_backend {
    use loom::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

    /// A value read and written in short closures, whose reads commute (see the module
    /// docs): here a version loom sees and a lock it does not.
    #[derive(Debug, Default)]
    pub struct RwCell<T> {
        version: AtomicU64,
        value: Mutex<T>,
    }

    impl<T> RwCell<T> {
        /// A cell holding `value`.
        pub fn new(value: T) -> Self {
            Self {
                version: AtomicU64::new(0),
                value: Mutex::new(value),
            }
        }

        /// Runs `read` on the value: one load of the version, then the closure.
        pub fn read<R>(&self, read: impl FnOnce(&T) -> R) -> R {
            self.version.load(Ordering::SeqCst);
            read(&self.held())
        }

        /// Runs `write` on the value: one increment of the version, then the closure.
        pub fn write<R>(&self, write: impl FnOnce(&mut T) -> R) -> R {
            self.version.fetch_add(1, Ordering::SeqCst);
            write(&mut self.held())
        }

        /// The unseen lock, free unless a closure reached a scheduling point (and another
        /// thread ran inside it).
        fn held(&self) -> MutexGuard<'_, T> {
            match self.value.try_lock() {
                Ok(guard) => guard,
                Err(TryLockError::Poisoned(poisoned)) => PoisonError::into_inner(poisoned),
                Err(TryLockError::WouldBlock) => {
                    panic!("RwCell closure reached a scheduling point")
                }
            }
        }
    }
}

#[cfg(all(feature = "shuttle", not(loom)))]
mod shuttle_backend {
    use super::super::shuttle::point;
    use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

    /// A value read and written in short closures, whose reads commute (see the module
    /// docs): here, as in loom, a scheduling point and a lock shuttle does not see, so an
    /// access is one scheduling point (a shuttle lock is two: its acquire and its release).
    #[derive(Debug, Default)]
    pub struct RwCell<T> {
        value: Mutex<T>,
    }

    impl<T> RwCell<T> {
        /// A cell holding `value`.
        pub fn new(value: T) -> Self {
            Self {
                value: Mutex::new(value),
            }
        }

        /// Runs `read` on the value: a scheduling point (none while the task runs alone),
        /// then the closure.
        pub fn read<R>(&self, read: impl FnOnce(&T) -> R) -> R {
            point();
            read(&self.held())
        }

        /// Runs `write` on the value: a scheduling point (none while the task runs
        /// alone), then the closure.
        pub fn write<R>(&self, write: impl FnOnce(&mut T) -> R) -> R {
            point();
            write(&mut self.held())
        }

        /// The unseen lock, free unless a closure reached a scheduling point (and another
        /// task ran inside it).
        fn held(&self) -> MutexGuard<'_, T> {
            match self.value.try_lock() {
                Ok(guard) => guard,
                Err(TryLockError::Poisoned(poisoned)) => PoisonError::into_inner(poisoned),
                Err(TryLockError::WouldBlock) => {
                    panic!("RwCell closure reached a scheduling point")
                }
            }
        }
    }
}
