//! The soak's plan: every case under every scheduler that applies, each run seeded by its
//! place in the plan, so that shards together are the unsharded soak, run for run.

use hadoop_ref::check::catalogue;
use hadoop_ref::check::plan::{PlannedRun, SchedulerKind, Shard, plan};

const BOTH: [SchedulerKind; 2] = [SchedulerKind::Random, SchedulerKind::Pct { depth: 3 }];

fn key(run: &PlannedRun) -> (usize, String, String, u64) {
    (run.index, run.case.id(), run.scheduler.label(), run.seed)
}

#[test]
fn the_shards_of_a_plan_together_are_the_plan_run_for_run() {
    let full: Vec<_> = plan(&catalogue::all(), &BOTH, 7).iter().map(key).collect();
    for count in 1..=4 {
        let mut union: Vec<_> = (0..count)
            .flat_map(|index| Shard { index, count }.select(plan(&catalogue::all(), &BOTH, 7)))
            .map(|run| key(&run))
            .collect();
        union.sort();
        assert_eq!(union, full, "{count} shard(s)");
    }
}

#[test]
fn a_run_keeps_its_seed_whatever_else_is_planned() {
    let full = plan(&catalogue::all(), &BOTH, 7);
    let again = plan(&catalogue::all(), &BOTH, 7);
    assert!(full.iter().zip(&again).all(|(a, b)| key(a) == key(b)));
    let other = plan(&catalogue::all(), &BOTH, 8);
    assert!(full.iter().zip(&other).all(|(a, b)| a.seed != b.seed));
    let seeds: std::collections::BTreeSet<_> = full.iter().map(|r| r.seed).collect();
    assert_eq!(seeds.len(), full.len(), "every run has a seed of its own");
}

#[test]
fn a_sequential_case_runs_under_the_random_scheduler_only() {
    let runs = plan(&catalogue::all(), &BOTH, 1);
    for run in runs.iter().filter(|r| r.case.sequential) {
        assert_eq!(run.scheduler, SchedulerKind::Random, "{}", run.case.id());
    }
    let pct_only = plan(&catalogue::all(), &[SchedulerKind::Pct { depth: 3 }], 1);
    assert!(pct_only.iter().all(|r| !r.case.sequential));
}

#[test]
fn shards_and_scheduler_labels_parse_or_are_refused() {
    assert_eq!("1/3".parse::<Shard>(), Ok(Shard { index: 1, count: 3 }));
    for bad in ["3/3", "0/0", "a/b", "1", "-1/2", ""] {
        assert!(bad.parse::<Shard>().is_err(), "{bad:?}");
    }
    assert_eq!(Shard { index: 2, count: 5 }.to_string(), "2/5");
    for scheduler in BOTH {
        assert_eq!(
            SchedulerKind::from_label(&scheduler.label()),
            Some(scheduler)
        );
    }
    assert_eq!(SchedulerKind::from_label("pct0"), None);
    assert_eq!(SchedulerKind::from_label("dfs"), None);
}
