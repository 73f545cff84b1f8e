//! Loom, the facade's `RwCell`: the container and SCM models are exhaustive because loom
//! explores one order of two reads of a cell, so these tests pin down that a cell hides no
//! conflict. Two spawned threads each; each model is exhaustive.
//!
//! A write and a read are explored in both orders (the read sees the value before and
//! after); two writes in both orders (either lands last); two reads in one order only.

use std::collections::BTreeSet;

use hadoop_ref::check::loom::ExplorationMode;
use hadoop_ref::sync::{Arc, RwCell, thread};
use hadoop_ref::unmodelled::{Counter, Shared};

/// Runs `model` under loom with defaults and returns how many executions it took,
/// printing them with the mode (exhaustive, or bounded when `LOOM_MAX_PREEMPTIONS` is set).
fn executions(name: &str, model: impl Fn() + Sync + Send + 'static) -> u64 {
    let count: &'static Counter = Box::leak(Box::new(Counter::new()));
    let builder = loom::model::Builder::new();
    let mode = ExplorationMode::of(builder.preemption_bound);
    builder.check(move || {
        count.increment();
        model();
    });
    println!("loom rw-cell/{name}: {} iteration(s), {mode}", count.get());
    count.get()
}

#[test]
fn a_write_and_a_read_are_explored_in_both_orders() {
    let seen: Shared<BTreeSet<u32>> = Shared::new(BTreeSet::new());
    let inbox = seen.clone();
    executions("write-and-read", move || {
        let cell = Arc::new(RwCell::new(0u32));
        let writer = {
            let cell = Arc::clone(&cell);
            thread::spawn(move || cell.write(|value| *value = 1))
        };
        let read = cell.read(|value| *value);
        writer.join().expect("the writer does not panic");
        inbox.with(|seen| seen.insert(read));
    });
    let seen = seen.with(|seen| seen.clone());
    assert_eq!(
        seen,
        BTreeSet::from([0, 1]),
        "a read must see the cell before and after a write"
    );
}

#[test]
fn two_writes_are_explored_in_both_orders() {
    let seen: Shared<BTreeSet<u32>> = Shared::new(BTreeSet::new());
    let inbox = seen.clone();
    executions("two-writes", move || {
        let cell = Arc::new(RwCell::new(0u32));
        let writers: Vec<_> = [1u32, 2]
            .into_iter()
            .map(|n| {
                let cell = Arc::clone(&cell);
                thread::spawn(move || cell.write(|value| *value = n))
            })
            .collect();
        for writer in writers {
            writer.join().expect("a writer does not panic");
        }
        let last = cell.read(|value| *value);
        inbox.with(|seen| seen.insert(last));
    });
    let seen = seen.with(|seen| seen.clone());
    assert_eq!(seen, BTreeSet::from([1, 2]), "either write must land last");
}

#[test]
fn two_reads_commute() {
    let reads_only = executions("reads-only", || {
        let cell = Arc::new(RwCell::new(7u32));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let cell = Arc::clone(&cell);
                thread::spawn(move || cell.read(|value| *value))
            })
            .collect();
        for reader in readers {
            assert_eq!(reader.join().expect("a reader does not panic"), 7);
        }
    });
    let read_and_write = executions("read-and-write", || {
        let cell = Arc::new(RwCell::new(7u32));
        let reader = {
            let cell = Arc::clone(&cell);
            thread::spawn(move || cell.read(|value| *value))
        };
        let writer = {
            let cell = Arc::clone(&cell);
            thread::spawn(move || cell.write(|value| *value = 8))
        };
        let _ = reader.join().expect("the reader does not panic");
        writer.join().expect("the writer does not panic");
    });
    assert!(
        reads_only < read_and_write,
        "two reads took {reads_only} executions, a read and a write {read_and_write}: reads must commute"
    );
}
