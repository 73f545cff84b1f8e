//! The breadth-first search over a case's action sequences: each state re-executed from
//! the case's set-up along its path, keyed by its fingerprint so a state reached by two
//! orders is expanded once, with sleep sets so that of two independent actions only one
//! order is tried.
//!
//! A depth's states are expanded by [`Options::workers`] workers, each on a thread of its
//! own taking the next state of the depth (a re-execution shares nothing with another
//! but what they hand each other here). What they share is behind one lock, held only to
//! read or update it, never while a component runs; the next depth starts once every
//! worker is done with this one, so the first violation found is still the shortest.

use std::collections::{HashMap, VecDeque};

use super::action::Action;
use super::replayed::Replayed;
use super::spec::{ExploreCase, Options, Report, Verdict};
use crate::check::exploration::{Coverage, RaceWindow};
use crate::scenarios::Violation;
use crate::unmodelled::{Shared, Stopwatch};

/// A state to expand: the actions that reach it from the set-up, the actions it must not
/// try (its sleep set, sorted), since an independent order already tries them, and, for a
/// state reached again, the only actions left to try (sorted): those an earlier arrival
/// left asleep.
#[derive(Debug, Clone)]
struct Node {
    path: Vec<Action>,
    sleep: Vec<Action>,
    only: Option<Vec<Action>>,
}

/// A state seen: the sleep set it is (or was) expanded with, and the path that first
/// reached it when the fingerprints are audited ([`Options::audit_fingerprints`]).
struct Seen {
    sleep: Vec<Action>,
    path: Option<Vec<Action>>,
}

/// Whether the child state is new (to be judged), whether it is expanded (with which
/// sleep set, and which actions alone when it was seen before), and the path that reached
/// its fingerprint first when that path must be audited against the child's.
struct Admission {
    new: bool,
    expand: Option<(Vec<Action>, Option<Vec<Action>>)>,
    audit: Option<Vec<Action>>,
}

/// What the workers share.
struct Progress {
    /// Each state seen, with the sleep set it is (or was) expanded with and the path
    /// that first reached it (kept when the fingerprints are audited).
    visited: HashMap<u64, Seen>,
    /// The depth's states left to expand.
    frontier: VecDeque<Node>,
    /// The next depth's states.
    next: Vec<Node>,
    report: Report,
    /// The search's end, once a worker found it: a violation, or a case that cannot run.
    ended: Option<Verdict>,
}

/// One search, as each of its workers holds it.
#[derive(Clone)]
struct Search {
    case: ExploreCase,
    options: Options,
    windows: &'static [RaceWindow],
    clock: Stopwatch,
    progress: Shared<Progress>,
}

/// Runs the search (see [`super::explore`]).
pub(super) fn run(case: &ExploreCase, options: &Options, windows: &'static [RaceWindow]) -> Report {
    let search = Search {
        case: *case,
        options: options.clone(),
        windows,
        clock: Stopwatch::start(),
        progress: Shared::new(Progress {
            visited: HashMap::new(),
            frontier: VecDeque::new(),
            next: Vec::new(),
            report: Report::new(windows),
            ended: None,
        }),
    };
    let verdict = search.breadth_first().unwrap_or_else(error);
    let seconds = search.clock.elapsed().as_secs_f64();
    search.progress.with(|progress| {
        let mut report = std::mem::replace(&mut progress.report, Report::new(&[]));
        report.verdict = verdict;
        report.seconds = seconds;
        report.states = progress.visited.len().max(report.states);
        report
    })
}

/// A case that could not be run.
fn error(violation: Violation) -> Verdict {
    Verdict::Error(violation.to_string())
}

impl Search {
    fn breadth_first(&self) -> Result<Verdict, Violation> {
        let root = Replayed::build(&self.case)?;
        let fingerprint = root.fingerprint()?;
        let (hashing, audited) = (self.options.hashing, self.options.audit_fingerprints);
        self.progress.with(|progress| {
            progress.report.executions += 1;
            if hashing {
                let seen = Seen {
                    sleep: Vec::new(),
                    path: audited.then(Vec::new),
                };
                progress.visited.insert(fingerprint, seen);
            }
            progress.next.push(Node {
                path: Vec::new(),
                sleep: Vec::new(),
                only: None,
            });
        });
        self.complete_level();
        // Bounded by the depth asked for; each level by the states it holds.
        for depth in 0..self.options.depth {
            let more = self.progress.with(|progress| {
                progress.frontier = std::mem::take(&mut progress.next).into();
                !progress.frontier.is_empty()
            });
            if !more {
                self.progress
                    .with(|p| p.report.exhausted = p.report.beyond_reach == 0);
                return Ok(Verdict::Held);
            }
            self.run_workers();
            let (ended, unfinished) = self
                .progress
                .with(|p| (p.ended.take(), !p.frontier.is_empty()));
            if let Some(ended) = ended {
                return Ok(ended);
            }
            if unfinished {
                return Ok(Verdict::Held);
            }
            self.progress.with(|p| p.report.depth = depth + 1);
            self.complete_level();
        }
        self.progress
            .with(|p| p.report.exhausted = p.next.is_empty() && p.report.beyond_reach == 0);
        Ok(Verdict::Held)
    }

    /// Expands the depth's states on the workers: this thread is one, the others run on
    /// threads of their own (`super::worker`); returns when every one is done.
    fn run_workers(&self) {
        let others: Vec<_> = (1..self.options.workers.max(1))
            .map(|_| {
                let worker = self.clone();
                super::worker::start(Box::new(move || worker.work()))
            })
            .collect();
        self.work();
        for other in others {
            if let Err(panic) = other.join() {
                let ended = Verdict::Error(format!("a worker of the search panicked: {panic}"));
                self.progress.with(|p| p.ended = Some(ended));
            }
        }
    }

    /// A worker: expands the depth's next state until none is left, the time is up or
    /// the search ended.
    fn work(&self) {
        while let Some(node) = self.take_node() {
            let ended = match self.expand(&node) {
                Ok(None) => continue,
                Ok(Some(caught)) => caught,
                Err(violation) => error(violation),
            };
            self.progress.with(|p| {
                p.ended.get_or_insert(ended);
            });
        }
    }

    /// The depth's next state to expand, unless the search is to stop.
    fn take_node(&self) -> Option<Node> {
        let out_of_time = self
            .options
            .time_limit
            .is_some_and(|limit| self.clock.elapsed() >= limit);
        let max_executions = self.options.max_executions;
        self.progress.with(|p| {
            if out_of_time || p.ended.is_some() || p.report.executions >= max_executions {
                return None;
            }
            p.frontier.pop_front()
        })
    }

    /// Notes the states seen and the time taken when a depth is complete.
    fn complete_level(&self) {
        let hashing = self.options.hashing;
        let seconds = self.clock.elapsed().as_secs_f64();
        self.progress.with(|p| {
            let states = if hashing {
                p.visited.len()
            } else {
                // Without hashing, every path is a state (the set-up's one included).
                p.report.states + 1
            };
            p.report.levels.push((states, seconds));
        });
    }

    /// The case re-executed along `path`, counted.
    fn replay(&self, path: &[Action]) -> Result<Replayed, Violation> {
        self.progress.with(|p| p.report.executions += 1);
        Replayed::along(&self.case, path)
    }

    /// Expands `node`: each enabled action not asleep, run on a fresh re-execution (the
    /// first on the node's own), its state kept when new and judged when the scripts are
    /// done. Returns a verdict when a judged state breaks the case's invariants.
    ///
    /// A step that changes nothing the fingerprint holds (a heartbeat with nothing new)
    /// leaves the node's own state: the next action runs on it, without a re-execution.
    /// That rests on what the hashing rests on, one fingerprint deciding one future; the
    /// audit, which checks that, re-executes every action.
    fn expand(&self, node: &Node) -> Result<Option<Verdict>, Violation> {
        let mut replayed = Some(self.replay(&node.path)?);
        let (leading, enabled, here, steps_left) = match &replayed {
            Some(state) => (
                Action::leading(&state.case.cluster),
                state.enabled()?,
                self.reuses_unchanged_states()
                    .then(|| state.fingerprint())
                    .transpose()?,
                state.steps_left(),
            ),
            None => (Vec::new(), Vec::new(), None, 0),
        };
        let awake: Vec<Action> = enabled
            .into_iter()
            .filter(|a| node.sleep.binary_search(a).is_err())
            .filter(|a| {
                node.only
                    .as_ref()
                    .is_none_or(|only| only.binary_search(a).is_ok())
            })
            .collect();
        // Only a state whose scripts are done is judged: a child with more script steps
        // left than actions left to the depth leads to no judgment, and is not run.
        let actions_left = self.options.depth.saturating_sub(node.path.len() + 1);
        for (i, &action) in awake.iter().enumerate() {
            let moves_a_script = usize::from(matches!(action, Action::Driver { .. }));
            if steps_left.saturating_sub(moves_a_script) > actions_left {
                self.progress.with(|p| p.report.beyond_reach += 1);
                continue;
            }
            let mut state = match replayed.take() {
                Some(state) => state,
                None => self.replay(&node.path)?,
            };
            let mut path = node.path.clone();
            path.push(action);
            if let Err(violation) = state.apply(action) {
                return Ok(Some(Verdict::Caught { path, violation }));
            }
            let fingerprint = match self.options.hashing {
                true => Some(state.fingerprint()?),
                false => None,
            };
            if here.is_some() && fingerprint == here {
                self.progress.with(|p| p.report.transitions += 1);
                replayed = Some(state);
                continue;
            }
            let sleep = self.child_sleep(node, &awake[..i], action, &leading);
            let admission = self.admit(fingerprint, &path, sleep);
            if let Some(first) = admission.audit {
                self.audit(&state, &path, &first)?;
            }
            let Some((sleep, only)) = admission.expand else {
                continue;
            };
            if admission.new
                && state.scripts_done()
                && let Some(caught) = self.judge(state, &path)?
            {
                return Ok(Some(caught));
            }
            self.progress
                .with(|p| p.next.push(Node { path, sleep, only }));
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

    /// Whether the child state at the end of `path` (of `fingerprint`, `None` without
    /// hashing) must be expanded, and how: a new state with its own sleep set; a state
    /// seen before only for the actions an earlier arrival left asleep and this one does
    /// not (Godefroid's sleep sets with state caching: those alone are tried, with this
    /// arrival's sleep set), the state's sleep set becoming the intersection of the two;
    /// otherwise it is pruned. A state seen before is not judged again. When the
    /// fingerprints are audited, a state seen before by another path comes with that path.
    fn admit(&self, fingerprint: Option<u64>, path: &[Action], sleep: Vec<Action>) -> Admission {
        let audited = self.options.audit_fingerprints;
        self.progress.with(|p| {
            p.report.transitions += 1;
            let Some(fingerprint) = fingerprint else {
                p.report.states += 1;
                return Admission {
                    new: true,
                    expand: Some((sleep, None)),
                    audit: None,
                };
            };
            let Some(seen) = p.visited.get_mut(&fingerprint) else {
                let path = audited.then(|| path.to_vec());
                let first = Seen {
                    sleep: sleep.clone(),
                    path,
                };
                p.visited.insert(fingerprint, first);
                return Admission {
                    new: true,
                    expand: Some((sleep, None)),
                    audit: None,
                };
            };
            let audit = seen.path.clone().filter(|first| first != path);
            let woken: Vec<Action> = seen
                .sleep
                .iter()
                .copied()
                .filter(|a| sleep.binary_search(a).is_err())
                .collect();
            let expand = if woken.is_empty() {
                None
            } else {
                seen.sleep.retain(|a| sleep.binary_search(a).is_ok());
                Some((sleep, Some(woken)))
            };
            Admission {
                new: false,
                expand,
                audit,
            }
        })
    }

    /// Whether a step that changed nothing the fingerprint holds leaves a state to run
    /// the node's next action on: with hashing, unless the fingerprints are audited.
    fn reuses_unchanged_states(&self) -> bool {
        self.options.hashing && !self.options.audit_fingerprints
    }

    /// The audit of a fingerprint ([`Options::audit_fingerprints`]): `state`, at the end
    /// of `path`, has the fingerprint the state at the end of `first` has, so it must have
    /// that state's future: the same actions enabled, and each one leading to states of
    /// one fingerprint. A difference is a part of the state the fingerprint leaves out,
    /// which would let the search prune a state that behaves otherwise.
    fn audit(&self, state: &Replayed, path: &[Action], first: &[Action]) -> Result<(), Violation> {
        let enabled = state.enabled()?;
        let unfit = |detail: String| Violation {
            seed: crate::scenarios::cluster::SEED_KEY,
            property: "a state's fingerprint decides its future",
            detail,
        };
        let show = |actions: &[Action]| -> String {
            let shown: Vec<String> = actions.iter().map(Action::to_string).collect();
            format!("[{}]", shown.join(", "))
        };
        if self.replay(first)?.enabled()? != enabled {
            return Err(unfit(format!(
                "{} and {} reach one fingerprint with other actions enabled",
                show(first),
                show(path)
            )));
        }
        for action in enabled {
            let mut after = Vec::with_capacity(2);
            for from in [first, path] {
                let mut replayed = self.replay(from)?;
                replayed.apply(action)?;
                after.push(replayed.fingerprint()?);
            }
            if after[0] != after[1] {
                return Err(unfit(format!(
                    "{} and {} reach one fingerprint, but not after `{action}`",
                    show(first),
                    show(path)
                )));
            }
        }
        Ok(())
    }

    /// Judges `state`, at the end of `path` (the judgment heals and settles the cluster).
    /// While a race window is still unreached, on a re-execution of its own whose events,
    /// from the set-up on, the coverage hook feeds to the windows (as a soak's run feeds
    /// them: no story is built); once every window is reached, on `state` itself: the
    /// same run, as the components are deterministic.
    fn judge(&self, state: Replayed, path: &[Action]) -> Result<Option<Verdict>, Violation> {
        let all_reached = self.progress.with(|p| {
            p.report.judged += 1;
            p.report.windows.iter().all(|(_, at)| at.is_some())
        });
        let judged = if all_reached {
            state.case.judge()
        } else {
            drop(state);
            self.progress.with(|p| p.report.executions += 1);
            let coverage = Coverage::new(self.windows);
            let judged = coverage.install(None, || {
                coverage.execution(|| {
                    Replayed::along(&self.case, path).and_then(|state| state.case.judge())
                })
            });
            let summary = coverage.summary();
            let reached: Vec<bool> = summary.windows.iter().map(|w| w.reached > 0).collect();
            self.progress.with(|p| {
                for (window, reached) in p.report.windows.iter_mut().zip(reached) {
                    if reached && window.1.is_none() {
                        window.1 = Some(path.len());
                    }
                }
            });
            judged
        };
        Ok(judged.err().map(|violation| Verdict::Caught {
            path: path.to_vec(),
            violation,
        }))
    }
}
