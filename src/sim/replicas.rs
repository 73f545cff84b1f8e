//! Replicas set up for a scenario or a test: a datanode's [`KeyValueHandler`] holding
//! given containers in memory.

use crate::datanode::container::config::{ContainerBehavior, ContainerConfig};
use crate::datanode::container::error::ContainerError;
use crate::datanode::container::handler::KeyValueHandler;
use crate::datanode::container::store::MemoryStore;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, DatanodeId};
use crate::sync::Arc;

/// The hardened replicas of `datanode`: each of `containers` in `state`, empty, in memory.
pub fn replicas_in_state(
    datanode: DatanodeId,
    containers: &[ContainerId],
    state: ContainerState,
) -> Result<Arc<KeyValueHandler>, ContainerError> {
    let handler = KeyValueHandler::new(datanode, ContainerConfig::new(ContainerBehavior::Hardened));
    for &container in containers {
        handler.add_container(container, MemoryStore::new(state).shared())?;
    }
    Ok(Arc::new(handler))
}
