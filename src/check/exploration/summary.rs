//! What a run explored, as the soak reports it.

/// What a run explored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CoverageSummary {
    /// Executions counted.
    pub executions: u64,
    /// Distinct sequences of (node, event kind) the executions took.
    pub sequences: u64,
    /// Distinct ordered pairs of event kinds that followed each other on different threads.
    pub racing_pairs: u64,
    /// Executions whose sequence was new but not kept ([`MAX_DISTINCT`](super::MAX_DISTINCT) reached).
    pub overflow: u64,
    /// Each race window of the case and the executions that reached it.
    pub windows: Vec<WindowCount>,
}

impl CoverageSummary {
    /// The windows reached at least once, out of all.
    pub fn windows_reached(&self) -> (usize, usize) {
        let reached = self.windows.iter().filter(|w| w.reached > 0).count();
        (reached, self.windows.len())
    }
}

/// A race window and how many executions reached it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowCount {
    /// The seed's key.
    pub seed: &'static str,
    /// The window's name.
    pub name: &'static str,
    /// Executions that reached it.
    pub reached: u64,
}
