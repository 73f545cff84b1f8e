//! Property tests: `TwoWindowBucket` against a reference model over random sequences of
//! adds, space-checked adds, removals, rolls and clock advances; and the slot arithmetic of
//! `hasSlot` over the healthy volumes of a node report.

use std::collections::BTreeSet;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use hadoop_ref::hdds::ids::ContainerId;
use hadoop_ref::hdds::report::StorageReport;
use hadoop_ref::scm::pending::{TwoWindowBucket, has_slot};

use crate::test_util::allocation::{ROLL_MS, SIZE, report};

#[derive(Debug, Clone)]
enum Op {
    Add(u64),
    CheckAdd(u64, u64),
    Remove(u64),
    Advance(u64),
    Roll,
    Clear,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u64..6).prop_map(Op::Add),
        3 => ((0u64..6), (0u64..5)).prop_map(|(c, s)| Op::CheckAdd(c, s)),
        2 => (0u64..6).prop_map(Op::Remove),
        3 => (0u64..2_500).prop_map(Op::Advance),
        2 => Just(Op::Roll),
        1 => Just(Op::Clear),
    ]
}

/// Entries carry the roll generation they were added in; an entry is pending while at
/// most one roll happened since (current window: none; previous window: one).
#[derive(Debug, Default)]
struct Model {
    now_ms: u64,
    last_roll_ms: u64,
    generation: u64,
    entries: Vec<(u64, u64)>,
}

impl Model {
    fn roll(&mut self) {
        let elapsed = self.now_ms - self.last_roll_ms;
        if elapsed >= 2 * ROLL_MS {
            self.generation += 2;
            self.last_roll_ms = self.now_ms;
        } else if elapsed >= ROLL_MS {
            self.generation += 1;
            self.last_roll_ms = self.now_ms;
        }
        let generation = self.generation;
        self.entries.retain(|&(_, g)| generation - g <= 1);
    }

    fn add(&mut self, container: u64) -> bool {
        let entry = (container, self.generation);
        if self.entries.contains(&entry) {
            false
        } else {
            self.entries.push(entry);
            true
        }
    }

    fn count(&self) -> usize {
        self.entries.len()
    }

    fn containers(&self) -> BTreeSet<ContainerId> {
        self.entries.iter().map(|&(c, _)| ContainerId(c)).collect()
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/pending_bucket_model.txt",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn two_window_bucket_matches_reference_model(ops in prop::collection::vec(op(), 1..80)) {
        let mut bucket = TwoWindowBucket::new(0, ROLL_MS);
        let mut model = Model::default();
        for op in ops {
            match op {
                Op::Add(c) => prop_assert_eq!(bucket.add(ContainerId(c)), model.add(c)),
                Op::CheckAdd(c, slots) => {
                    let fits = (slots as usize) > model.count();
                    let expected = fits && model.add(c);
                    let added = bucket.check_space_and_add(&[report(slots)], SIZE, ContainerId(c));
                    prop_assert_eq!(added, expected);
                }
                Op::Remove(c) => {
                    let before = model.count();
                    model.entries.retain(|&(e, _)| e != c);
                    prop_assert_eq!(bucket.remove(ContainerId(c)), model.count() < before);
                }
                Op::Advance(ms) => model.now_ms += ms,
                Op::Roll => {
                    bucket.roll_if_needed(model.now_ms);
                    model.roll();
                }
                Op::Clear => {
                    bucket.clear();
                    model.entries.clear();
                }
            }
            prop_assert_eq!(bucket.pending_count(), model.count());
            prop_assert_eq!(bucket.containers(), model.containers());
        }
    }

    #[test]
    fn has_slot_is_the_sum_of_healthy_slots_against_pending(
        volumes in prop::collection::vec((0u64..1_000, 0u64..1_000, 0u64..100, any::<bool>()), 0..5),
        size in 1u64..300,
        pending in 0usize..12,
    ) {
        let reports: Vec<StorageReport> = volumes
            .iter()
            .map(|&(remaining, committed, spare, failed)| StorageReport {
                failed,
                ..StorageReport::new(remaining, committed, spare)
            })
            .collect();
        let total: u64 = reports.iter().filter(|r| !r.failed).map(|r| r.slots(size)).sum();
        prop_assert_eq!(has_slot(&reports, size, pending), total > pending as u64);
        if has_slot(&reports, size, pending + 1) {
            prop_assert!(has_slot(&reports, size, pending), "monotone in the pending count");
        }
        for report in &reports {
            prop_assert!(report.slots(size) * size <= report.usable());
            prop_assert!(report.usable() <= report.remaining);
        }
    }
}
