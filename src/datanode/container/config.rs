//! Which code a container replica runs: the seed's patch or the legacy code
//! ([`ContainerBehavior`]), and the switches of this crate's additions beyond the seed
//! ([`ContainerConfig`]).

/// Which code the replica runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContainerBehavior {
    /// Both parts of the seed's patch on top of HDDS-16808.
    Fixed,
    /// The unpatched code of the seed: the deleting service records only blocks that had
    /// metadata and leaves the data checksum alone; reconciliation commits with no lock and
    /// finishes its writes after the commit.
    Legacy,
}

impl ContainerBehavior {
    /// Every behavior, the fixed one first.
    pub const ALL: [ContainerBehavior; 2] = [ContainerBehavior::Fixed, ContainerBehavior::Legacy];

    /// A short stable name, used in reports and schedule files.
    pub fn name(self) -> &'static str {
        match self {
            ContainerBehavior::Fixed => "Fixed",
            ContainerBehavior::Legacy => "Legacy",
        }
    }
}

/// A datanode's container configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContainerConfig {
    /// Fixed or legacy code.
    pub behavior: ContainerBehavior,
    /// Beyond the seed: the commit check re-reads the tree file only when a tree write
    /// happened since the last read (a write counter in the tree manager).
    pub tree_generation_check: bool,
    /// Beyond the seed (HDDS-11765): a block a peer's tree marks deleted while it is live
    /// here is deleted here too.
    pub apply_peer_deletions: bool,
    /// Beyond the seed: the refresh of the data checksum from a new tree root (HDDS-16808)
    /// runs inside the tree write's critical section. Off is Ozone's order
    /// (`updateAndGetContainerChecksum` compares and sets after the tree write returned),
    /// where two concurrent tree writes of one replica — a deleting round and a
    /// reconciliation — can leave the in-memory and persisted value on the older root.
    pub refresh_checksum_in_tree_write: bool,
    /// Block ids one deleting task processes at most
    /// (`hdds.datanode.block.deleting.limit.per.interval`).
    pub block_deleting_limit_per_interval: usize,
}

impl ContainerConfig {
    /// The configuration of `behavior`: the fixed one with the additions beyond the seed
    /// on, the legacy one with them off (as in Ozone).
    pub fn new(behavior: ContainerBehavior) -> Self {
        let fixed = behavior == ContainerBehavior::Fixed;
        Self {
            behavior,
            tree_generation_check: fixed,
            apply_peer_deletions: fixed,
            refresh_checksum_in_tree_write: fixed,
            block_deleting_limit_per_interval: 20_000,
        }
    }
}

impl Default for ContainerConfig {
    fn default() -> Self {
        Self::new(ContainerBehavior::Fixed)
    }
}
