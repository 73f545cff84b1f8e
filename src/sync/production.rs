//! Production backend: `parking_lot` locks, `std` atomics and threads,
//! `crossbeam-channel` and `arc-swap`.

pub use arc_swap::ArcSwap;
pub use parking_lot::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use std::sync::{Arc, Weak};

/// Atomic integers (`std::sync::atomic`).
pub mod atomic {
    pub use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
}

/// Threads (`std::thread`). A spawned thread inherits its parent's event hook and `tracing`
/// dispatcher, so a collector installed around a run sees the events of every thread the
/// run starts.
pub mod thread {
    pub use std::thread::{JoinHandle, sleep, yield_now};

    /// Spawns a thread, as `std::thread::spawn` does.
    pub fn spawn<F, T>(f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let inherited = Inherited::current();
        std::thread::spawn(move || inherited.run(f))
    }

    /// Spawns a thread with a name (a failure's story names threads by it). Panics if
    /// the OS cannot start a thread, as `std::thread::spawn` does.
    pub fn spawn_named<F, T>(name: &str, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let inherited = Inherited::current();
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || inherited.run(f))
            .unwrap_or_else(|error| panic!("failed to spawn thread {name}: {error}"))
    }

    /// What a spawned thread takes from its parent: the event hook and the `tracing`
    /// dispatcher.
    struct Inherited {
        hook: Option<crate::events::SharedHook>,
        dispatch: tracing::Dispatch,
    }

    impl Inherited {
        fn current() -> Self {
            Self {
                hook: crate::events::current_hook(),
                dispatch: tracing::dispatcher::get_default(Clone::clone),
            }
        }

        /// Runs `f` with them.
        fn run<T>(self, f: impl FnOnce() -> T) -> T {
            let Self { hook, dispatch } = self;
            let traced = move || tracing::dispatcher::with_default(&dispatch, f);
            match hook {
                Some(hook) => crate::events::with_hook(hook, traced),
                None => traced(),
            }
        }
    }

    /// A number that tells the calling thread from the others, without allocating (a hash
    /// of its id).
    pub fn current_key() -> u64 {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        BuildHasherDefault::<DefaultHasher>::default().hash_one(std::thread::current().id())
    }

    /// The calling thread's name, or its id when it has none.
    pub fn current_label() -> String {
        let current = std::thread::current();
        current
            .name()
            .map_or_else(|| format!("{:?}", current.id()), str::to_owned)
    }
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
/// clock) or of a whole cluster: in the production build, directly.
pub fn run_driver_example<E: std::fmt::Debug>(body: impl FnOnce() -> Result<(), E>) {
    if let Err(error) = body() {
        panic!("the example failed: {error:?}");
    }
}
