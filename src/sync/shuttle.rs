//! Shuttle backend: the raw shuttle primitives that [`super::model`] wraps into the
//! facade's shape for the model channel, the facade's atomics, and its threads, counted
//! while they run so a task knows when it runs alone ([`alone`]).

/// Shuttle's own lock and condition variable, for the model channel (the facade's lock
/// is `shuttle_lock`'s).
pub(super) use shuttle::sync::{
    Condvar as RawCondvar, Mutex as RawMutex, MutexGuard as RawMutexGuard,
};

pub use shuttle::sync::{Arc, Weak};

/// Atomic integers and flags: a shuttle scheduling point, then a `std` atomic (shuttle
/// treats every ordering as `SeqCst`); no point while the task runs alone.
#[path = "shuttle_atomic.rs"]
pub mod atomic;

/// Threads (`shuttle::thread`); `sleep` is a yield because shuttle does not model time.
pub mod thread {
    pub use shuttle::thread::{JoinHandle, yield_now};

    use super::running::Running;

    /// Spawns a thread (`shuttle::thread::spawn`), counted while it runs (see
    /// [`alone`](super::alone)).
    #[track_caller]
    pub fn spawn<F, T>(f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let running = Running::start();
        shuttle::thread::spawn(move || running.around(f))
    }

    /// Spawns a thread with a name (a failure's story names threads by it), counted while
    /// it runs (see [`alone`](super::alone)).
    #[track_caller]
    pub fn spawn_named<F, T>(name: &str, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let running = Running::start();
        shuttle::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || running.around(f))
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

/// Whether the calling task is the only one of its execution that can run: no thread
/// spawned through the facade is still running. A scheduling point then has one choice,
/// and the facade's own points (an `RwCell` access) are left out: a cluster scenario's
/// set-up, heal and final checks run on the main thread alone, and were most of its
/// points. Shuttle's primitives keep theirs.
///
/// Sound because shuttle runs one task at a time and a task alone has nothing to
/// interleave with; the count errs only the safe way (a thread whose closure never ends,
/// or a leaked one, keeps every later point).
pub(super) fn alone() -> bool {
    running::count() == 0
}

/// A scheduling point, unless the calling task runs alone ([`alone`]): the facade's
/// atomics and [`RwCell`](super::RwCell) accesses each take one before their operation.
///
/// It is shuttle's own switch, the one each of shuttle's atomic operations begins with,
/// without the rest of such an operation: the ordering check, and the vector clock an
/// atomic of shuttle's keeps and hands to the task that loads it. The facade keeps its
/// values in `std` types shuttle does not see and reads no shuttle clock, so a point
/// costs only the scheduler's decision; the schedules are the same, point for point,
/// and a saved schedule replays as before.
pub(super) fn point() {
    if !alone() {
        shuttle_engine::runtime::thread::switch();
    }
}

/// The count of the running threads an execution spawned through the facade. All of an
/// execution's tasks run on the OS thread that runs the execution, one at a time, so a
/// thread-local count is the execution's.
mod running {
    use std::cell::Cell;

    thread_local! {
        static RUNNING: Cell<usize> = const { Cell::new(0) };
    }

    /// The running threads spawned through the facade.
    pub(super) fn count() -> usize {
        RUNNING.with(Cell::get)
    }

    /// One spawned thread, counted from its spawn until its closure returns or unwinds
    /// (or, if it never ran, until the execution drops it).
    pub(super) struct Running(());

    impl Running {
        pub(super) fn start() -> Self {
            RUNNING.with(|n| n.set(n.get() + 1));
            Self(())
        }

        /// Runs the thread's closure, counted.
        pub(super) fn around<T>(self, f: impl FnOnce() -> T) -> T {
            let _running = self;
            f()
        }
    }

    impl Drop for Running {
        fn drop(&mut self) {
            RUNNING.with(|n| n.set(n.get().saturating_sub(1)));
        }
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
