//! Loom backend: the raw loom primitives that [`super::model`] wraps into the facade's shape.

pub(super) use loom::sync::{
    Condvar as RawCondvar, Mutex as RawMutex, MutexGuard as RawMutexGuard, RwLock as RawRwLock,
    RwLockReadGuard as RawRwLockReadGuard, RwLockWriteGuard as RawRwLockWriteGuard,
};

/// `std`'s `Arc`, not loom's: a reference count is no protocol state, and loom's makes
/// every clone and drop a scheduling point that two threads' drops of one `Arc` depend
/// on, which multiplies the executions of every model without exploring any order the
/// protocol can tell apart. Loom still sees every lock and atomic behind the `Arc`.
pub use std::sync::{Arc, Weak};

/// Atomic integers (`loom::sync::atomic`).
pub mod atomic {
    pub use loom::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
}

/// Threads (`loom::thread`); `sleep` is a yield because loom does not model time.
pub mod thread {
    pub use loom::thread::{JoinHandle, spawn, yield_now};

    /// Spawns a thread with a name (a failure's story names threads by it).
    pub fn spawn_named<F, T>(name: &str, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        loom::thread::Builder::new()
            .name(name.to_owned())
            .spawn(f)
            .unwrap_or_else(|error| panic!("failed to spawn thread {name}: {error}"))
    }

    /// The calling thread's name, or its id when it has none; loom's thread 0 is the
    /// model's own (shuttle calls it `main-thread`, and so does this).
    pub fn current_label() -> String {
        let current = loom::thread::current();
        match (current.name(), format!("{:?}", current.id())) {
            (Some(name), _) => name.to_owned(),
            (None, id) if id == "ThreadId(0)" => "main-thread".to_owned(),
            (None, id) => id,
        }
    }

    /// A number that tells the calling thread from the others of the execution, without
    /// allocating (a hash of its id).
    pub fn current_key() -> u64 {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        BuildHasherDefault::<DefaultHasher>::default().hash_one(loom::thread::current().id())
    }

    /// Loom does not model time: sleeping is a scheduling point and nothing more.
    pub fn sleep(_duration: std::time::Duration) {
        yield_now();
    }
}

/// An `Arc` of a boxed value, typically a trait object.
pub fn arc_from_box<T: ?Sized>(boxed: Box<T>) -> Arc<T> {
    Arc::from(boxed)
}

/// Runs a documentation example inside a loom model, every interleaving of it (loom's
/// primitives work only inside a model).
pub fn run_example<E: std::fmt::Debug>(body: impl Fn() -> Result<(), E> + Send + Sync + 'static) {
    loom::model(move || {
        if let Err(error) = body() {
            panic!("the example failed: {error:?}");
        }
    });
}
