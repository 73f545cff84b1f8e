//! What a soak runs: one run per catalogue case and scheduler, each with a seed of its own
//! derived from the soak's seed and the run's place in the plan. A run's schedules depend
//! on nothing else, so runs may go to separate processes (`--jobs`) or machines
//! (`--shard i/n`) in any order: with the same seed, the union of the shards' runs is the
//! unsharded plan, run for run.
//!
//! ```
//! use hadoop_ref::check::catalogue;
//! use hadoop_ref::check::plan::{SchedulerKind, Shard, plan};
//!
//! let schedulers = [SchedulerKind::Random, SchedulerKind::Pct { depth: 3 }];
//! let all = plan(&catalogue::all(), &schedulers, 42);
//! let shard: Shard = "1/2".parse()?;
//! assert!(shard.select(all.clone()).iter().all(|run| run.index % 2 == 1));
//! # Ok::<(), hadoop_ref::check::plan::ShardError>(())
//! ```

use std::fmt;
use std::str::FromStr;

use super::catalogue::Case;
use crate::scenarios::rng::SeededRng;

/// Which shuttle scheduler explores the schedules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchedulerKind {
    /// Uniformly random choice at every scheduling point.
    Random,
    /// Probabilistic concurrency testing with the given bug depth.
    Pct {
        /// Bug depth (number of priority change points + 1).
        depth: usize,
    },
    /// Uniform random walk (shuttle's `UrwRandomScheduler`): each execution drawn
    /// uniformly from the schedules, weighting every choice by the steps left to each
    /// runnable task.
    Urw,
}

impl SchedulerKind {
    /// `random`, `pct3` or `urw`.
    pub fn label(self) -> String {
        match self {
            SchedulerKind::Random => "random".into(),
            SchedulerKind::Pct { depth } => format!("pct{depth}"),
            SchedulerKind::Urw => "urw".into(),
        }
    }

    /// The scheduler a [`label`](Self::label) names (`random`, `urw`, `pct<depth>` with a
    /// depth of at least 1).
    pub fn from_label(label: &str) -> Option<SchedulerKind> {
        match label {
            "random" => Some(SchedulerKind::Random),
            "urw" => Some(SchedulerKind::Urw),
            _ => {
                let depth = label.strip_prefix("pct")?.parse().ok()?;
                (depth >= 1).then_some(SchedulerKind::Pct { depth })
            }
        }
    }
}

/// One run of a soak: a case under one scheduler, with its seed.
#[derive(Debug, Clone, Copy)]
pub struct PlannedRun {
    /// Its place in the unsharded plan.
    pub index: usize,
    /// The case.
    pub case: Case,
    /// The scheduler.
    pub scheduler: SchedulerKind,
    /// The scheduler seed of this run.
    pub seed: u64,
}

impl PlannedRun {
    /// Whether the run's scheduler is expected to reach its case's defect
    /// ([`Case::pct_reaches`], [`Case::random_reaches`]); always true of a fixed variant.
    pub fn scheduler_reaches(&self) -> bool {
        match self.scheduler {
            SchedulerKind::Pct { .. } => self.case.pct_reaches,
            SchedulerKind::Random | SchedulerKind::Urw => self.case.random_reaches,
        }
    }
}

/// The runs of `cases` under `schedulers`, in catalogue order, each seeded from `seed` and
/// its index. A sequential case (no threads) runs under the random scheduler only: it has
/// one schedule, and PCT needs threads to prioritise.
pub fn plan(cases: &[Case], schedulers: &[SchedulerKind], seed: u64) -> Vec<PlannedRun> {
    let pairs = cases.iter().flat_map(|&case| {
        schedulers
            .iter()
            .copied()
            .filter(move |s| !(case.sequential && matches!(s, SchedulerKind::Pct { .. })))
            .map(move |scheduler| (case, scheduler))
    });
    pairs
        .enumerate()
        .map(|(index, (case, scheduler))| PlannedRun {
            index,
            case,
            scheduler,
            seed: run_seed(seed, index),
        })
        .collect()
}

/// The seed of run `index` of a soak seeded with `seed`.
fn run_seed(seed: u64, index: usize) -> u64 {
    let mixed = seed.wrapping_add((index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    SeededRng::new(mixed).next_u64()
}

/// One of `count` shards of a plan: the runs whose index is `index` modulo `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, from 0.
    pub index: usize,
    /// How many shards.
    pub count: usize,
}

impl Shard {
    /// The whole plan as one shard.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// The runs of `plan` that belong to this shard, in plan order.
    pub fn select(self, plan: Vec<PlannedRun>) -> Vec<PlannedRun> {
        plan.into_iter()
            .filter(|run| run.index % self.count == self.index)
            .collect()
    }
}

/// A shard that is not `i/n` with `0 <= i < n`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a shard is i/n with 0 <= i < n, not {given:?}")]
pub struct ShardError {
    /// What was given.
    pub given: String,
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || ShardError {
            given: text.to_owned(),
        };
        let (index, count) = text.split_once('/').ok_or_else(error)?;
        let (index, count) = (
            index.trim().parse().map_err(|_| error())?,
            count.trim().parse().map_err(|_| error())?,
        );
        if index < count {
            Ok(Shard { index, count })
        } else {
            Err(error())
        }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}
