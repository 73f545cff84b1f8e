//! `StateContext` under three heartbeat threads: `SeedPatch` (every term update under the
//! context lock) against `LegacyUnlockedTermUpdate` (the unlocked check-then-set), in the
//! same run. Goal: the locked fix costs at most 1.2x the unlocked legacy.
//!
//! - `heartbeat_term_updates`: three threads apply rising heartbeat terms, nothing else
//!   (the worst case for the lock: the update is all there is).
//! - `state_context_trait_vs_concrete`: one thread's term, command and take on
//!   `StateContext`, through `StateContextApi` monomorphised, and through `&dyn`
//!   (goal: within noise).
//! - `heartbeat_responses`: three threads each process responses of one term update and one
//!   command while the command processor takes the commands (what a datanode does).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

use hadoop_ref::clock::ManualClock;
use hadoop_ref::datanode::DatanodeError;
use hadoop_ref::datanode::state_context::{
    DispatchedCommand, EndpointState, StateContext, StateContextApi, StateContextBehavior,
    StateContextConfig,
};
use hadoop_ref::hdds::command::{CommandId, CommandKind, ScmCommand};
use hadoop_ref::hdds::ids::{ContainerId, PipelineId, ScmId};
use hadoop_ref::sync::atomic::{AtomicBool, Ordering};
use hadoop_ref::sync::{Arc, thread};
use hadoop_ref::unmodelled::Stopwatch;

const THREADS: u64 = 3;
const BEHAVIORS: [StateContextBehavior; 2] = [
    StateContextBehavior::SeedPatch,
    StateContextBehavior::LegacyUnlockedTermUpdate,
];

/// A context with its term initialised to 1 and every endpoint heartbeating.
fn initialised(behavior: StateContextBehavior) -> Arc<StateContext> {
    let endpoints: Vec<_> = (1..=THREADS).map(|i| (ScmId(i), false)).collect();
    let context = StateContext::new(
        behavior,
        StateContextConfig::default(),
        &endpoints,
        ManualClock::new(0).shared(),
    )
    .expect("valid config");
    for endpoint in context.endpoints() {
        endpoint.set_state(EndpointState::Heartbeat);
    }
    context.add_command(close(0, 1)).expect("queue has room");
    assert!(context.get_next_command().is_some());
    Arc::new(context)
}

fn close(id: u64, term: i64) -> ScmCommand {
    ScmCommand::new(
        CommandId(id),
        term,
        CommandKind::CloseContainer {
            container: ContainerId(1),
            pipeline: PipelineId(1),
            force: false,
        },
    )
}

/// Runs `work(thread_index)` on three threads released together; returns the wall time.
fn on_three_threads(work: impl Fn(u64) + Send + Sync + Clone + 'static) -> Duration {
    let go = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..THREADS)
        .map(|index| {
            let go = Arc::clone(&go);
            let work = work.clone();
            thread::spawn(move || {
                while !go.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
                work(index);
            })
        })
        .collect();
    let stopwatch = Stopwatch::start();
    go.store(true, Ordering::Release);
    for handle in handles {
        handle.join().expect("bench thread");
    }
    stopwatch.elapsed()
}

fn heartbeat_term_updates(c: &mut Criterion) {
    let mut group = c.benchmark_group("heartbeat_term_updates_3_threads");
    for behavior in BEHAVIORS {
        group.bench_function(BenchmarkId::from_parameter(behavior.name()), |b| {
            b.iter_custom(|iterations| {
                let context = initialised(behavior);
                on_three_threads(move |index| {
                    for i in 0..iterations {
                        let term = (i * THREADS + index) as i64 + 2;
                        context
                            .update_term_from_heartbeat(term)
                            .expect("valid term");
                    }
                })
            });
        });
    }
    group.finish();
}

fn heartbeat_responses(c: &mut Criterion) {
    let mut group = c.benchmark_group("heartbeat_responses_3_threads_and_processor");
    for behavior in BEHAVIORS {
        group.bench_function(BenchmarkId::from_parameter(behavior.name()), |b| {
            b.iter_custom(|iterations| {
                let context = initialised(behavior);
                let producers_done = Arc::new(AtomicBool::new(false));
                let consumer = {
                    let context = Arc::clone(&context);
                    let done = Arc::clone(&producers_done);
                    thread::spawn(move || {
                        while !done.load(Ordering::Acquire) || context.queue_len() > 0 {
                            if context.get_next_command().is_none() {
                                thread::yield_now();
                            }
                        }
                    })
                };
                let elapsed = on_three_threads(move |index| {
                    for i in 0..iterations {
                        let term = (i * THREADS + index) as i64 + 2;
                        context
                            .update_term_from_heartbeat(term)
                            .expect("valid term");
                        let mut command = close(i, term);
                        loop {
                            match context.add_command(command) {
                                Ok(()) => break,
                                Err(DatanodeError::CommandQueueFull { .. }) => {
                                    thread::yield_now();
                                    command = close(i, term);
                                }
                                Err(other) => panic!("{other}"),
                            }
                        }
                    }
                });
                producers_done.store(true, Ordering::Release);
                consumer.join().expect("consumer thread");
                elapsed
            });
        });
    }
    group.finish();
}

/// One thread's heartbeat term, command and take, on `StateContext` itself, through the
/// boundary trait monomorphised (as the heartbeat task and dispatcher call it), and through
/// `&dyn StateContextApi`. Goal: within noise.
fn trait_vs_concrete(c: &mut Criterion) {
    let mut group = c.benchmark_group("state_context_trait_vs_concrete");
    let concrete = initialised(StateContextBehavior::SeedPatch);
    group.bench_function("concrete", |b| {
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            let term = i as i64 + 2;
            concrete
                .update_term_from_heartbeat(term)
                .expect("valid term");
            concrete.add_command(close(i, term)).expect("room");
            black_box(concrete.get_next_command())
        })
    });
    let generic = initialised(StateContextBehavior::SeedPatch);
    group.bench_function("generic_StateContextApi", |b| {
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            round_trip(&*generic, i)
        })
    });
    let dynamic: Arc<dyn StateContextApi> = initialised(StateContextBehavior::SeedPatch);
    group.bench_function("dyn_StateContextApi", |b| {
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            round_trip(&*dynamic, i)
        })
    });
    group.finish();
}

/// A heartbeat term, a command and a take through the boundary trait.
fn round_trip<C: StateContextApi + ?Sized>(context: &C, i: u64) -> Option<DispatchedCommand> {
    let term = i as i64 + 2;
    context
        .update_term_from_heartbeat(term)
        .expect("valid term");
    context.add_command(close(i, term)).expect("room");
    black_box(context.get_next_command())
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = heartbeat_term_updates, heartbeat_responses, trait_vs_concrete
}
criterion_main!(benches);
