//! Pending container allocations of one datanode (`PendingContainerTracker.TwoWindowBucket`)
//! and the slot arithmetic that decides whether a datanode can take one more container
//! (the usable space of its `StorageReport`s in whole containers, against its pending
//! count).
//!
//! **The race (HDDS-16891).** A container granted but not yet written has no footprint in
//! any storage report: only the bucket remembers it. The buckets live in the leader's
//! memory, so after a leader change or restart they are empty and the slots are granted again.
//!
//! **The fix** (in [`super::container_manager`]) rebuilds the buckets when an SCM becomes
//! the serving leader. This module is the bucket itself: two windows rolled on access, so
//! an unconfirmed entry lives more than one and less than three roll intervals.
//!
//! ```
//! # hadoop_ref::sync::run_example(|| {
//! use hadoop_ref::hdds::ids::ContainerId;
//! use hadoop_ref::hdds::report::StorageReport;
//! use hadoop_ref::scm::pending::TwoWindowBucket;
//!
//! const GB: u64 = 1 << 30;
//! let reports = [StorageReport::new(512 * GB, 0, 0)];
//! let mut bucket = TwoWindowBucket::new(0, 300_000);
//! assert!(bucket.check_space_and_add(&reports, 300 * GB, ContainerId(1)));
//! assert!(!bucket.check_space_and_add(&reports, 300 * GB, ContainerId(2)), "one slot");
//! bucket.roll_if_needed(600_000); // two roll intervals later: aged out
//! assert_eq!(bucket.pending_count(), 0);
//! # Ok::<(), std::convert::Infallible>(())
//! # });
//! ```

use std::collections::BTreeSet;

use crate::hdds::ids::ContainerId;
use crate::hdds::report::StorageReport;

/// Whether the reports have more slots than `pending_count` (`hasSlot`): the sum of the
/// healthy volumes' slots must exceed the pending count. No report means no slot.
pub fn has_slot(reports: &[StorageReport], container_size: u64, pending_count: usize) -> bool {
    let pending = pending_count as u64;
    let mut allocatable = 0u64;
    for report in reports.iter().filter(|r| !r.failed) {
        allocatable = allocatable.saturating_add(report.slots(container_size));
        if allocatable > pending {
            return true;
        }
    }
    false
}

/// The slots of the healthy volumes of `reports`, summed (what [`has_slot`] compares with
/// the pending count; a failed volume counts for nothing).
pub fn slots(reports: &[StorageReport], container_size: u64) -> u64 {
    reports
        .iter()
        .filter(|r| !r.failed)
        .fold(0u64, |sum, r| sum.saturating_add(r.slots(container_size)))
}

/// The pending allocations of one datanode: two windows rolled on access
/// (`TwoWindowBucket`). Not synchronized itself: its owner holds it under a lock (the
/// bucket's monitor in Ozone).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TwoWindowBucket {
    current: BTreeSet<ContainerId>,
    previous: BTreeSet<ContainerId>,
    last_roll_ms: u64,
    roll_interval_ms: u64,
}

impl TwoWindowBucket {
    /// An empty bucket created at `now_ms`, rolling every `roll_interval_ms` (at least 1).
    pub fn new(now_ms: u64, roll_interval_ms: u64) -> Self {
        Self {
            current: BTreeSet::new(),
            previous: BTreeSet::new(),
            last_roll_ms: now_ms,
            roll_interval_ms: roll_interval_ms.max(1),
        }
    }

    /// The roll interval in ms.
    pub fn roll_interval_ms(&self) -> u64 {
        self.roll_interval_ms
    }

    /// Rolls on access (`rollIfNeeded`): two intervals or more since the last roll empty
    /// both windows; one interval moves the current window to the previous one. The roll
    /// time is reset to `now_ms`, not advanced by the interval. A clock that went back is
    /// treated as no time passing. Returns how many entries aged out.
    pub fn roll_if_needed(&mut self, now_ms: u64) -> usize {
        let elapsed = now_ms.saturating_sub(self.last_roll_ms);
        if elapsed >= self.roll_interval_ms.saturating_mul(2) {
            let dropped = self.pending_count();
            self.current.clear();
            self.previous.clear();
            self.last_roll_ms = now_ms;
            dropped
        } else if elapsed >= self.roll_interval_ms {
            let dropped = self.previous.len();
            self.previous = std::mem::take(&mut self.current);
            self.last_roll_ms = now_ms;
            dropped
        } else {
            0
        }
    }

    /// `|current| + |previous|`: a container in both windows counts twice, as in Ozone.
    pub fn pending_count(&self) -> usize {
        self.current.len() + self.previous.len()
    }

    /// Whether `container` is pending.
    pub fn contains(&self, container: ContainerId) -> bool {
        self.current.contains(&container) || self.previous.contains(&container)
    }

    /// Every pending container, ascending, without duplicates.
    pub fn containers(&self) -> BTreeSet<ContainerId> {
        self.current.union(&self.previous).copied().collect()
    }

    /// Adds `container` to the current window if the reports have a slot beyond the
    /// pending ones (`checkSpaceAndAdd`). Does not roll: the caller rolls first. Returns
    /// whether it was added (false also when it was already in the current window).
    pub fn check_space_and_add(
        &mut self,
        reports: &[StorageReport],
        container_size: u64,
        container: ContainerId,
    ) -> bool {
        has_slot(reports, container_size, self.pending_count()) && self.current.insert(container)
    }

    /// Adds `container` without a space check (`add`, used for replication targets and
    /// the rebuild). Returns whether it was new to the current window.
    pub fn add(&mut self, container: ContainerId) -> bool {
        self.current.insert(container)
    }

    /// Removes `container` from both windows (`remove`); returns whether it was there.
    pub fn remove(&mut self, container: ContainerId) -> bool {
        let in_current = self.current.remove(&container);
        let in_previous = self.previous.remove(&container);
        in_current || in_previous
    }

    /// Drops every entry (the first half of the rebuild); the roll time is kept.
    pub fn clear(&mut self) {
        self.current.clear();
        self.previous.clear();
    }
}
