//! A recorder sees every event of the crate whatever thread first reached the event's
//! callsite. `tracing` caches one interest per callsite for the whole process; while one
//! dispatcher alone was registered, tracing-core asked only the thread reaching the
//! callsite first, and a thread with no subscriber cached `never` for every thread.
//!
//! One test in a test binary of its own: which dispatchers are registered is process state,
//! and the failure needs the recorder's to be the only one. The production build only: the
//! context's locks are loom's or shuttle's in the others, usable inside a model alone.
#![cfg(not(any(loom, feature = "shuttle")))]

use hadoop_ref::clock::SystemClock;
use hadoop_ref::datanode::state_context::{StateContext, StateContextBehavior, StateContextConfig};
use hadoop_ref::hdds::ids::ScmId;
use hadoop_ref::story::Recorder;
use hadoop_ref::unmodelled::on_new_os_thread;

fn heartbeat_term(term: i64) {
    let context = StateContext::new(
        StateContextBehavior::SeedPatch,
        StateContextConfig::default(),
        &[(ScmId(1), false)],
        SystemClock::shared(),
    )
    .expect("a context");
    context
        .update_term_from_heartbeat(term)
        .expect("a heartbeat term");
}

/// Postmortem: a test's recorder missed every event of a callsite that a test on another
/// thread, with no subscriber, reached first (the threaded cluster's term verdict and the
/// SCM story came out undecided or short, now and then, in the whole suite only).
#[test]
fn recorder_sees_events_whose_callsite_another_thread_reached_first() {
    let recorder = Recorder::default();
    let story = recorder.install(|| {
        on_new_os_thread(|| heartbeat_term(4)).expect("the other thread");
        heartbeat_term(5);
        recorder.take()
    });
    assert!(
        !story.events.is_empty(),
        "the recorder saw none of the heartbeat's events"
    );
}
