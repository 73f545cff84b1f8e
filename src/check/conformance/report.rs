//! What a conformance suite found, case by case: held, caught (with the story of the
//! violating execution), or not claimed by the reference the implementation is held to.
//!
//! **The race** a suite looks for is the seed's (HDDS-17268's lost term, HDFS-2742's
//! report judged against a later block state), in another implementation than the crate's.
//!
//! **What counts.** A suite passes when no case caught a violation; a defective
//! implementation must be caught by at least one case, and the report says after how many
//! executions, so a checker that cannot fail shows as one that never caught anything.

use std::fmt;

use crate::check::plan::SchedulerKind;

/// How long and how the shuttle suites explore each case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuiteConfig {
    /// Seed of the schedulers (the scenario seeds are drawn from it): a run is reproducible.
    pub seed: u64,
    /// Schedules per case and scheduler (a case stops at its first violation).
    pub iterations: usize,
    /// Bug depth of the PCT scheduler (each case also runs under the random scheduler).
    pub pct_depth: usize,
}

impl Default for SuiteConfig {
    /// 1 000 schedules per case and scheduler, PCT at depth 3, a fixed seed.
    fn default() -> Self {
        Self {
            seed: 0x0C0F_0A11,
            iterations: 1_000,
            pct_depth: 3,
        }
    }
}

/// Which checker ran a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checker {
    /// Loom, exhaustively.
    Loom,
    /// Shuttle, with this scheduler.
    Shuttle(SchedulerKind),
    /// Shuttle, one execution of a sequential scenario.
    Sequential,
}

impl fmt::Display for Checker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Checker::Loom => f.write_str("loom"),
            Checker::Shuttle(kind) => write!(f, "shuttle {}", kind.label()),
            Checker::Sequential => f.write_str("sequential"),
        }
    }
}

/// How one case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseOutcome {
    /// Every execution held.
    Held,
    /// An execution broke an invariant.
    Caught {
        /// The violation (seed key, property, what was seen).
        violation: String,
        /// The step table of the violating execution, ending at the violation.
        story: String,
    },
    /// The reference itself breaks this scenario by design, so the suite does not hold
    /// the implementation to it.
    NotClaimed,
}

/// One case of a suite: a scenario under one checker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseReport {
    /// The catalogue's scenario name.
    pub scenario: &'static str,
    /// The checker.
    pub checker: Checker,
    /// Executions run (up to and including a violating one).
    pub executions: u64,
    /// How it ended.
    pub outcome: CaseOutcome,
}

impl CaseReport {
    /// A case the reference itself breaks, so the suite does not run it.
    #[cfg(any(loom, feature = "shuttle"))]
    pub(crate) fn not_claimed(scenario: &'static str, checker: Checker) -> Self {
        Self {
            scenario,
            checker,
            executions: 0,
            outcome: CaseOutcome::NotClaimed,
        }
    }

    /// `model` explored exhaustively by loom, its first violation told as a story.
    #[cfg(loom)]
    pub(crate) fn explored_by_loom(
        scenario: &'static str,
        model: impl Fn() -> Result<(), crate::scenarios::Violation> + Send + Sync + 'static,
    ) -> Self {
        let exploration = crate::check::loom::explore(scenario, model);
        let outcome = match &exploration.violation {
            None => CaseOutcome::Held,
            Some(violation) => CaseOutcome::Caught {
                violation: violation.clone(),
                story: exploration.told(),
            },
        };
        Self {
            scenario,
            checker: Checker::Loom,
            executions: exploration.iterations,
            outcome,
        }
    }

    /// Whether this case caught a violation.
    pub fn caught(&self) -> bool {
        matches!(self.outcome, CaseOutcome::Caught { .. })
    }

    /// The step table of the violating execution, if this case caught one.
    pub fn story(&self) -> Option<&str> {
        match &self.outcome {
            CaseOutcome::Caught { story, .. } => Some(story),
            _ => None,
        }
    }
}

/// What a suite found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteReport {
    /// The seed whose scenarios ran (`HDDS-17268`, …).
    pub seed_key: &'static str,
    /// The implementation checked (its type name).
    pub implementation: String,
    /// The reference behavior it is held to.
    pub reference: &'static str,
    /// Every case, in the order run.
    pub cases: Vec<CaseReport>,
}

impl SuiteReport {
    /// Whether no case caught a violation.
    pub fn passed(&self) -> bool {
        !self.cases.iter().any(CaseReport::caught)
    }

    /// The cases that caught a violation.
    pub fn caught(&self) -> Vec<&CaseReport> {
        self.cases.iter().filter(|c| c.caught()).collect()
    }

    /// Panics, printing the report with the story of every violation, unless it passed.
    pub fn assert_passes(&self) {
        assert!(self.passed(), "{self}");
    }

    /// Panics unless some case caught a violation of the suite's seed; returns the first
    /// such case. For a defective implementation: a suite that catches nothing proves
    /// nothing about the fix.
    pub fn assert_caught(&self) -> &CaseReport {
        let first = self.cases.iter().find(|case| match &case.outcome {
            CaseOutcome::Caught { violation, .. } => violation.contains(self.seed_key),
            _ => false,
        });
        match first {
            Some(case) => case,
            None => panic!("no case caught a {} violation:\n{self}", self.seed_key),
        }
    }
}

impl SuiteReport {
    /// One line per case (scenario, checker, executions, verdict), without the stories.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = self.write_table(&mut out);
        out
    }

    fn write_table(&self, f: &mut impl fmt::Write) -> fmt::Result {
        writeln!(
            f,
            "{} suite, {} held to {}:",
            self.seed_key, self.implementation, self.reference
        )?;
        for case in &self.cases {
            let verdict = match &case.outcome {
                CaseOutcome::Held => "held".to_owned(),
                CaseOutcome::Caught { violation, .. } => format!("CAUGHT: {violation}"),
                CaseOutcome::NotClaimed => "not claimed (the reference breaks it too)".to_owned(),
            };
            writeln!(
                f,
                "  {:<62} [{}] {} execution(s): {verdict}",
                case.scenario, case.checker, case.executions
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for SuiteReport {
    /// The table, then the story of every caught case.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_table(f)?;
        for case in &self.cases {
            if let CaseOutcome::Caught { story, .. } = &case.outcome {
                writeln!(
                    f,
                    "\nthe story of {} [{}]:\n{story}",
                    case.scenario, case.checker
                )?;
            }
        }
        Ok(())
    }
}
