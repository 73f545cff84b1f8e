//! One value of an event, as the call site has it: an integer or a flag as itself, an id
//! as its prefix and number, anything else as the `Display` or `Debug` the call names,
//! formatted only when someone writes it out.

use std::fmt;

/// One value of an event.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    /// No value: an `Option` that is `None` (the event is written without the field).
    Absent,
    /// A non-negative integer: an id's number, a term, a count.
    U64(u64),
    /// A negative integer: a signed value that is not negative is a `U64`
    /// ([`Arg::signed`]), as a log reads it back.
    I64(i64),
    /// A flag.
    Bool(bool),
    /// A text.
    Str(&'a str),
    /// An id, written as its prefix then its number (`dn3`).
    Id {
        /// What it is: `dn`, `scm`, `c`, `blk_`.
        prefix: &'static str,
        /// Its number.
        number: u64,
    },
    /// A value written by its `Display` (`%value` at the call).
    Display(&'a dyn fmt::Display),
    /// A value written by its `Debug` (`?value` at the call).
    Debug(&'a dyn fmt::Debug),
}

impl Arg<'_> {
    /// A signed integer: a `U64` when it is not negative, else an `I64`.
    pub fn signed(n: i64) -> Self {
        match u64::try_from(n) {
            Ok(n) => Arg::U64(n),
            Err(_) => Arg::I64(n),
        }
    }
}

impl fmt::Debug for Arg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Absent => f.write_str("Absent"),
            other => write!(f, "Arg({other})"),
        }
    }
}

/// The value's text, as the call's `Display` or `Debug` (or a `tracing` subscriber)
/// writes it; nothing for an absent value.
impl fmt::Display for Arg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Arg::Absent => Ok(()),
            Arg::U64(n) => fmt::Display::fmt(&n, f),
            Arg::I64(n) => fmt::Display::fmt(&n, f),
            Arg::Bool(b) => fmt::Display::fmt(&b, f),
            Arg::Str(text) => f.write_str(text),
            Arg::Id { prefix, number } => {
                f.write_str(prefix)?;
                fmt::Display::fmt(&number, f)
            }
            Arg::Display(value) => fmt::Display::fmt(value, f),
            Arg::Debug(value) => fmt::Debug::fmt(value, f),
        }
    }
}

/// A protocol identifier written as a prefix and a number (`dn3`, `scm1`, `c7`): an event
/// hands it over as those two, and a hook compares or counts it without formatting.
pub trait EventId {
    /// What its `Display` writes before the number.
    const PREFIX: &'static str;
    /// Its number.
    fn number(&self) -> u64;
}

/// Implements [`EventId`] and [`EventValue`] for an id type whose `Display` writes
/// `prefix` then the number `number(id)` gives: `event_id!(DatanodeId, "dn", |id| id.0)`.
macro_rules! event_id {
    ($type:ty, $prefix:literal, |$id:ident| $number:expr) => {
        impl $crate::events::arg::EventId for $type {
            const PREFIX: &'static str = $prefix;

            fn number(&self) -> u64 {
                let $id = self;
                $number
            }
        }

        impl $crate::events::arg::EventValue for $type {
            fn arg(&self) -> $crate::events::arg::Arg<'_> {
                $crate::events::arg::Arg::Id {
                    prefix: $prefix,
                    number: $crate::events::arg::EventId::number(self),
                }
            }

            fn traced(&self) -> impl tracing::Value + '_ {
                tracing::field::display(self)
            }
        }
    };
}

pub(crate) use event_id;

/// A value an event names without `%` or `?`: an integer, a flag, a text, an id, or an
/// `Option` of one (absent when `None`).
pub trait EventValue {
    /// The value as an event hands it to a hook.
    fn arg(&self) -> Arg<'_>;

    /// The value as a `tracing` event records it.
    fn traced(&self) -> impl tracing::Value + '_;
}

macro_rules! integer_values {
    ($variant:ident as $wide:ty: $($t:ty),*) => {$(
        impl EventValue for $t {
            fn arg(&self) -> Arg<'_> {
                Arg::$variant(<$wide>::from(*self))
            }

            fn traced(&self) -> impl tracing::Value + '_ {
                <$wide>::from(*self)
            }
        }
    )*};
}

integer_values!(U64 as u64: u64, u32, u16, u8);
integer_values!(signed as i64: i64, i32);

impl EventValue for usize {
    fn arg(&self) -> Arg<'_> {
        // A count: a usize is at most 64 bits on every platform this crate builds for.
        Arg::U64(*self as u64)
    }

    fn traced(&self) -> impl tracing::Value + '_ {
        *self as u64
    }
}

impl EventValue for bool {
    fn arg(&self) -> Arg<'_> {
        Arg::Bool(*self)
    }

    fn traced(&self) -> impl tracing::Value + '_ {
        *self
    }
}

impl EventValue for str {
    fn arg(&self) -> Arg<'_> {
        Arg::Str(self)
    }

    fn traced(&self) -> impl tracing::Value + '_ {
        self
    }
}

impl EventValue for String {
    fn arg(&self) -> Arg<'_> {
        Arg::Str(self)
    }

    fn traced(&self) -> impl tracing::Value + '_ {
        self.as_str()
    }
}

impl<T: EventValue + ?Sized> EventValue for &T {
    fn arg(&self) -> Arg<'_> {
        (**self).arg()
    }

    fn traced(&self) -> impl tracing::Value + '_ {
        (**self).traced()
    }
}

impl<T: EventValue> EventValue for Option<T> {
    fn arg(&self) -> Arg<'_> {
        self.as_ref().map_or(Arg::Absent, EventValue::arg)
    }

    fn traced(&self) -> impl tracing::Value + '_ {
        self.as_ref().map(EventValue::traced)
    }
}

/// A value `tracing::field::display` wrapped (an `Option` of one, at a call that writes
/// it only when present): written by its `Display`.
impl<T: fmt::Display> EventValue for tracing::field::DisplayValue<T> {
    fn arg(&self) -> Arg<'_> {
        Arg::Debug(self)
    }

    fn traced(&self) -> impl tracing::Value + '_ {
        self
    }
}

/// A value whose `Display` writes one of a few fixed texts (a state, a reason): an event
/// hands it over as that text, which a hook compares without formatting.
pub trait EventText {
    /// What its `Display` writes.
    fn text(&self) -> &'static str;
}

/// A value named with `%` at a call: an [`EventId`] is handed over as one ([`ShownId`]),
/// an [`EventText`] as its text ([`ShownText`]), anything else as its `Display`
/// ([`ShownDisplay`]). The call writes `(&&&Shown(&value)).arg()` with the three traits in
/// scope: method lookup tries the impl on the most-referenced type first, so the most
/// specific impl that applies is the one picked.
pub struct Shown<'a, T: ?Sized>(pub &'a T);

/// [`Shown`] of an id.
pub trait ShownId {
    /// The id as its prefix and number.
    fn arg(&self) -> Arg<'_>;
}

impl<T: EventId + ?Sized> ShownId for &&Shown<'_, T> {
    fn arg(&self) -> Arg<'_> {
        Arg::Id {
            prefix: T::PREFIX,
            number: self.0.number(),
        }
    }
}

/// [`Shown`] of a fixed text.
pub trait ShownText {
    /// The value's text.
    fn arg(&self) -> Arg<'_>;
}

impl<T: EventText + ?Sized> ShownText for &Shown<'_, T> {
    fn arg(&self) -> Arg<'_> {
        Arg::Str(self.0.text())
    }
}

/// [`Shown`] of any other `Display`.
pub trait ShownDisplay {
    /// The value, written by its `Display` when someone writes it out.
    fn arg(&self) -> Arg<'_>;
}

impl<T: fmt::Display> ShownDisplay for Shown<'_, T> {
    fn arg(&self) -> Arg<'_> {
        Arg::Display(self.0)
    }
}
