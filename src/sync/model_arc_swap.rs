//! `ArcSwap` for the model builds: an `RwLock<Arc<T>>` with `arc-swap`'s API, because
//! neither checker can see inside `arc-swap`'s lock-free code.

use super::model::{Arc, RwLock};

/// An atomically replaceable `Arc<T>` (the subset of `arc_swap::ArcSwap` the crate uses).
#[derive(Debug)]
pub struct ArcSwap<T> {
    current: RwLock<Arc<T>>,
}

impl<T> ArcSwap<T> {
    /// Starts out holding `value`.
    pub fn new(value: Arc<T>) -> Self {
        Self {
            current: RwLock::new(value),
        }
    }

    /// Starts out holding a new `Arc` of `value`.
    pub fn from_pointee(value: T) -> Self {
        Self::new(Arc::new(value))
    }

    /// The current value.
    pub fn load_full(&self) -> Arc<T> {
        Arc::clone(&self.current.read())
    }

    /// Replaces the current value.
    pub fn store(&self, value: Arc<T>) {
        *self.current.write() = value;
    }

    /// Replaces the current value and returns the previous one.
    pub fn swap(&self, value: Arc<T>) -> Arc<T> {
        std::mem::replace(&mut *self.current.write(), value)
    }
}
