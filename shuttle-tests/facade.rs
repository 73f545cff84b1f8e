//! Shuttle: the facade's own scheduling points (an `RwCell` access, an atomic) are left
//! out while the calling task runs alone, and kept while a spawned thread runs: a point
//! with one choice explores nothing, one with two is where a race is. A lock takes one
//! point, its acquire, and still lets a race between two holds of it be found.

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
            assert!(
                points >= 4,
                "took {points} scheduling points, not one per access"
            );
            other.join().expect("the other thread does not panic");
            let after = points_of(|| {
                cell.read(|value| *value);
            });
            assert_eq!(
                after, 0,
                "alone again after the join, yet took {after} points"
            );
        },
        20,
    );
}

/// A lock the main thread took alone, still held when it spawns a thread, stays
/// exclusive: the thread waits for its hand-off and sees what was written under it.
#[test]
fn a_lock_taken_alone_is_handed_off_to_a_thread_spawned_under_it() {
    use hadoop_ref::sync::Mutex;
    shuttle::check_random(
        || {
            let value = Arc::new(Mutex::new(0u64));
            let mut held = value.lock();
            *held = 1;
            let theirs = Arc::clone(&value);
            let other = thread::spawn(move || {
                let mut value = theirs.lock();
                assert_eq!(*value, 2, "the spawned thread ran inside the held lock");
                *value = 3;
            });
            *held = 2;
            drop(held);
            other.join().expect("the other thread does not panic");
            assert_eq!(*value.lock(), 3);
        },
        50,
    );
}

/// The same for a read-write lock: a writer alone, a reader and a writer spawned under
/// it.
#[test]
fn a_write_lock_taken_alone_is_handed_off_to_threads_spawned_under_it() {
    use hadoop_ref::sync::RwLock;
    shuttle::check_random(
        || {
            let value = Arc::new(RwLock::new(0u64));
            let mut held = value.write();
            let reader = {
                let value = Arc::clone(&value);
                thread::spawn(move || assert_eq!(*value.read() % 2, 0, "a torn write"))
            };
            let writer = {
                let value = Arc::clone(&value);
                thread::spawn(move || *value.write() += 2)
            };
            *held += 1;
            *held += 1;
            drop(held);
            reader.join().expect("the reader does not panic");
            writer.join().expect("the writer does not panic");
            assert_eq!(*value.read(), 4);
        },
        50,
    );
}

/// Two readers spawned under a write lock taken alone both wait for its hand-off, and
/// both get it.
#[test]
fn every_reader_waiting_on_a_write_lock_taken_alone_is_handed_off() {
    use hadoop_ref::sync::RwLock;
    shuttle::check_random(
        || {
            let value = Arc::new(RwLock::new(0u64));
            let mut held = value.write();
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    let value = Arc::clone(&value);
                    thread::spawn(move || assert_eq!(*value.read(), 1, "read inside the write"))
                })
                .collect();
            // Let both readers reach the lock before the write ends.
            thread::yield_now();
            thread::yield_now();
            *held = 1;
            drop(held);
            for reader in readers {
                reader.join().expect("a reader does not panic");
            }
        },
        100,
    );
}

/// A condition variable over the facade's lock loses no notification sent after the
/// waiter released the lock.
#[test]
fn a_condvar_wakes_the_waiter_of_a_lock_taken_alone() {
    use hadoop_ref::sync::{Condvar, Mutex};
    shuttle::check_random(
        || {
            let state = Arc::new((Mutex::new(false), Condvar::new()));
            let theirs = Arc::clone(&state);
            let setter = thread::spawn(move || {
                *theirs.0.lock() = true;
                theirs.1.notify_one();
            });
            let mut ready = state.0.lock();
            while !*ready {
                state.1.wait(&mut ready);
            }
            drop(ready);
            setter.join().expect("the setter does not panic");
        },
        50,
    );
}

/// Locking a lock the task holds is a deadlock, reported as shuttle's own lock reports
/// it, whether the task runs alone or not.
#[test]
fn relocking_a_held_lock_is_reported_as_a_deadlock() {
    use hadoop_ref::sync::Mutex;
    for spawn_first in [false, true] {
        let result = std::panic::catch_unwind(|| {
            shuttle::check_random(
                move || {
                    let other = spawn_first.then(|| thread::spawn(|| ()));
                    let lock = Mutex::new(());
                    let _held = lock.lock();
                    let _again = lock.lock();
                    drop(other);
                },
                1,
            );
        });
        let message = result.expect_err("relocking does not panic");
        let text = message
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(text.contains("deadlock"), "panicked with {text:?}");
    }
}

/// A lock costs one scheduling point, its acquire: its release takes none (a step another
/// task took there would commute with the release or block until it). Three locks taken
/// and released on a spawned thread, while the main thread does nothing but join it, take
/// three points, and at most two more for the main thread's join; with a point at each
/// release they took six or more.
#[test]
fn a_lock_takes_one_point_its_acquire() {
    use hadoop_ref::sync::Mutex;
    shuttle::check_random(
        || {
            let lock = Arc::new(Mutex::new(0u64));
            let locker = Arc::clone(&lock);
            let other = thread::spawn(move || {
                points_of(|| {
                    for _ in 0..3 {
                        *locker.lock() += 1;
                    }
                })
            });
            let points = other.join().expect("the locking thread does not panic");
            assert!(
                (3..=5).contains(&points),
                "three locks took {points} scheduling points"
            );
            assert_eq!(*lock.lock(), 3);
        },
        50,
    );
}

/// Without the release's point a race between two critical sections is still found: a
/// read under the lock and a write of what was read under a second hold of it lose an
/// update when another thread's whole increment lands between them, at the second
/// acquire's point.
#[test]
fn a_lost_update_between_two_holds_of_a_lock_is_still_found() {
    use hadoop_ref::sync::Mutex;
    let result = std::panic::catch_unwind(|| {
        shuttle::check_random(
            || {
                let lock = Arc::new(Mutex::new(0u64));
                let increment = |lock: Arc<Mutex<u64>>| {
                    move || {
                        let read = *lock.lock();
                        *lock.lock() = read + 1;
                    }
                };
                let a = thread::spawn(increment(Arc::clone(&lock)));
                let b = thread::spawn(increment(Arc::clone(&lock)));
                a.join().expect("a does not panic");
                b.join().expect("b does not panic");
                assert_eq!(*lock.lock(), 2, "an update was lost");
            },
            1_000,
        );
    });
    let message = result.expect_err("no schedule lost an update");
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| message.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default();
    assert!(
        text.contains("an update was lost"),
        "panicked with {text:?}"
    );
}
