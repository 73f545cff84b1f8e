//! Datanode SCM-term fencing (HDDS-17268): the state context, the heartbeat task, the
//! handlers on the real replicas, the datanode's threads, and a model-based property.

mod daemon;
mod handlers;
mod heartbeat_task;
mod invariants;
mod state_context;
mod state_context_model;
