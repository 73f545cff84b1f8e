//! Shuttle: the facade's own scheduling points (an `RwCell` access, an atomic) are left
//! out while the calling task runs alone, and kept while a spawned thread runs: a point
//! with one choice explores nothing, one with two is where a race is.

use hadoop_ref::sync::atomic::{AtomicU64, Ordering};
use hadoop_ref::sync::{Arc, RwCell, thread};

/// The scheduling points `f` takes on the calling task.
fn points_of(f: impl FnOnce()) -> usize {
    let before = shuttle::current::context_switches();
    f();
    shuttle::current::context_switches() - before
}

#[test]
fn a_task_alone_takes_no_facade_point() {
    shuttle::check_random(
        || {
            let cell = RwCell::new(0u64);
            let counter = AtomicU64::new(0);
            let points = points_of(|| {
                cell.write(|value| *value += 1);
                cell.read(|value| *value);
                counter.fetch_add(1, Ordering::SeqCst);
                counter.load(Ordering::SeqCst);
            });
            assert_eq!(points, 0, "the only task took {points} scheduling points");
        },
        5,
    );
}

#[test]
fn a_running_thread_keeps_every_facade_point() {
    shuttle::check_random(
        || {
            let cell = Arc::new(RwCell::new(0u64));
            let counter = Arc::new(AtomicU64::new(0));
            let (stop_cell, stop) = (Arc::clone(&cell), Arc::clone(&counter));
            // The other thread runs until this one has taken its four points.
            let other = thread::spawn(move || {
                while stop.load(Ordering::SeqCst) < 2 {
                    stop_cell.read(|value| *value);
                }
            });
            let points = points_of(|| {
                cell.write(|value| *value += 1);
                cell.read(|value| *value);
                counter.fetch_add(1, Ordering::SeqCst);
                counter.fetch_add(1, Ordering::SeqCst);
            });
            assert!(points >= 4, "took {points} scheduling points, not one per access");
            other.join().expect("the other thread does not panic");
            let after = points_of(|| {
                cell.read(|value| *value);
            });
            assert_eq!(after, 0, "alone again after the join, yet took {after} points");
        },
        20,
    );
}
