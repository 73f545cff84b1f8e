//! `ArcSwap` for the model builds: an [`RwCell`]`<Arc<T>>` with `arc-swap`'s API, because
//! neither checker can see inside `arc-swap`'s lock-free code. Loads commute with loads,
//! as `arc-swap`'s do; a store conflicts with every access.

use super::model::Arc;
use super::rw_cell::RwCell;

/// An atomically replaceable `Arc<T>` (the subset of `arc_swap::ArcSwap` the crate uses).
#[derive(Debug)]
pub struct ArcSwap<T> {
    current: RwCell<Arc<T>>,
}

impl<T> ArcSwap<T> {
    /// Starts out holding `value`.
    pub fn new(value: Arc<T>) -> Self {
        Self {
            current: RwCell::new(value),
        }
    }

    /// Starts out holding a new `Arc` of `value`.
    pub fn from_pointee(value: T) -> Self {
        Self::new(Arc::new(value))
    }

    /// The current value.
    pub fn load_full(&self) -> Arc<T> {
        self.current.read(Arc::clone)
    }

    /// Replaces the current value.
    pub fn store(&self, value: Arc<T>) {
        self.current.write(|current| *current = value);
    }

    /// Replaces the current value and returns the previous one.
    pub fn swap(&self, value: Arc<T>) -> Arc<T> {
        self.current
            .write(|current| std::mem::replace(current, value))
    }
}
