//! The breadth-first search over a case's action sequences: each state re-executed from
//! the case's set-up along its path, keyed by its fingerprint so a state reached by two
//! orders is expanded once, with sleep sets so that of two independent actions only one
//! order is tried.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::action::Action;
use super::spec::{ExploreCase, Options, Report, Verdict};
use crate::check::exploration::RaceWindow;
use crate::scenarios::Violation;
use crate::scenarios::cluster::explorable::Explorable;
use crate::unmodelled::Stopwatch;

/// A state to expand: the actions that reach it from the set-up, and the actions it must
/// not try (its sleep set, sorted), since an independent order already tries them.
#[derive(Debug, Clone)]
struct Node {
    path: Vec<Action>,
    sleep: Vec<Action>,
}

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
    fn enabled(&self) -> Result<Vec<Action>, Violation> {
        let mut enabled = Action::enabled(&self.case.cluster).map_err(setup)?;
        enabled.extend(
            (0..self.positions.len())
                .filter(|&s| self.positions[s] < self.case.scripts[s].len())
                .map(|script| Action::Driver { script }),
        );
        Ok(enabled)
    }

    /// Whether every script ran all its steps: a state the case's run may end in.
    fn scripts_done(&self) -> bool {
        self.positions
            .iter()
            .zip(&self.case.scripts)
            .all(|(at, script)| *at == script.len())
    }

    /// The state's fingerprint: the cluster's digest and the scripts' positions.
    fn fingerprint(&self) -> Result<u64, Violation> {
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

/// The search's bookkeeping.
struct Search<'a> {
    case: &'a ExploreCase,
    options: &'a Options,
    windows: &'a [RaceWindow],
    clock: Stopwatch,
    /// Each state seen, with the sleep set it is (or was) expanded with.
    visited: HashMap<u64, Vec<Action>>,
    report: Report,
}

/// Runs the search (see [`super::explore`]).
pub(super) fn run(case: &ExploreCase, options: &Options, windows: &[RaceWindow]) -> Report {
    let mut search = Search {
        case,
        options,
        windows,
        clock: Stopwatch::start(),
        visited: HashMap::new(),
        report: Report::new(windows),
    };
    search.report.verdict = match search.breadth_first() {
        Ok(verdict) => verdict,
        Err(violation) => Verdict::Error(violation.to_string()),
    };
    search.report.seconds = search.clock.elapsed().as_secs_f64();
    search.report.states = search.visited.len().max(search.report.states);
    search.report
}

impl Search<'_> {
    fn breadth_first(&mut self) -> Result<Verdict, Violation> {
        let root = Replayed::build(self.case)?;
        self.report.executions += 1;
        if self.options.hashing {
            self.visited.insert(root.fingerprint()?, Vec::new());
        }
        let mut frontier = vec![Node {
            path: Vec::new(),
            sleep: Vec::new(),
        }];
        self.complete_level();
        // Bounded by the depth asked for; each level by the states it holds.
        for depth in 0..self.options.depth {
            if frontier.is_empty() {
                self.report.exhausted = true;
                return Ok(Verdict::Held);
            }
            let mut next = Vec::new();
            for node in &frontier {
                if self.out_of_time() {
                    return Ok(Verdict::Held);
                }
                if let Some(caught) = self.expand(node, &mut next)? {
                    return Ok(caught);
                }
            }
            self.report.depth = depth + 1;
            self.complete_level();
            frontier = next;
        }
        self.report.exhausted = frontier.is_empty();
        Ok(Verdict::Held)
    }

    /// Notes the states seen and the time taken when a depth is complete.
    fn complete_level(&mut self) {
        let states = if self.options.hashing {
            self.visited.len()
        } else {
            // Without hashing, every path is a state (the set-up's one included).
            self.report.states + 1
        };
        let seconds = self.clock.elapsed().as_secs_f64();
        self.report.levels.push((states, seconds));
    }

    fn out_of_time(&self) -> bool {
        self.options
            .time_limit
            .is_some_and(|limit| self.clock.elapsed() >= limit)
            || self.report.executions >= self.options.max_executions
    }

    /// Expands `node`: each enabled action not asleep, run on a fresh re-execution (the
    /// first on the node's own), its state kept when new and judged when the scripts are
    /// done. Returns a verdict when a judged state breaks the case's invariants.
    fn expand(&mut self, node: &Node, next: &mut Vec<Node>) -> Result<Option<Verdict>, Violation> {
        let mut replayed = Some(Replayed::along(self.case, &node.path)?);
        self.report.executions += 1;
        let leading = replayed
            .as_ref()
            .map(|state| Action::leading(&state.case.cluster))
            .unwrap_or_default();
        let enabled = replayed
            .as_ref()
            .map(Replayed::enabled)
            .transpose()?
            .unwrap_or_default();
        let awake: Vec<Action> = enabled
            .into_iter()
            .filter(|a| node.sleep.binary_search(a).is_err())
            .collect();
        for (i, &action) in awake.iter().enumerate() {
            let mut state = match replayed.take() {
                Some(state) => state,
                None => {
                    self.report.executions += 1;
                    Replayed::along(self.case, &node.path)?
                }
            };
            let mut path = node.path.clone();
            path.push(action);
            if let Err(violation) = state.apply(action) {
                return Ok(Some(Verdict::Caught { path, violation }));
            }
            self.report.transitions += 1;
            let sleep = self.child_sleep(node, &awake[..i], action, &leading);
            let Some(sleep) = self.admit(&state, sleep)? else {
                continue;
            };
            if state.scripts_done()
                && let Some(caught) = self.judge(state, &path)?
            {
                return Ok(Some(caught));
            }
            next.push(Node { path, sleep });
        }
        Ok(None)
    }

    /// The sleep set of the child `action` leads to: the actions asleep here or tried
    /// before it at this node, that commute with it.
    fn child_sleep(
        &self,
        node: &Node,
        tried: &[Action],
        action: Action,
        leading: &[bool],
    ) -> Vec<Action> {
        if !self.options.partial_order {
            return Vec::new();
        }
        let mut sleep: Vec<Action> = node
            .sleep
            .iter()
            .chain(tried)
            .copied()
            .filter(|b| action.independent(*b, leading))
            .collect();
        sleep.sort_unstable();
        sleep.dedup();
        sleep
    }

    /// Whether the child state must be expanded, with which sleep set: a new state with
    /// its own; a state seen before only if this arrival sleeps on fewer actions (those
    /// must be tried now), with the intersection; otherwise it is pruned.
    fn admit(
        &mut self,
        state: &Replayed,
        sleep: Vec<Action>,
    ) -> Result<Option<Vec<Action>>, Violation> {
        if !self.options.hashing {
            self.report.states += 1;
            return Ok(Some(sleep));
        }
        let fingerprint = state.fingerprint()?;
        match self.visited.get_mut(&fingerprint) {
            None => {
                self.visited.insert(fingerprint, sleep.clone());
                Ok(Some(sleep))
            }
            Some(seen) if seen.iter().all(|a| sleep.binary_search(a).is_ok()) => Ok(None),
            Some(seen) => {
                seen.retain(|a| sleep.binary_search(a).is_ok());
                Ok(Some(seen.clone()))
            }
        }
    }

    /// Judges `state`, at the end of `path` (the judgment heals and settles the cluster).
    /// While a race window is still unreached, on a re-execution of its own that records
    /// its events, from the set-up on, for the windows to read; once every window is
    /// reached, on `state` itself: the same run, as the components are deterministic.
    fn judge(&mut self, state: Replayed, path: &[Action]) -> Result<Option<Verdict>, Violation> {
        self.report.judged += 1;
        let judged = if self.report.windows.iter().all(|(_, at)| at.is_some()) {
            state.case.judge()
        } else {
            drop(state);
            self.report.executions += 1;
            let (judged, story) = crate::story::record(|| {
                Replayed::along(self.case, path).and_then(|state| state.case.judge())
            });
            for (reached, window) in self.report.windows.iter_mut().zip(self.windows) {
                if reached.1.is_none() && window.reached_by(&story) {
                    reached.1 = Some(path.len());
                }
            }
            judged
        };
        Ok(judged.err().map(|violation| Verdict::Caught {
            path: path.to_vec(),
            violation,
        }))
    }
}
