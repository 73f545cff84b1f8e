//! Atomic integers and flags for the shuttle build: a scheduling point shuttle sees (the
//! one each of shuttle's atomic operations begins with, [`point`](super::point)), then
//! the operation on a `std` atomic it does not see; no point while the calling task runs
//! alone ([`alone`](super::alone)), where a point has one choice.
//!
//! The same schedules as shuttle's own atomics, which treat every ordering as `SeqCst`:
//! shuttle runs one task at a time and switches only at its points, so the operation
//! takes effect at its point, atomically. A weak compare-exchange never fails spuriously
//! (it is the strong one): a spurious failure would be a choice no schedule records, and
//! a replay would not repeat it.

use std::sync::atomic as std_atomic;

pub use std::sync::atomic::Ordering;

/// The scheduling point before an atomic operation, unless the calling task runs alone
/// (a zero-sized marker: the point is [`super::point`]).
#[derive(Debug, Default)]
struct Point;

impl Point {
    const fn new() -> Self {
        Self
    }

    fn reach(&self) {
        super::point();
    }
}

macro_rules! atomic_integer {
    ($name:ident, $std:ident, $int:ty) => {
        #[doc = concat!("`std::sync::atomic::", stringify!($std), "` with a shuttle scheduling point before each operation (see the module's docs).")]
        #[derive(Debug, Default)]
        pub struct $name {
            point: Point,
            value: std_atomic::$std,
        }

        impl $name {
            /// Holds `value`.
            pub const fn new(value: $int) -> Self {
                Self {
                    point: Point::new(),
                    value: std_atomic::$std::new(value),
                }
            }

            /// Loads the value.
            pub fn load(&self, order: Ordering) -> $int {
                self.point.reach();
                self.value.load(order)
            }

            /// Stores `value`.
            pub fn store(&self, value: $int, order: Ordering) {
                self.point.reach();
                self.value.store(value, order);
            }

            /// Stores `value`, returning the previous value.
            pub fn swap(&self, value: $int, order: Ordering) -> $int {
                self.point.reach();
                self.value.swap(value, order)
            }

            /// Adds `value` (wrapping), returning the previous value.
            pub fn fetch_add(&self, value: $int, order: Ordering) -> $int {
                self.point.reach();
                self.value.fetch_add(value, order)
            }

            /// Subtracts `value` (wrapping), returning the previous value.
            pub fn fetch_sub(&self, value: $int, order: Ordering) -> $int {
                self.point.reach();
                self.value.fetch_sub(value, order)
            }

            /// Stores the maximum of the value and `value`, returning the previous value.
            pub fn fetch_max(&self, value: $int, order: Ordering) -> $int {
                self.point.reach();
                self.value.fetch_max(value, order)
            }

            /// Stores the minimum of the value and `value`, returning the previous value.
            pub fn fetch_min(&self, value: $int, order: Ordering) -> $int {
                self.point.reach();
                self.value.fetch_min(value, order)
            }

            /// Stores `new` if the value is `current`; the previous value either way.
            pub fn compare_exchange(
                &self,
                current: $int,
                new: $int,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$int, $int> {
                self.point.reach();
                self.value.compare_exchange(current, new, success, failure)
            }

            /// As [`compare_exchange`](Self::compare_exchange): never fails spuriously
            /// here (see the module's docs).
            pub fn compare_exchange_weak(
                &self,
                current: $int,
                new: $int,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$int, $int> {
                self.compare_exchange(current, new, success, failure)
            }

            /// The value, from exclusive access (no scheduling point).
            pub fn get_mut(&mut self) -> &mut $int {
                self.value.get_mut()
            }

            /// The value, consuming the atomic.
            pub fn into_inner(self) -> $int {
                self.value.into_inner()
            }
        }
    };
}

atomic_integer!(AtomicU64, AtomicU64, u64);
atomic_integer!(AtomicI64, AtomicI64, i64);
atomic_integer!(AtomicUsize, AtomicUsize, usize);

/// `std::sync::atomic::AtomicBool` with a shuttle scheduling point before each operation
/// (see the module's docs).
#[derive(Debug, Default)]
pub struct AtomicBool {
    point: Point,
    value: std_atomic::AtomicBool,
}

impl AtomicBool {
    /// Holds `value`.
    pub const fn new(value: bool) -> Self {
        Self {
            point: Point::new(),
            value: std_atomic::AtomicBool::new(value),
        }
    }

    /// Loads the flag.
    pub fn load(&self, order: Ordering) -> bool {
        self.point.reach();
        self.value.load(order)
    }

    /// Stores `value`.
    pub fn store(&self, value: bool, order: Ordering) {
        self.point.reach();
        self.value.store(value, order);
    }

    /// Stores `value`, returning the previous flag.
    pub fn swap(&self, value: bool, order: Ordering) -> bool {
        self.point.reach();
        self.value.swap(value, order)
    }

    /// Stores `new` if the flag is `current`; the previous flag either way.
    pub fn compare_exchange(
        &self,
        current: bool,
        new: bool,
        success: Ordering,
        failure: Ordering,
    ) -> Result<bool, bool> {
        self.point.reach();
        self.value.compare_exchange(current, new, success, failure)
    }

    /// The flag, from exclusive access (no scheduling point).
    pub fn get_mut(&mut self) -> &mut bool {
        self.value.get_mut()
    }

    /// The flag, consuming the atomic.
    pub fn into_inner(self) -> bool {
        self.value.into_inner()
    }
}
