//! The cluster on threads of its own, as Ozone's `MiniOzoneCluster` runs: every datanode's
//! threads ([`Datanode::start`](crate::datanode::daemon::Datanode::start): a heartbeat
//! thread per SCM, the command processor, the block deleting service) and one service
//! thread that ticks the SCMs and moves the clock, all paced by wall-clock intervals.
//! Not to be mixed with the stepped [`tick`](super::MiniOzoneCluster::tick).

use std::time::Duration;

use super::cluster::{ClusterError, MiniOzoneCluster};
use super::services::ServiceThread;
use crate::sync::channel;
use crate::sync::{stop_requested, thread};

impl MiniOzoneCluster {
    /// Starts every datanode's threads and the SCMs' service thread, which ticks the SCMs
    /// (as [`tick_scms`](Self::tick_scms)) and moves the clock by the tick every
    /// `interval_ms` of wall time. The datanodes pace themselves by their own settings
    /// (`DatanodeConfig::heartbeat_interval_ms` and the others; Ozone's are tens of
    /// seconds, so give a quick cluster short ones). Starting a started cluster does
    /// nothing.
    pub fn start(&self, interval_ms: u64) -> Result<(), ClusterError> {
        let mut running = self.service.lock();
        if running.is_some() {
            return Ok(());
        }
        for dn in &self.datanodes {
            dn.start()?;
        }
        let (stop, stopped) = channel::bounded::<()>(1);
        let (scms, clock, tick_ms) = (self.scms.clone(), self.clock.clone(), self.tick_ms);
        let interval = Duration::from_millis(interval_ms);
        let thread = thread::spawn(move || {
            loop {
                // A refused round (a full command queue) is tried again next interval, as
                // the services do.
                let _ = scms.tick();
                clock.advance_ms(tick_ms);
                if stop_requested(&stopped, interval) {
                    return;
                }
            }
        });
        *running = Some(ServiceThread { stop, thread });
        Ok(())
    }

    /// Stops the service thread and every datanode's threads and waits for them. Stopping
    /// a stopped cluster does nothing.
    pub fn stop(&self) {
        if let Some(ServiceThread { stop, thread }) = self.service.lock().take() {
            // Disconnecting the channel wakes the waiting loop.
            drop(stop);
            // A panicked service thread already reported itself.
            let _ = thread.join();
        }
        for dn in &self.datanodes {
            dn.stop();
        }
    }

    /// Whether the cluster runs on its threads ([`start`](Self::start)).
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
