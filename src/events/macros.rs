//! The event macros: `tracing`'s syntax, the typed path first.
//!
//! `debug!(node = %id, term = t, ?reason, "command dropped")` declares the call site once
//! (a static [`EventSite`](super::EventSite)) and, where a hook is installed, hands it the
//! values as [`Arg`](super::Arg)s: `%value` as an id ([`EventId`](super::EventId)), a
//! fixed text ([`EventText`](super::EventText)) or its `Display`, `?value` as its `Debug`, a plain value by [`EventValue`](super::EventValue).
//! Where none is, it is `tracing::debug!` with the same fields. A call may start with
//! `target: T,` and must end with a literal message (the recorder routes by call site).
//! The values are evaluated only when the event is emitted, and once, before the hook is
//! entered (evaluating one may reach a checker's scheduling point, and another task's
//! events must not find the hook busy).

/// A protocol event at `DEBUG` (see the module's docs).
macro_rules! event_debug {
    ($($call:tt)+) => { $crate::events::macros::event_body!(@level DEBUG, $($call)+) };
}

/// A protocol event at `INFO`.
macro_rules! event_info {
    ($($call:tt)+) => { $crate::events::macros::event_body!(@level INFO, $($call)+) };
}

/// A protocol event at `WARN`.
macro_rules! event_warn {
    ($($call:tt)+) => { $crate::events::macros::event_body!(@level WARN, $($call)+) };
}

/// The event macros' body: reads the fields one by one into `(name, kind, value)`, then
/// writes the call site and both paths.
macro_rules! event_body {
    (@level $level:ident, target: $target:expr, $($rest:tt)+) => {
        $crate::events::macros::event_body!(@fields ($level, $target) [] $($rest)+)
    };
    (@level $level:ident, $($rest:tt)+) => {
        $crate::events::macros::event_body!(@fields ($level, module_path!()) [] $($rest)+)
    };
    (@fields $head:tt [$($out:tt)*] $message:literal $(,)?) => {
        $crate::events::macros::event_body!(@emit $head [$($out)*] $message)
    };
    (@fields $head:tt [$($out:tt)*] $name:ident = % $value:expr, $($rest:tt)+) => {
        $crate::events::macros::event_body!(@fields $head [$($out)* ($name, display, $value)] $($rest)+)
    };
    (@fields $head:tt [$($out:tt)*] $name:ident = ? $value:expr, $($rest:tt)+) => {
        $crate::events::macros::event_body!(@fields $head [$($out)* ($name, debug, $value)] $($rest)+)
    };
    (@fields $head:tt [$($out:tt)*] $name:ident = $value:expr, $($rest:tt)+) => {
        $crate::events::macros::event_body!(@fields $head [$($out)* ($name, value, $value)] $($rest)+)
    };
    (@fields $head:tt [$($out:tt)*] % $name:ident, $($rest:tt)+) => {
        $crate::events::macros::event_body!(@fields $head [$($out)* ($name, display, $name)] $($rest)+)
    };
    (@fields $head:tt [$($out:tt)*] ? $name:ident, $($rest:tt)+) => {
        $crate::events::macros::event_body!(@fields $head [$($out)* ($name, debug, $name)] $($rest)+)
    };
    (@fields $head:tt [$($out:tt)*] $name:ident, $($rest:tt)+) => {
        $crate::events::macros::event_body!(@fields $head [$($out)* ($name, value, $name)] $($rest)+)
    };
    (@emit ($level:ident, $target:expr) [$(($name:ident, $kind:ident, $value:expr))*] $message:literal) => {{
        static SITE: $crate::events::site::EventSite = $crate::events::site::EventSite {
            target: $target,
            name: $message,
            fields: &[$(stringify!($name)),*],
            level: ::tracing::Level::$level,
        };
        #[allow(unused_imports)]
        use $crate::events::arg::{ShownDisplay as _, ShownId as _, ShownText as _};
        if $crate::events::hook::hooked() {
            $crate::events::hook::emit(
                &SITE.site(),
                &[$($crate::events::macros::event_body!(@arg $kind $value)),*],
            );
        } else {
            ::tracing::event!(
                target: $target,
                ::tracing::Level::$level,
                $($name = $crate::events::macros::event_body!(@traced $kind $value),)*
                $message
            );
        }
    }};
    (@arg display $value:expr) => { (&&&$crate::events::arg::Shown(&$value)).arg() };
    (@arg debug $value:expr) => { $crate::events::arg::Arg::Debug(&$value) };
    (@arg value $value:expr) => { $crate::events::arg::EventValue::arg(&$value) };
    (@traced display $value:expr) => { ::tracing::field::display(&$value) };
    (@traced debug $value:expr) => { ::tracing::field::debug(&$value) };
    (@traced value $value:expr) => { $crate::events::arg::EventValue::traced(&$value) };
}

pub(crate) use {event_body, event_debug as debug, event_info as info, event_warn as warn};
