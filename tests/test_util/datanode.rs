//! Replicas and datanodes for the tests of the assembled datanode.

use hadoop_ref::clock::ManualClock;
use hadoop_ref::datanode::container::handler::KeyValueHandler;
use hadoop_ref::datanode::container::store::MemoryStore;
use hadoop_ref::datanode::container::volume::{ContainerVolume, DiskVolume, MemoryVolume};
use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig};
use hadoop_ref::datanode::daemon::{Datanode, DatanodeConfig};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::heartbeat::ScmEndpoint;
use hadoop_ref::hdds::ids::{ContainerId, DatanodeId, LocalId};
use hadoop_ref::sim::peers::PeerNetwork;
use hadoop_ref::sim::replica_node::write_block;
use hadoop_ref::sync::Arc;

/// A memory store in `state` holding `blocks` (id, chunks), each with its file.
pub fn store_with(state: ContainerState, blocks: &[(LocalId, usize)]) -> MemoryStore {
    let store = MemoryStore::new(state);
    for &(block, chunks) in blocks {
        write_block(&store, block, chunks).expect("a memory store accepts the block");
    }
    store
}

/// The fixed replicas of `datanode` over a volume holding `replicas`.
pub fn handler_over(
    datanode: u64,
    replicas: Vec<(u64, MemoryStore)>,
) -> (Arc<KeyValueHandler>, MemoryVolume) {
    let volume = MemoryVolume::new();
    for (id, store) in replicas {
        volume.insert(ContainerId(id), store).unwrap();
    }
    let handler = KeyValueHandler::open(
        DatanodeId(datanode),
        ContainerConfig::new(ContainerBehavior::Hardened),
        volume.shared(),
    )
    .unwrap();
    (Arc::new(handler), volume)
}

/// The fixed replicas of `datanode` over `volume`, reaching peers through `network`, and
/// registered in it.
pub fn handler_in_network(
    datanode: u64,
    volume: &MemoryVolume,
    network: &PeerNetwork,
) -> Arc<KeyValueHandler> {
    let id = DatanodeId(datanode);
    let handler = Arc::new(
        KeyValueHandler::open(
            id,
            ContainerConfig::new(ContainerBehavior::Hardened),
            volume.shared(),
        )
        .unwrap()
        .with_peers(network.directory_for(id)),
    );
    network.register(&handler);
    handler
}

/// Datanode 1 over a disk volume in `dir` holding c1 (CLOSED, blocks 1 and 2, written
/// when the volume is new), talking to `scms`; every loop paced at 1 ms.
pub fn datanode_on_disk(dir: &std::path::Path, scms: Vec<Arc<dyn ScmEndpoint>>) -> Datanode {
    let c1 = ContainerId(1);
    let volume = DiskVolume::open(dir).unwrap();
    if volume.containers().unwrap().is_empty() {
        let store = volume.stage(c1, ContainerState::Closed).unwrap();
        for block in [1, 2] {
            write_block(&*store, block, 2).unwrap();
        }
        volume.publish(c1).unwrap();
    }
    let config = DatanodeConfig {
        block_deleting_interval_ms: 1,
        ..super::term_fencing::fast_heartbeat_config()
    };
    Datanode::new(
        DatanodeId(1),
        config,
        scms,
        volume.shared(),
        None,
        ManualClock::new(0).shared(),
    )
    .unwrap()
}
