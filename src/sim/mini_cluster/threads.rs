//! The cluster on threads of its own, as Ozone runs it: every datanode's threads
//! ([`Datanode::start_with`](crate::datanode::daemon::Datanode::start_with): a heartbeat
//! thread per SCM, the command processor, the replication supervisor, the
//! delete-container executor, the on-demand scanner, the block deleting service) and each
//! SCM's services (the replication manager, its under- and over-replicated processors,
//! the block deleting service), all paced by the cluster's clock: each time it moves,
//! every time-driven service runs once, and the executors take work as it comes.
//!
//! **Why (HDDS-16811, HDDS-17268).** The seeds' races are between these threads: a
//! deletion and a reconciliation of one replica overlap only when the block deleting
//! service and the supervisor run at once; a deposed leader's command reaches an executor
//! after a heartbeat raised the term. A checker runs the cluster
//! [`start_paced`](MiniOzoneCluster::start_paced) and moves the clock itself
//! ([`advance`](MiniOzoneCluster::advance)); on real threads
//! [`start`](MiniOzoneCluster::start) moves it every interval of wall time. Not to be
//! mixed with the stepped [`tick`](super::MiniOzoneCluster::tick).

use std::time::Duration;

use super::cluster::{ClusterError, MiniOzoneCluster};
use super::services::Started;
use crate::clock::StopFlag;
use crate::datanode::services::Pacing;
use crate::sync::channel;
use crate::sync::{stop_requested, thread};

impl MiniOzoneCluster {
    /// Starts every thread, with a pacer thread that moves the clock by the tick every
    /// `interval_ms` of wall time. Starting a started cluster does nothing.
    pub fn start(&self, interval_ms: u64) -> Result<(), ClusterError> {
        self.start_threads(Some(interval_ms))
    }

    /// Starts every thread, paced by the cluster's clock, which only
    /// [`advance`](Self::advance) moves: what a checker scenario drives. Starting a started
    /// cluster does nothing.
    ///
    /// ```
    /// # hadoop_ref::sync::run_driver_example(|| {
    /// use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;
    ///
    /// let cluster = MiniOzoneCluster::builder().scms(1).build()?;
    /// let key = cluster.write_key(1)?;
    /// cluster.start_paced()?;
    /// cluster.delete_key(&key)?;
    /// for _ in 0..4 {
    ///     cluster.advance();
    /// }
    /// cluster.stop();
    /// cluster.run_until_quiescent(20)?; // what the threads left, stepped
    /// for dn in 0..3 {
    ///     assert_eq!(cluster.live_blocks(dn, key.container)?, 0);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # });
    /// ```
    pub fn start_paced(&self) -> Result<(), ClusterError> {
        self.start_threads(None)
    }

    /// Moves the clock by the tick, waking every service of a started cluster; returns
    /// the new time.
    pub fn advance(&self) -> u64 {
        self.pace.advance_ms(self.tick_ms)
    }

    fn start_threads(&self, wall_interval_ms: Option<u64>) -> Result<(), ClusterError> {
        let mut running = self.service.lock();
        if running.is_some() {
            return Ok(());
        }
        for dn in &self.datanodes {
            dn.start_with(Pacing::Paced(self.pace.clone()))?;
        }
        let stop = StopFlag::new();
        let scm_threads = self.scms.spawn_threads(&self.pace, &stop);
        let pacer = wall_interval_ms.map(|interval_ms| {
            let (stopping, stopped) = channel::bounded::<()>(1);
            let (pace, tick_ms) = (self.pace.clone(), self.tick_ms);
            let interval = Duration::from_millis(interval_ms);
            let thread = thread::spawn_named("pacer", move || {
                while !stop_requested(&stopped, interval) {
                    pace.advance_ms(tick_ms);
                }
            });
            (stopping, thread)
        });
        *running = Some(Started {
            stop,
            scm_threads,
            pacer,
        });
        Ok(())
    }

    /// Stops every thread and waits for them: the pacer first, then the SCMs' services,
    /// then each datanode's. Stopping a stopped cluster does nothing.
    pub fn stop(&self) {
        let Some(started) = self.service.lock().take() else {
            return;
        };
        if let Some((stopping, pacer)) = started.pacer {
            // Disconnecting the channel wakes the pacer.
            drop(stopping);
            // A panicked thread already reported itself.
            let _ = pacer.join();
        }
        self.pace.stop(&started.stop);
        for service in started.scm_threads {
            let _ = service.join();
        }
        for dn in &self.datanodes {
            dn.stop();
        }
    }

    /// Whether the cluster runs on its threads ([`start`](Self::start),
    /// [`start_paced`](Self::start_paced)).
    pub fn is_started(&self) -> bool {
        self.service.lock().is_some()
    }

    /// For a started cluster: checks every `poll_ms` of wall time, at most `max_polls`
    /// times, until nothing is in flight ([`is_quiescent`](Self::is_quiescent)). Returns
    /// the polls made.
    pub fn wait_until_quiescent(
        &self,
        poll_ms: u64,
        max_polls: usize,
    ) -> Result<usize, ClusterError> {
        // A wait on a channel nobody sends on: a timed sleep through the sync facade.
        let (_held, never) = channel::bounded::<()>(1);
        for polls in 0..max_polls {
            if self.is_quiescent()? {
                return Ok(polls);
            }
            stop_requested(&never, Duration::from_millis(poll_ms));
        }
        if self.is_quiescent()? {
            return Ok(max_polls);
        }
        Err(ClusterError::NotQuiescent { ticks: max_polls })
    }
}
