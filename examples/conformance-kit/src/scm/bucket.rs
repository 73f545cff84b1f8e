//! One datanode's pending containers in two windows rolled on access, as Ozone's
//! `TwoWindowBucket` does: an entry ages out after one to two roll intervals.
//!
//! **The race** it is part of (HDDS-16891): the bucket is memory only; whoever holds it
//! must seed it again when it becomes leader. **The fix** is the owner's
//! ([`super::SlotScm`]'s rebuild); the bucket itself only counts.

use std::collections::BTreeSet;

use hadoop_ref::hdds::ids::ContainerId;
use hadoop_ref::hdds::report::StorageReport;

use crate::mutants::Mutant;

/// Two windows of pending containers.
#[derive(Debug, Clone)]
pub(super) struct Bucket {
    current: BTreeSet<ContainerId>,
    previous: BTreeSet<ContainerId>,
    last_roll_ms: u64,
    /// The one change of a mutation run (`crate::mutants`); `None`: the correct code.
    mutant: Option<Mutant>,
}

impl Bucket {
    pub(super) fn new(now_ms: u64, mutant: Option<Mutant>) -> Self {
        Self {
            current: BTreeSet::new(),
            previous: BTreeSet::new(),
            last_roll_ms: now_ms,
            mutant,
        }
    }

    /// Two intervals since the last roll empty both windows, one moves the current window
    /// to the previous one; the roll time becomes `now_ms`.
    pub(super) fn roll(&mut self, now_ms: u64, interval_ms: u64) {
        let interval_ms = interval_ms.max(1);
        let mut elapsed = now_ms.saturating_sub(self.last_roll_ms);
        if self.mutant == Some(Mutant::RollWindowOffByOne) {
            elapsed = elapsed.saturating_sub(1);
        }
        if elapsed >= interval_ms.saturating_mul(2) {
            self.current.clear();
            self.previous.clear();
        } else if elapsed >= interval_ms {
            self.previous = std::mem::take(&mut self.current);
        } else {
            return;
        }
        self.last_roll_ms = now_ms;
    }

    /// Adds `container` if the healthy volumes have more slots than the pending entries
    /// (an entry in both windows counts twice, as upstream's does).
    pub(super) fn check_space_and_add(
        &mut self,
        reports: &[StorageReport],
        container_size: u64,
        container: ContainerId,
    ) -> bool {
        let slots: u64 = reports.iter().map(|r| r.slots(container_size)).sum();
        let pending = (self.current.len() + self.previous.len()) as u64;
        let room = match self.mutant == Some(Mutant::SpaceCheckOffByOne) {
            true => slots >= pending,
            false => slots > pending,
        };
        room && self.current.insert(container)
    }

    pub(super) fn add(&mut self, container: ContainerId) {
        self.current.insert(container);
    }

    pub(super) fn remove(&mut self, container: ContainerId) {
        self.current.remove(&container);
        self.previous.remove(&container);
    }

    pub(super) fn clear(&mut self) {
        self.current.clear();
        self.previous.clear();
    }

    pub(super) fn containers(&self) -> BTreeSet<ContainerId> {
        self.current.union(&self.previous).copied().collect()
    }
}
