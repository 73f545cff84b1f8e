//! What a datanode's heartbeats carry to each SCM (`StateContext`'s report queues, fed by
//! the report publishers): its container report, its node report, and the statuses of the
//! commands it ran.
//!
//! A command status goes into every SCM's queue, as Ozone's `CommandStatusReportPublisher`
//! does: only the leader acts on a delete-blocks ack, and the datanode does not know which
//! SCM leads. A heartbeat that fails puts its statuses back (`putBackReports`). Each queue
//! is bounded; when one is full its oldest status is dropped and counted, which is safe:
//! the SCM sends an unacknowledged transaction again once its command times out.
//!
//! The node report is the volume's space as [`VolumeUsage`] accounts for it from the
//! replicas themselves: bytes used, and the whole container size reserved (`committed`)
//! for each OPEN replica, less what it already holds. A container granted but not yet
//! written has no footprint here: only the SCM's pending allocations remember it
//! (HDDS-16891).

use std::collections::{BTreeMap, VecDeque};

use super::container::controller::ContainerController;
use crate::hdds::container::{ContainerReplicaReport, ContainerState};
use crate::hdds::heartbeat::{CommandStatus, HeartbeatRequest};
use crate::hdds::ids::{DatanodeId, ScmId};
use crate::hdds::report::StorageReport;
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::{Arc, RwCell};

/// Command statuses one SCM's queue holds at most.
pub const COMMAND_STATUS_LIMIT: usize = 1024;

/// One volume's space as the datanode accounts for it (`HddsVolume` with its
/// `VolumeUsage`): a fixed capacity, the bytes the replicas use, and the bytes reserved
/// for the OPEN replicas (`incCommittedBytes(maxContainerSize)` when a replica is
/// created, given back as it is written and when it leaves OPEN).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VolumeUsage {
    /// The volume's size.
    pub capacity_bytes: u64,
    /// The most a container may hold (`ozone.scm.container.size`).
    pub max_container_size_bytes: u64,
}

impl VolumeUsage {
    /// The volume's storage report with `replicas` on it: `remaining` is the capacity
    /// less the bytes used, `committed` the unwritten rest of each OPEN replica. Sums
    /// saturate: a volume over-committed reports 0 usable, never wraps.
    pub fn storage_report(&self, replicas: &[ContainerReplicaReport]) -> StorageReport {
        let used = replicas
            .iter()
            .fold(0u64, |sum, r| sum.saturating_add(r.used_bytes));
        let committed = replicas
            .iter()
            .filter(|r| r.state == ContainerState::Open)
            .fold(0u64, |sum, r| {
                sum.saturating_add(self.max_container_size_bytes.saturating_sub(r.used_bytes))
            });
        StorageReport::new(self.capacity_bytes.saturating_sub(used), committed, 0)
    }
}

/// The reports of one datanode, for every SCM it heartbeats.
#[derive(Debug)]
pub struct ReportPublisher {
    datanode: DatanodeId,
    controller: Arc<dyn ContainerController>,
    volume: RwCell<Option<VolumeUsage>>,
    statuses: RwCell<BTreeMap<ScmId, VecDeque<CommandStatus>>>,
    dropped: AtomicU64,
}

impl ReportPublisher {
    /// Reports of `datanode`'s replicas behind `controller`, for the SCMs `scms`, with no
    /// node report until [`set_volume`](Self::set_volume).
    pub fn new(
        datanode: DatanodeId,
        scms: &[ScmId],
        controller: Arc<dyn ContainerController>,
    ) -> Self {
        Self {
            datanode,
            controller,
            volume: RwCell::new(None),
            statuses: RwCell::new(scms.iter().map(|&scm| (scm, VecDeque::new())).collect()),
            dropped: AtomicU64::new(0),
        }
    }

    /// Feeds `state` the command statuses waiting for each SCM (their state and their
    /// transactions' answers; the command ids only label them).
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        self.statuses.read(|statuses| {
            for (scm, queued) in statuses {
                scm.hash(state);
                for status in queued {
                    (status.state, &status.delete_results).hash(state);
                }
            }
        });
    }

    /// The volume whose space the next heartbeats report (one volume per datanode).
    pub fn set_volume(&self, volume: VolumeUsage) {
        self.volume.write(|current| *current = Some(volume));
    }

    /// The node report the next heartbeat carries: the volume's space with the replicas
    /// as they are now; `None` before [`set_volume`](Self::set_volume).
    pub fn node_report(&self) -> Option<Vec<StorageReport>> {
        let volume = self.volume.read(|volume| *volume)?;
        Some(vec![self.traced(
            volume.storage_report(&self.controller.container_report()),
        )])
    }

    /// `report`, with the `node report` event that states the datanode's room: what the
    /// cluster's room monitor judges (HDDS-16891).
    fn traced(&self, report: StorageReport) -> StorageReport {
        crate::events::debug!(
            node = %self.datanode,
            remaining = report.remaining,
            committed = report.committed,
            spare = report.free_space_to_spare,
            "node report"
        );
        report
    }

    /// Queues `status` for every SCM, dropping the oldest of a full queue.
    pub fn add_command_status(&self, status: &CommandStatus) {
        let dropped = self.statuses.write(|statuses| {
            let mut dropped = 0;
            for queue in statuses.values_mut() {
                if queue.len() >= COMMAND_STATUS_LIMIT {
                    queue.pop_front();
                    dropped += 1;
                }
                queue.push_back(status.clone());
            }
            dropped
        });
        self.count_dropped(dropped);
    }

    /// Statuses dropped from full queues since the datanode started.
    pub fn dropped_statuses(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Fills `request`, a heartbeat to `scm`, with the current reports and the statuses
    /// queued for `scm` (taken from its queue).
    pub fn fill(&self, scm: ScmId, request: &mut HeartbeatRequest) {
        let replicas = self.controller.container_report();
        let volume = self.volume.read(|volume| *volume);
        request.node_report = volume.map(|v| vec![self.traced(v.storage_report(&replicas))]);
        request.container_report = Some(replicas);
        request.command_statuses = self.statuses.write(|queues| {
            queues
                .get_mut(&scm)
                .map(|queue| queue.drain(..).collect())
                .unwrap_or_default()
        });
    }

    /// Puts back the statuses of a heartbeat to `scm` that failed, ahead of newer ones,
    /// within the bound.
    pub fn put_back(&self, scm: ScmId, statuses: Vec<CommandStatus>) {
        let dropped = self.statuses.write(|queues| {
            let Some(queue) = queues.get_mut(&scm) else {
                return 0;
            };
            let mut dropped = 0;
            for status in statuses.into_iter().rev() {
                if queue.len() >= COMMAND_STATUS_LIMIT {
                    dropped += 1;
                    continue;
                }
                queue.push_front(status);
            }
            dropped
        });
        self.count_dropped(dropped);
    }

    /// Counts statuses dropped from full queues (outside the queues' cell: the counter is
    /// a checker primitive, which a cell's closure must not touch).
    fn count_dropped(&self, dropped: u64) {
        if dropped > 0 {
            self.dropped.fetch_add(dropped, Ordering::Relaxed);
        }
    }
}
