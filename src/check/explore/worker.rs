//! Where a search's workers run: a new OS thread where the facade's primitives work. In
//! the production build that is any thread; in the shuttle build, one shuttle execution of
//! one task on it (`check::shuttle`). The loom build runs no search.

use crate::unmodelled::OsThread;

/// Starts `work` on a worker thread of its own.
pub(super) fn start(work: Box<dyn FnOnce() + Send>) -> OsThread {
    #[cfg(feature = "shuttle")]
    {
        crate::check::shuttle::worker::on_worker_thread(work)
    }
    #[cfg(not(feature = "shuttle"))]
    {
        crate::unmodelled::start_os_thread(work)
    }
}
