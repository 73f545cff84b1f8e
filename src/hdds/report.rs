//! What a datanode reports about its volumes (`StorageReportProto`, part of the node
//! report).

/// One volume's space as a datanode reports it (`StorageReportProto`, the fields used).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StorageReport {
    /// Bytes free on the volume.
    pub remaining: u64,
    /// Bytes the datanode reserved for its open containers.
    pub committed: u64,
    /// Bytes kept free on purpose.
    pub free_space_to_spare: u64,
    /// A failed volume counts for nothing.
    pub failed: bool,
}

impl StorageReport {
    /// A healthy volume.
    pub fn new(remaining: u64, committed: u64, free_space_to_spare: u64) -> Self {
        Self {
            remaining,
            committed,
            free_space_to_spare,
            failed: false,
        }
    }

    /// `max(0, remaining − committed − free_space_to_spare)` (`VolumeUsage.getUsableSpace`).
    pub fn usable(&self) -> u64 {
        self.remaining
            .saturating_sub(self.committed)
            .saturating_sub(self.free_space_to_spare)
    }

    /// Containers of `container_size` bytes the volume can still take; 0 for a failed
    /// volume or a zero container size.
    pub fn slots(&self, container_size: u64) -> u64 {
        if self.failed || container_size == 0 {
            0
        } else {
            self.usable() / container_size
        }
    }
}
