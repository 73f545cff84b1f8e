//! Shuttle backend: the raw shuttle primitives that [`super::model`] wraps into the
//! facade's shape.

pub(super) use shuttle::sync::{
    Condvar as RawCondvar, Mutex as RawMutex, MutexGuard as RawMutexGuard, RwLock as RawRwLock,
    RwLockReadGuard as RawRwLockReadGuard, RwLockWriteGuard as RawRwLockWriteGuard,
};

pub use shuttle::sync::{Arc, Weak};

/// Atomic integers (`shuttle::sync::atomic`; shuttle treats every ordering as `SeqCst`).
pub mod atomic {
    pub use shuttle::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
}

/// Threads (`shuttle::thread`); `sleep` is a yield because shuttle does not model time.
pub mod thread {
    pub use shuttle::thread::{JoinHandle, spawn, yield_now};

    /// Spawns a thread with a name (a failure's story names threads by it).
    pub fn spawn_named<F, T>(name: &str, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        shuttle::thread::Builder::new()
            .name(name.to_owned())
            .spawn(f)
            .unwrap_or_else(|error| panic!("failed to spawn thread {name}: {error}"))
    }

    /// The calling thread's name, or its id when it has none.
    pub fn current_label() -> String {
        let current = shuttle::thread::current();
        current
            .name()
            .map_or_else(|| format!("{:?}", current.id()), str::to_owned)
    }

    /// A number that tells the calling thread from the others of the execution, without
    /// allocating (its task id; a coverage count keys racing events by it). Never panics:
    /// `u64::MAX` outside an execution (a destructor, shuttle's own teardown).
    pub fn current_key() -> u64 {
        shuttle::current::try_get_current_task()
            .and_then(|task| u64::try_from(usize::from(task)).ok())
            .unwrap_or(u64::MAX)
    }

    /// Shuttle does not model time: sleeping is a scheduling point and nothing more.
    pub fn sleep(_duration: std::time::Duration) {
        yield_now();
    }
}

/// An `Arc` of a boxed value, typically a trait object.
pub fn arc_from_box<T: ?Sized>(boxed: Box<T>) -> Arc<T> {
    Arc::from(boxed)
}

/// Runs a documentation example inside shuttle, under one random schedule (shuttle's
/// primitives work only inside a test run).
pub fn run_example<E: std::fmt::Debug>(body: impl Fn() -> Result<(), E> + Send + Sync + 'static) {
    shuttle::check_random(
        move || {
            if let Err(error) = body() {
                panic!("the example failed: {error:?}");
            }
        },
        1,
    );
}
