//! What a datanode's heartbeats carry to each SCM (`StateContext`'s report queues, fed by
//! the report publishers): its container report, its node report, and the statuses of the
//! commands it ran.
//!
//! A command status goes into every SCM's queue, as Ozone's `CommandStatusReportPublisher`
//! does: only the leader acts on a delete-blocks ack, and the datanode does not know which
//! SCM leads. A heartbeat that fails puts its statuses back (`putBackReports`). Each queue
//! is bounded; when one is full its oldest status is dropped and counted, which is safe:
//! the SCM sends an unacknowledged transaction again once its command times out.

use std::collections::{BTreeMap, VecDeque};

use super::container::controller::ContainerController;
use crate::hdds::heartbeat::{CommandStatus, HeartbeatRequest};
use crate::hdds::ids::ScmId;
use crate::hdds::report::StorageReport;
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::{Arc, Mutex};

/// Command statuses one SCM's queue holds at most.
pub const COMMAND_STATUS_LIMIT: usize = 1024;

/// The reports of one datanode, for every SCM it heartbeats.
#[derive(Debug)]
pub struct ReportPublisher {
    controller: Arc<dyn ContainerController>,
    node_report: Mutex<Vec<StorageReport>>,
    statuses: Mutex<BTreeMap<ScmId, VecDeque<CommandStatus>>>,
    dropped: AtomicU64,
}

impl ReportPublisher {
    /// Reports of the replicas behind `controller`, for the SCMs `scms`, with no node
    /// report until [`set_node_report`](Self::set_node_report).
    pub fn new(scms: &[ScmId], controller: Arc<dyn ContainerController>) -> Self {
        Self {
            controller,
            node_report: Mutex::new(Vec::new()),
            statuses: Mutex::new(scms.iter().map(|&scm| (scm, VecDeque::new())).collect()),
            dropped: AtomicU64::new(0),
        }
    }

    /// The volumes' space the next heartbeats report.
    pub fn set_node_report(&self, reports: Vec<StorageReport>) {
        *self.node_report.lock() = reports;
    }

    /// Queues `status` for every SCM, dropping the oldest of a full queue.
    pub fn add_command_status(&self, status: &CommandStatus) {
        let mut statuses = self.statuses.lock();
        for queue in statuses.values_mut() {
            if queue.len() >= COMMAND_STATUS_LIMIT {
                queue.pop_front();
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            queue.push_back(status.clone());
        }
    }

    /// Statuses dropped from full queues since the datanode started.
    pub fn dropped_statuses(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Fills `request`, a heartbeat to `scm`, with the current reports and the statuses
    /// queued for `scm` (taken from its queue).
    pub fn fill(&self, scm: ScmId, request: &mut HeartbeatRequest) {
        request.container_report = Some(self.controller.container_report());
        let node_report = self.node_report.lock().clone();
        request.node_report = (!node_report.is_empty()).then_some(node_report);
        request.command_statuses = self
            .statuses
            .lock()
            .get_mut(&scm)
            .map(|queue| queue.drain(..).collect())
            .unwrap_or_default();
    }

    /// Puts back the statuses of a heartbeat to `scm` that failed, ahead of newer ones,
    /// within the bound.
    pub fn put_back(&self, scm: ScmId, statuses: Vec<CommandStatus>) {
        let mut queues = self.statuses.lock();
        let Some(queue) = queues.get_mut(&scm) else {
            return;
        };
        for status in statuses.into_iter().rev() {
            if queue.len() >= COMMAND_STATUS_LIMIT {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            queue.push_front(status);
        }
    }
}
