//! The assembled datanode: the container controller on the real replicas, the volume it
//! loads them from, the peer network, and the `Datanode` with its threads restarting from
//! its volume.

mod controller;
mod daemon;
mod volume;

use hadoop_ref::datanode::container::handler::KeyValueHandler;
use hadoop_ref::datanode::container::store::MemoryStore;
use hadoop_ref::datanode::container::volume::MemoryVolume;
use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, LocalId};
use hadoop_ref::sim::replica_node::write_block;
use hadoop_ref::sync::Arc;

/// A memory store in `state` holding `blocks` (id, chunks), each with its file.
fn store_with(state: ContainerState, blocks: &[(LocalId, usize)]) -> MemoryStore {
    let store = MemoryStore::new(state);
    for &(block, chunks) in blocks {
        write_block(&store, block, chunks).expect("a memory store accepts the block");
    }
    store
}

/// The fixed replicas of `datanode` over a volume holding `replicas`.
fn handler_over(
    datanode: u64,
    replicas: Vec<(u64, MemoryStore)>,
) -> (Arc<KeyValueHandler>, MemoryVolume) {
    let volume = MemoryVolume::new();
    for (id, store) in replicas {
        volume.insert(ContainerId(id), store).unwrap();
    }
    let handler = KeyValueHandler::open(
        DatanodeId(datanode),
        ContainerConfig::new(ContainerBehavior::Fixed),
        volume.shared(),
    )
    .unwrap();
    (Arc::new(handler), volume)
}
