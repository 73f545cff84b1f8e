//! The facade's `Mutex`, `Condvar` and `RwLock` for the shuttle build: shuttle's
//! semaphore (one permit a mutex; one a reader, all a writer) around a `std` lock it does
//! not see. Taking a lock is a scheduling point; releasing it is not (below). While the
//! calling task runs alone ([`alone`](super::shuttle::alone)), a lock is the `std` one
//! only, with no scheduling point.
//!
//! **Why.** A cluster scenario builds, heals and checks its cluster on the main thread
//! alone, where every point has one choice; shuttle's lock took two of them for each
//! lock there.
//!
//! **No point at a release.** Shuttle's own lock switches before it releases. That point
//! adds no behavior: a step another task takes there, between the holder's last step
//! under the lock and the release, either does not touch the lock, and then commutes
//! with the release, or tries to take it, and then blocks until the release, which is
//! the same as taking it after. So every state reachable with the point is reachable
//! without it (the reasoning of shuttle's own double-yield optimization), and a lock
//! costs one point instead of two.
//!
//! **A lock taken alone, then contended.** A thread spawned while the main thread holds
//! a lock it took alone takes the free permit and finds the value held. It keeps the
//! permit (later contenders wait for it as for any holder), marks that the holder owes
//! it a hand-off, and waits on a second semaphore of no permits; the holder's unlock
//! releases the value, then hands off (a scheduling point). So a lock is exclusive,
//! blocks in shuttle (a deadlock is still reported as one), and releases at a
//! scheduling point whenever a thread that started waiting while it ran alone waits.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{PoisonError, TryLockError};

use shuttle_engine::future::batch_semaphore::{BatchSemaphore, Fairness};

use super::shuttle::alone;

/// No task holds the lock (task ids are stored plus one).
const NO_HOLDER: usize = 0;

/// A mutual exclusion lock whose `lock()` returns the guard directly (see the module's
/// docs for how it runs under shuttle).
#[derive(Debug)]
pub struct Mutex<T> {
    permit: BatchSemaphore,
    /// The task holding the lock, plus one ([`NO_HOLDER`] when free): a task locking a
    /// lock it holds is a deadlock, reported as shuttle's own lock reports it.
    holder: AtomicUsize,
    /// A contender holds the permit and waits for the holder that took the lock alone
    /// to hand it off (on `handoff`, which has no permit until then).
    owes_handoff: AtomicBool,
    handoff: BatchSemaphore,
    value: std::sync::Mutex<T>,
}

/// The guard of a [`Mutex`]; the lock is released when it is dropped.
#[derive(Debug)]
pub struct MutexGuard<'a, T> {
    mutex: &'a Mutex<T>,
    /// `None` only for the duration of [`Condvar::wait`].
    value: Option<std::sync::MutexGuard<'a, T>>,
    /// Taken alone: no permit held of its own.
    alone: bool,
}

/// `semaphore.acquire_blocking(permits)`: the same scheduling points and the same
/// outcome, without the future shuttle's blocking acquire builds, pins and polls when the
/// permits are free. Shuttle's acquire takes its one point when the permits are free as
/// it starts (then takes them, or, another task having taken them at the point, waits);
/// when they are not, it waits without a point first. `try_acquire` is that point and
/// that take; a failed one falls through to the blocking acquire, which finds no permit
/// (nothing ran since the point) and so waits with no point of its own, as shuttle's
/// would have.
fn acquire(semaphore: &BatchSemaphore, permits: usize) {
    let free = !semaphore.is_closed() && semaphore.available_permits() >= permits;
    if free && semaphore.try_acquire(permits).is_ok() {
        return;
    }
    // An acquire fails only once the execution stopped (shuttle's lock then takes the
    // lock as if it were free, and so does this).
    let _ = semaphore.acquire_blocking(permits);
}

/// The calling task's id plus one.
fn me() -> usize {
    usize::from(shuttle::current::me()) + 1
}

impl<T> Mutex<T> {
    /// Creates an unlocked mutex holding `value`.
    pub fn new(value: T) -> Self {
        Self {
            permit: BatchSemaphore::const_new(1, Fairness::Unfair),
            holder: AtomicUsize::new(NO_HOLDER),
            owes_handoff: AtomicBool::new(false),
            handoff: BatchSemaphore::const_new(0, Fairness::Unfair),
            value: std::sync::Mutex::new(value),
        }
    }

    /// Blocks until the lock is held.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        let me = me();
        assert!(
            self.holder.load(Ordering::Relaxed) != me,
            "deadlock! task {} tried to acquire a Mutex it already holds",
            me - 1
        );
        let (value, alone) = if alone() {
            (self.take_alone(), true)
        } else {
            (self.take_with_permit(), false)
        };
        self.holder.store(me, Ordering::Relaxed);
        MutexGuard {
            mutex: self,
            value: Some(value),
            alone,
        }
    }

    /// The value, with no scheduling point: the calling task is the only one that runs,
    /// and does not hold the lock (checked by the caller), so nothing else can.
    fn take_alone(&self) -> std::sync::MutexGuard<'_, T> {
        match self.value.try_lock() {
            Ok(value) => value,
            Err(TryLockError::Poisoned(poisoned)) => PoisonError::into_inner(poisoned),
            Err(TryLockError::WouldBlock) => {
                panic!("a task alone found a Mutex held by a thread that has ended")
            }
        }
    }

    /// The permit (a scheduling point, blocking while another task holds it), then the
    /// value; a value held by a task that took it alone is waited for (module docs).
    fn take_with_permit(&self) -> std::sync::MutexGuard<'_, T> {
        acquire(&self.permit, 1);
        loop {
            match self.value.try_lock() {
                Ok(value) => return value,
                Err(TryLockError::Poisoned(poisoned)) => return PoisonError::into_inner(poisoned),
                Err(TryLockError::WouldBlock) => {
                    // Held by a guard taken alone (a permit holder would have kept the
                    // permit): wait for its hand-off, keeping the permit.
                    self.owes_handoff.store(true, Ordering::Relaxed);
                    acquire(&self.handoff, 1);
                }
            }
        }
    }

    /// Consumes the mutex and returns the value.
    pub fn into_inner(self) -> T {
        self.value
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
    /// Releases the lock: the value, then the permit this guard holds (no scheduling
    /// point: see the module's docs), or, taken alone, the hand-off a contender waits for
    /// (a scheduling point); taken alone and uncontended, nothing more.
    fn unlock(&mut self) {
        self.value = None;
        self.mutex.holder.store(NO_HOLDER, Ordering::Relaxed);
        if !self.alone {
            self.mutex.permit.release_no_scheduling_point(1);
        } else if self.mutex.owes_handoff.swap(false, Ordering::Relaxed) {
            self.mutex.handoff.release(1);
        }
    }
}

impl<T> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        if self.value.is_some() {
            self.unlock();
        }
    }
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        match &self.value {
            Some(value) => value,
            None => unreachable!("a MutexGuard is vacated only inside Condvar::wait"),
        }
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        match &mut self.value {
            Some(value) => value,
            None => unreachable!("a MutexGuard is vacated only inside Condvar::wait"),
        }
    }
}

/// A condition variable whose `wait` borrows the guard, as in `parking_lot`: shuttle's
/// condition variable behind a gate of its own (a shuttle lock), taken before the
/// caller's lock is released, so a notification sent once the waiter released it is not
/// lost, and shuttle picks which waiter a `notify_one` wakes.
#[derive(Debug, Default)]
pub struct Condvar {
    gate: shuttle::sync::Mutex<()>,
    raw: shuttle::sync::Condvar,
}

impl Condvar {
    /// Creates a condition variable with no waiters.
    pub fn new() -> Self {
        Self::default()
    }

    /// Releases the guard's lock, blocks until notified, and takes the lock again.
    pub fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
        let gate = self.gate.lock().unwrap_or_else(PoisonError::into_inner);
        guard.unlock();
        let gate = self.raw.wait(gate).unwrap_or_else(PoisonError::into_inner);
        drop(gate);
        let relocked = guard.mutex.lock();
        guard.alone = relocked.alone;
        let mut relocked = std::mem::ManuallyDrop::new(relocked);
        guard.value = relocked.value.take();
    }

    /// Wakes one waiter.
    pub fn notify_one(&self) {
        let _gate = self.gate.lock().unwrap_or_else(PoisonError::into_inner);
        self.raw.notify_one();
    }

    /// Wakes every waiter.
    pub fn notify_all(&self) {
        let _gate = self.gate.lock().unwrap_or_else(PoisonError::into_inner);
        self.raw.notify_all();
    }
}

/// Permits of a [`RwLock`]'s semaphore: a reader takes one, a writer all (as shuttle's
/// own read-write lock counts them).
const MAX_READS: usize = (u32::MAX >> 3) as usize;

/// A reader-writer lock whose `read()` and `write()` return the guards directly, run as
/// the module's [`Mutex`] is: shuttle's semaphore (one permit a reader, all of them a
/// writer) around a `std` lock it does not see, nothing but the `std` lock while the
/// task runs alone. As shuttle's own, a task may not take a read lock it holds again.
#[derive(Debug)]
pub struct RwLock<T> {
    permits: BatchSemaphore,
    /// The writer (task id plus one), and the readers: a task locking what it holds is a
    /// deadlock.
    writer: AtomicUsize,
    readers: std::sync::Mutex<Vec<usize>>,
    /// A guard taken alone is held (at most one: only the main thread takes one, and
    /// never twice).
    alone_held: AtomicBool,
    /// Contenders waiting for that guard's hand-off: several readers may be.
    owes_handoff: AtomicUsize,
    handoff: BatchSemaphore,
    value: std::sync::RwLock<T>,
}

/// Shared guard of a [`RwLock`].
#[derive(Debug)]
pub struct RwLockReadGuard<'a, T> {
    lock: &'a RwLock<T>,
    value: Option<std::sync::RwLockReadGuard<'a, T>>,
    alone: bool,
}

/// Exclusive guard of a [`RwLock`].
#[derive(Debug)]
pub struct RwLockWriteGuard<'a, T> {
    lock: &'a RwLock<T>,
    value: Option<std::sync::RwLockWriteGuard<'a, T>>,
    alone: bool,
}

impl<T> RwLock<T> {
    /// Creates an unlocked lock holding `value`.
    pub fn new(value: T) -> Self {
        Self {
            permits: BatchSemaphore::const_new(MAX_READS, Fairness::Unfair),
            writer: AtomicUsize::new(NO_HOLDER),
            readers: std::sync::Mutex::new(Vec::new()),
            alone_held: AtomicBool::new(false),
            owes_handoff: AtomicUsize::new(0),
            handoff: BatchSemaphore::const_new(0, Fairness::Unfair),
            value: std::sync::RwLock::new(value),
        }
    }

    /// Blocks until a shared lock is held.
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        let me = self.not_held_by_me();
        let alone = alone();
        if !alone {
            acquire(&self.permits, 1);
        }
        let value = loop {
            match self.value.try_read() {
                Ok(value) => break value,
                Err(TryLockError::Poisoned(poisoned)) => break PoisonError::into_inner(poisoned),
                Err(TryLockError::WouldBlock) => self.wait_for_handoff(alone),
            }
        };
        self.readers_with(|readers| readers.push(me));
        self.alone_held.store(alone, Ordering::Relaxed);
        RwLockReadGuard {
            lock: self,
            value: Some(value),
            alone,
        }
    }

    /// Blocks until the exclusive lock is held.
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        let me = self.not_held_by_me();
        let alone = alone();
        if !alone {
            acquire(&self.permits, MAX_READS);
        }
        let value = loop {
            match self.value.try_write() {
                Ok(value) => break value,
                Err(TryLockError::Poisoned(poisoned)) => break PoisonError::into_inner(poisoned),
                Err(TryLockError::WouldBlock) => self.wait_for_handoff(alone),
            }
        };
        self.writer.store(me, Ordering::Relaxed);
        self.alone_held.store(alone, Ordering::Relaxed);
        RwLockWriteGuard {
            lock: self,
            value: Some(value),
            alone,
        }
    }

    /// The calling task's id plus one, after checking it holds neither side.
    fn not_held_by_me(&self) -> usize {
        let me = me();
        let reading = self.readers_with(|readers| readers.contains(&me));
        assert!(
            self.writer.load(Ordering::Relaxed) != me && !reading,
            "deadlock! task {} tried to acquire a RwLock it already holds",
            me - 1
        );
        me
    }

    /// The lock is held by the guard the main thread took alone (a permit holder would
    /// have kept this task from its permits): wait for its hand-off, keeping the permits.
    fn wait_for_handoff(&self, alone: bool) {
        assert!(
            !alone,
            "a task alone found a RwLock held by a thread that has ended"
        );
        self.owes_handoff.fetch_add(1, Ordering::Relaxed);
        acquire(&self.handoff, 1);
    }

    fn readers_with<R>(&self, f: impl FnOnce(&mut Vec<usize>) -> R) -> R {
        f(&mut self.readers.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// After a guard released the value: its permits back (no scheduling point: see the
    /// module's docs), or, taken alone, the hand-off a contender waits for (a point).
    fn release(&self, alone: bool, permits: usize) {
        if !alone {
            self.permits.release_no_scheduling_point(permits);
            return;
        }
        self.alone_held.store(false, Ordering::Relaxed);
        let waiting = self.owes_handoff.swap(0, Ordering::Relaxed);
        if waiting > 0 {
            self.handoff.release(waiting);
        }
    }
}

impl<T: Default> Default for RwLock<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        self.value = None;
        let me = me();
        self.lock
            .readers_with(|readers| readers.retain(|&r| r != me));
        self.lock.release(self.alone, 1);
    }
}

impl<T> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.value = None;
        self.lock.writer.store(NO_HOLDER, Ordering::Relaxed);
        self.lock.release(self.alone, MAX_READS);
    }
}

impl<T> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        match &self.value {
            Some(value) => value,
            None => unreachable!("a guard's value is taken only as it drops"),
        }
    }
}

impl<T> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        match &self.value {
            Some(value) => value,
            None => unreachable!("a guard's value is taken only as it drops"),
        }
    }
}

impl<T> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        match &mut self.value {
            Some(value) => value,
            None => unreachable!("a guard's value is taken only as it drops"),
        }
    }
}
