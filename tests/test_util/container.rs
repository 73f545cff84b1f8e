//! Setup shared by the container tests (HDDS-16811): replicas of the simulation's
//! container in memory, over a fault-injecting store, or on disk, and tree file contents.

use std::path::Path;

use hadoop_ref::datanode::container::disk::DiskStore;
use hadoop_ref::datanode::container::merkle::{ContainerChecksumInfo, ContainerMerkleTree};
use hadoop_ref::datanode::container::store::{ContainerStore, MemoryStore};
use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig, ContainerError};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::{DatanodeId, LocalId};
use hadoop_ref::sim::faulty_store::FaultyStore;
use hadoop_ref::sim::replica_node::{CONTAINER, ReplicaNode};
use hadoop_ref::sync::Arc;

/// The state of every replica these helpers build.
pub const QC: ContainerState = ContainerState::QuasiClosed;

/// Datanode `dn` with a QUASI_CLOSED replica running `config`, holding `blocks`.
pub fn replica(dn: u64, config: ContainerConfig, blocks: &[(LocalId, usize)]) -> ReplicaNode {
    ReplicaNode::new(DatanodeId(dn), config, QC, blocks).expect("a memory replica builds")
}

/// [`replica`] with the configuration of `behavior`.
pub fn node(dn: u64, behavior: ContainerBehavior, blocks: &[(LocalId, usize)]) -> ReplicaNode {
    replica(dn, ContainerConfig::new(behavior), blocks)
}

/// dn1 running `behavior` over a [`FaultyStore`] wrapping a memory store, with `blocks`:
/// the memory store (to look behind the faults), the faulty store and the replica.
pub fn faulty_node(
    behavior: ContainerBehavior,
    blocks: &[(LocalId, usize)],
) -> (MemoryStore, FaultyStore, ReplicaNode) {
    faulty_replica(ContainerConfig::new(behavior), blocks)
}

/// [`faulty_node`] running `config`.
pub fn faulty_replica(
    config: ContainerConfig,
    blocks: &[(LocalId, usize)],
) -> (MemoryStore, FaultyStore, ReplicaNode) {
    let memory = MemoryStore::new(QC);
    let faulty = FaultyStore::new(memory.shared());
    let dn = ReplicaNode::with_store(DatanodeId(1), config, faulty.shared(), blocks)
        .expect("a replica over a faulty store builds");
    (memory, faulty, dn)
}

/// The tree file content of [`CONTAINER`] with `tree`.
pub fn checksum_info(tree: ContainerMerkleTree) -> ContainerChecksumInfo {
    ContainerChecksumInfo {
        container: CONTAINER,
        tree,
    }
}

/// A store factory keeping each datanode's replica of [`CONTAINER`] in its own directory
/// under `dir`.
pub fn disk_stores(
    dir: &Path,
) -> impl FnMut(DatanodeId, ContainerState) -> Result<Arc<dyn ContainerStore>, ContainerError> + '_
{
    move |datanode, state| {
        DiskStore::open(dir.join(datanode.to_string()), CONTAINER, state)
            .map(DiskStore::shared)
            .map_err(ContainerError::store(CONTAINER))
    }
}

/// The QUASI_CLOSED replica of [`CONTAINER`] kept in `path`, opened (or reopened).
pub fn open_disk_store(path: &Path) -> Arc<dyn ContainerStore> {
    DiskStore::open(path, CONTAINER, QC)
        .expect("the disk store opens")
        .shared()
}
