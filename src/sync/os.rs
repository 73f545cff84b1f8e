//! The operating system's wall clock, in every build: only
//! [`SystemClock`](crate::clock::SystemClock) reads it; everything else reads a
//! [`Clock`](crate::clock::Clock).

/// Milliseconds since the Unix epoch from the operating system's wall clock. A clock set
/// before 1970 reads as 0 rather than failing.
pub fn system_time_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
