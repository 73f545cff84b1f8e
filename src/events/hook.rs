//! The hook installed on a thread: where that thread's events go, typed, without `tracing`.
//!
//! One per OS thread. A checker's tasks all run on the OS thread that started the run
//! (loom's and shuttle's executions do), so the run's hook sees every task's events; a
//! production thread started through the sync facade is handed its parent's
//! (`crate::sync::thread::spawn`). A process may also set one hook for every thread that
//! has none of its own ([`set_global_hook`]).

use crate::unmodelled::{Handle, Once};
use std::cell::{Cell, RefCell};

use super::arg::Arg;
use super::site::Site;

/// Where a thread's events go, with their values as they are.
pub trait EventHook: Send + Sync {
    /// One event: its call site and its values, one per field of the site, in order.
    /// Called on the emitting thread; an event the hook emits in turn is dropped, as
    /// `tracing` drops an event its subscriber emits.
    fn event(&self, site: &Site<'_>, args: &[Arg<'_>]);
}

/// A hook as a thread holds it (shared with the threads it starts).
pub type SharedHook = Handle<dyn EventHook>;

thread_local! {
    /// The hook of this OS thread, if one is installed.
    static HOOK: RefCell<Option<SharedHook>> = const { RefCell::new(None) };
    /// Whether this thread is inside its hook or silenced: an event emitted then is
    /// dropped.
    static BUSY: Cell<bool> = const { Cell::new(false) };
}

/// The hook of the threads that have none of their own, once set.
static GLOBAL: Once<SharedHook> = Once::new();

/// Sets `hook` as the hook of every thread that has none of its own, for the rest of the
/// process (a production process's event log). Returns it back if one is already set.
pub fn set_global_hook(hook: SharedHook) -> Result<(), SharedHook> {
    GLOBAL.set(hook)
}

/// `hook` as [`with_hook`] takes it.
pub fn hook(hook: impl EventHook + 'static) -> SharedHook {
    Handle::new(hook)
}

/// Runs `f` with `hook` taking the calling thread's events, and the hook it had before
/// back afterwards (also when `f` unwinds).
pub fn with_hook<T>(hook: SharedHook, f: impl FnOnce() -> T) -> T {
    let previous = HOOK.with(|current| current.replace(Some(hook)));
    let _restore = Restore(previous);
    f()
}

/// Runs `f` with no hook and no `tracing` subscriber taking the calling thread's events:
/// a component that must not be seen for a while (the standby's dry run of a batch).
pub fn silenced<T>(f: impl FnOnce() -> T) -> T {
    let was_busy = BUSY.replace(true);
    let _restore = Unsilence(was_busy);
    // `Dispatch::none` is registered with no callsite: a new subscriber here would make
    // `tracing` rebuild every callsite's interest at each silence.
    tracing::dispatcher::with_default(&tracing::Dispatch::none(), f)
}

/// The calling thread's own hook, for a thread it starts ([`with_hook`] there).
pub fn current_hook() -> Option<SharedHook> {
    HOOK.with(|current| current.borrow().clone())
}

/// Ends a thread's silence (unless it was already silent).
struct Unsilence(bool);

impl Drop for Unsilence {
    fn drop(&mut self) {
        BUSY.set(self.0);
    }
}

/// Puts a thread's previous hook back.
struct Restore(Option<SharedHook>);

impl Drop for Restore {
    fn drop(&mut self) {
        let previous = self.0.take();
        HOOK.with(|current| *current.borrow_mut() = previous);
    }
}

/// Whether the calling thread has a hook that takes its events now (it is not inside
/// it): if not, the caller emits the event through `tracing`. The caller then evaluates
/// the event's values, which may reach a scheduling point of a checker's model and let
/// another task run and emit its own, and hands them over with [`emit`].
#[inline]
pub fn hooked() -> bool {
    !BUSY.get()
        && (GLOBAL.get().is_some()
            || HOOK.with(|current| current.try_borrow().is_ok_and(|hook| hook.is_some())))
}

/// Hands an event (call site `site`, values `args`) to the calling thread's hook, if it
/// has one; an event emitted from inside the hook is dropped, as `tracing` drops an event
/// its subscriber emits.
#[inline]
pub fn emit(site: &Site<'_>, args: &[Arg<'_>]) {
    HOOK.with(|current| {
        let Ok(current) = current.try_borrow() else {
            return;
        };
        let Some(hook) = current.as_ref().or_else(|| GLOBAL.get()) else {
            return;
        };
        if BUSY.replace(true) {
            return;
        }
        let _idle = Idle;
        hook.event(site, args);
    });
}

/// Marks the thread out of its hook, also when the hook unwinds.
struct Idle;

impl Drop for Idle {
    fn drop(&mut self) {
        BUSY.set(false);
    }
}
