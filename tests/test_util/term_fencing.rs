//! Setup shared by the term-fencing tests (HDDS-17268): state contexts with their clocks,
//! the commands the tests queue, and a datanode daemon that heartbeats every millisecond.

use hadoop_ref::clock::ManualClock;
use hadoop_ref::datanode::container::store::MemoryStore;
use hadoop_ref::datanode::container::volume::MemoryVolume;
use hadoop_ref::datanode::daemon::DatanodeConfig;
use hadoop_ref::datanode::state_context::{
    EndpointState, StateContext, StateContextBehavior, StateContextConfig,
};
use hadoop_ref::hdds::command::{CommandId, CommandKind, ScmCommand};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::{ContainerId, PipelineId, ScmId};
use hadoop_ref::hdds::term::Term;
use hadoop_ref::sync::Arc;

/// Where the tests' clocks start.
pub const START_MS: u64 = 1_000_000;

/// A context with three SCM endpoints (none passive, all in GETVERSION) and its clock.
pub fn context_with(
    behavior: StateContextBehavior,
    config: StateContextConfig,
) -> (StateContext, ManualClock) {
    let clock = ManualClock::new(START_MS);
    let context = StateContext::new(
        behavior,
        config,
        &[(ScmId(1), false), (ScmId(2), false), (ScmId(3), false)],
        clock.shared(),
    )
    .expect("valid config");
    (context, clock)
}

/// A three-endpoint context whose endpoints all heartbeat, so init needs only a queued
/// command.
pub fn heartbeating(behavior: StateContextBehavior) -> StateContext {
    let (context, _) = context_with(behavior, StateContextConfig::default());
    all_heartbeating(&context);
    context
}

/// Moves every endpoint of `context` to HEARTBEAT.
pub fn all_heartbeating(context: &StateContext) {
    for endpoint in context.endpoints() {
        endpoint.set_state(EndpointState::Heartbeat);
    }
}

/// A context with the one endpoint of SCM 1, in GETVERSION, on `clock`.
pub fn single_scm_context(
    behavior: StateContextBehavior,
    config: StateContextConfig,
    clock: &ManualClock,
) -> Arc<StateContext> {
    Arc::new(
        StateContext::new(behavior, config, &[(ScmId(1), false)], clock.shared())
            .expect("valid config"),
    )
}

/// A close of container `id` in `term`, with command id `id`.
pub fn close_command(id: u64, term: Term) -> ScmCommand {
    ScmCommand::new(
        CommandId(id),
        term,
        CommandKind::CloseContainer {
            container: ContainerId(id),
            pipeline: PipelineId(1),
            force: false,
        },
    )
}

/// A force delete of `container` in `term`: the command the stale leader holds in the
/// seed's reproduction.
pub fn force_delete(id: u64, term: Term, container: u64) -> ScmCommand {
    ScmCommand::new(
        CommandId(id),
        term,
        CommandKind::DeleteContainer {
            container: ContainerId(container),
            force: true,
        },
    )
}

/// A daemon configuration that heartbeats every millisecond.
pub fn fast_heartbeat_config() -> DatanodeConfig {
    DatanodeConfig {
        heartbeat_interval_ms: 1,
        initial_heartbeat_interval_ms: 1,
        ..DatanodeConfig::default()
    }
}

/// A volume holding container 1, empty, in `state`.
pub fn volume_with_container_1(state: ContainerState) -> MemoryVolume {
    let volume = MemoryVolume::new();
    volume
        .insert(ContainerId(1), MemoryStore::new(state))
        .expect("an empty volume takes a container");
    volume
}
