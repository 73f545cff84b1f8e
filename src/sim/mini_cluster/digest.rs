//! The cluster's fingerprint: everything of its state that decides what it does next, fed
//! to a hasher in a canonical order, so that two runs of its actions in different orders
//! that reach the same state feed the same values. What an explorer of the cluster's
//! actions keys its visited states by.

use std::hash::{Hash, Hasher};

use super::cluster::{ClusterError, MiniOzoneCluster};
use crate::clock::Clock;

impl MiniOzoneCluster {
    /// Feeds `state` the cluster's protocol state: the clock, the Ratis ring, each SCM slot
    /// (running or not, and the running SCM's
    /// [`digest`](crate::scm::StorageContainerManager::digest)), the cut links to the SCMs
    /// and between datanodes, the next block id, and each datanode's
    /// [`digest`](crate::datanode::daemon::Datanode::digest). Counters, command ids,
    /// histories and thread state are left out; a started cluster's threads move it under
    /// the caller, so digest a stepped one.
    ///
    /// ```
    /// # hadoop_ref::sync::run_driver_example(|| {
    /// use std::hash::DefaultHasher;
    /// use std::hash::Hasher;
    /// use hadoop_ref::sim::mini_cluster::MiniOzoneCluster;
    ///
    /// let fingerprint = |cluster: &MiniOzoneCluster| {
    ///     let mut hasher = DefaultHasher::new();
    ///     cluster.digest(&mut hasher).map(|()| hasher.finish())
    /// };
    /// let cluster = MiniOzoneCluster::builder().scms(1).build()?;
    /// let before = fingerprint(&cluster)?;
    /// cluster.datanode(0)?.process_command(); // nothing queued: nothing changes
    /// assert_eq!(fingerprint(&cluster)?, before);
    /// cluster.write_key(1)?;
    /// assert_ne!(fingerprint(&cluster)?, before);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # });
    /// ```
    pub fn digest<H: Hasher>(&self, state: &mut H) -> Result<(), ClusterError> {
        self.pace.clock().now_ms().hash(state);
        self.scms.ring.digest(state);
        for scm in self.scms.board.ids() {
            scm.hash(state);
            match self.scms.board.scm(scm) {
                Some(running) => running.digest(state),
                None => false.hash(state),
            }
        }
        self.scms.board.digest(state);
        self.peers.digest(state);
        self.next_block
            .load(crate::sync::atomic::Ordering::Acquire)
            .hash(state);
        for dn in &self.datanodes {
            dn.id().hash(state);
            dn.digest(state)?;
        }
        Ok(())
    }
}
