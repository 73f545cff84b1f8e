//! A call site of an event: static where the event macros declare it, or read back from a
//! `tracing` event's metadata.

/// One call site of an event, static: where it is (the `tracing` target: its module, or
/// the call's `target:`), what it says happened (its literal message), and the names of
/// its values, in the call's order.
#[derive(Debug)]
pub struct EventSite {
    /// The `tracing` target: `hadoop_ref::datanode::state_context`.
    pub target: &'static str,
    /// The event's message: `command queued`.
    pub name: &'static str,
    /// The names of its values, in the call's order (`node` among them).
    pub fields: &'static [&'static str],
    /// The `tracing` level it is emitted at.
    pub level: tracing::Level,
}

impl EventSite {
    /// The site as a hook reads it.
    pub fn site(&'static self) -> Site<'static> {
        Site {
            key: std::ptr::from_ref(self) as usize,
            target: self.target,
            name: self.name,
            fields: self.fields,
        }
    }
}

/// A call site as a hook is handed it: a static [`EventSite`], or a `tracing` event's
/// call site read back ([`with_tracing_event`](super::with_tracing_event)).
#[derive(Debug, Clone, Copy)]
pub struct Site<'a> {
    /// Names the call site for the life of the process (the address of its static
    /// description): a hook may keep what it learned of a site under it.
    pub key: usize,
    /// The `tracing` target.
    pub target: &'a str,
    /// The event's message.
    pub name: &'a str,
    /// The names of its values, in order: the `args` a hook is handed with it are these
    /// fields' values, one each.
    pub fields: &'a [&'static str],
}

/// The crate whose events are hooked (its targets start with it).
pub const TARGET_PREFIX: &str = "hadoop_ref::";

impl Site<'_> {
    /// The component: the target below the crate (`datanode::state_context`).
    pub fn component(&self) -> &str {
        self.target
            .strip_prefix(TARGET_PREFIX)
            .unwrap_or(self.target)
    }
}
