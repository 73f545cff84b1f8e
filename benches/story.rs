//! What the protocol events cost: one heartbeat response's steps on a `StateContext` (a
//! term update, a command queued, the command dispatched; five events) with no recorder
//! installed, as in production, and with a `story::Recorder` installed, as in a checker's
//! replay. Goal: with no recorder, the events cost nothing measurable (compare
//! `no_recorder` with the same steps before the events existed: the `state_context`
//! bench); with a recorder, recording is what a replay pays.

use criterion::{Criterion, criterion_group, criterion_main};

use hadoop_ref::clock::ManualClock;
use hadoop_ref::datanode::state_context::{
    EndpointState, StateContext, StateContextBehavior, StateContextConfig,
};
use hadoop_ref::hdds::command::{CommandId, CommandKind, ScmCommand};
use hadoop_ref::hdds::ids::{ContainerId, PipelineId, ScmId};
use hadoop_ref::story::Recorder;

/// A context with every endpoint heartbeating, so the first command initialises the term.
fn context() -> StateContext {
    let context = StateContext::new(
        StateContextBehavior::SeedPatch,
        StateContextConfig::default(),
        &[(ScmId(1), false)],
        ManualClock::new(0).shared(),
    )
    .expect("valid config");
    for endpoint in context.endpoints() {
        endpoint.set_state(EndpointState::Heartbeat);
    }
    context
}

/// One heartbeat response's steps at `term`.
fn heartbeat_steps(context: &StateContext, term: i64) {
    context
        .update_term_from_heartbeat(term)
        .expect("a valid term");
    let command = ScmCommand::new(
        CommandId(term.unsigned_abs()),
        term,
        CommandKind::CloseContainer {
            container: ContainerId(1),
            pipeline: PipelineId(1),
            force: false,
        },
    );
    context.add_command(command).expect("queue has room");
    assert!(context.get_next_command().is_some());
}

fn protocol_events(c: &mut Criterion) {
    let mut group = c.benchmark_group("protocol_events");
    let plain = context();
    let mut term = 0;
    group.bench_function("no_recorder", |b| {
        b.iter(|| {
            term += 1;
            heartbeat_steps(&plain, term);
        });
    });
    let recorded = context();
    let recorder = Recorder::default();
    let mut term = 0;
    group.bench_function("recorder_installed", |b| {
        recorder.install(|| {
            b.iter(|| {
                term += 1;
                heartbeat_steps(&recorded, term);
                // One execution's story at a time, as a checker keeps it.
                recorder.take();
            });
        });
    });
    group.finish();
}

criterion_group!(benches, protocol_events);
criterion_main!(benches);
