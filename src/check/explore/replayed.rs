//! A cluster case re-executed from its set-up along a path of actions: the state the
//! explorer expands, fingerprints and judges.

use std::hash::{DefaultHasher, Hash, Hasher};

use super::action::Action;
use super::spec::ExploreCase;
use crate::scenarios::Violation;
use crate::scenarios::cluster::explorable::Explorable;

/// The case re-executed along a path: the cluster and each script's next step.
pub(super) struct Replayed {
    pub(super) case: Explorable,
    positions: Vec<usize>,
}

impl Replayed {
    /// The case as set up, every script at its first step.
    pub(super) fn build(case: &ExploreCase) -> Result<Self, Violation> {
        let built = case.build()?;
        let positions = vec![0; built.scripts.len()];
        Ok(Self {
            case: built,
            positions,
        })
    }

    /// The case set up and run along `path`.
    pub(super) fn along(case: &ExploreCase, path: &[Action]) -> Result<Self, Violation> {
        let mut replayed = Self::build(case)?;
        for &action in path {
            replayed.apply(action)?;
        }
        Ok(replayed)
    }

    /// Runs `action` (a driver's at its script's next step).
    pub(super) fn apply(&mut self, action: Action) -> Result<(), Violation> {
        let position = match action {
            Action::Driver { script } => self.positions[script],
            _ => 0,
        };
        action.apply(&self.case, position)?;
        if let Action::Driver { script } = action {
            self.positions[script] += 1;
        }
        Ok(())
    }

    /// The actions enabled now: the cluster's, then each script with a step left.
    pub(super) fn enabled(&self) -> Result<Vec<Action>, Violation> {
        let mut enabled = Action::enabled(&self.case.cluster).map_err(setup)?;
        enabled.extend(
            (0..self.positions.len())
                .filter(|&s| self.positions[s] < self.case.scripts[s].len())
                .map(|script| Action::Driver { script }),
        );
        Ok(enabled)
    }

    /// Whether every script ran all its steps: a state the case's run may end in.
    pub(super) fn scripts_done(&self) -> bool {
        self.steps_left() == 0
    }

    /// The script steps left, over every script: the fewest actions before a state the
    /// case's run may end in (a driver's step moves its script on; the cluster's steps
    /// move none).
    pub(super) fn steps_left(&self) -> usize {
        (self.positions.iter().zip(&self.case.scripts))
            .map(|(at, script)| script.len().saturating_sub(*at))
            .sum()
    }

    /// The state's fingerprint: the cluster's digest and the scripts' positions.
    pub(super) fn fingerprint(&self) -> Result<u64, Violation> {
        let mut hasher = DefaultHasher::new();
        self.case.cluster.digest(&mut hasher).map_err(setup)?;
        self.positions.hash(&mut hasher);
        Ok(hasher.finish())
    }
}

fn setup(error: crate::sim::mini_cluster::ClusterError) -> Violation {
    Violation {
        seed: crate::scenarios::cluster::SEED_KEY,
        property: "scenario setup",
        detail: error.to_string(),
    }
}
