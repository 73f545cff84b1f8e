//! Replicas set up for a scenario or a test: a datanode's [`KeyValueHandler`] holding
//! given containers in memory, and the same handler as the [`ContainerController`] a
//! [`CommandDispatcher`](crate::datanode::dispatcher::CommandDispatcher) takes.

use crate::datanode::container::config::{ContainerBehavior, ContainerConfig};
use crate::datanode::container::controller::ContainerController;
use crate::datanode::container::error::ContainerError;
use crate::datanode::container::handler::KeyValueHandler;
use crate::datanode::container::store::MemoryStore;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, DatanodeId};
use crate::sync::{Arc, arc_from_box};

/// The fixed replicas of `datanode`: each of `containers` in `state`, empty, in memory.
pub fn replicas_in_state(
    datanode: DatanodeId,
    containers: &[ContainerId],
    state: ContainerState,
) -> Result<Arc<KeyValueHandler>, ContainerError> {
    let handler = KeyValueHandler::new(datanode, ContainerConfig::new(ContainerBehavior::Fixed));
    for &container in containers {
        handler.add_container(container, MemoryStore::new(state).shared())?;
    }
    Ok(Arc::new(handler))
}

/// `handler` as the controller a dispatcher takes, still shared with the caller.
pub fn controller_of(handler: &Arc<KeyValueHandler>) -> Arc<dyn ContainerController> {
    arc_from_box(Box::new(Arc::clone(handler)) as Box<dyn ContainerController>)
}
