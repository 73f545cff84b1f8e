//! An explorer's worker in the shuttle build: a new OS thread running one shuttle
//! execution of one task, where the facade's primitives work and, the task running
//! alone, take no scheduling point.

use shuttle::scheduler::RandomScheduler;
use shuttle::{Config, Runner};

use crate::unmodelled::{OsThread, Shared, start_os_thread};

/// Runs `work` inside one shuttle execution on a new OS thread.
pub(crate) fn on_worker_thread(work: Box<dyn FnOnce() + Send>) -> OsThread {
    start_os_thread(move || {
        let work = Shared::new(Some(work));
        let mut config = Config::new();
        config.silence_warnings = true;
        config.max_steps = shuttle::MaxSteps::None;
        // One scheduler iteration: the closure runs once.
        Runner::new(RandomScheduler::new(1), config).run(move || {
            if let Some(work) = work.take() {
                work();
            }
        });
    })
}
