//! The kit's mutation score: every mutant of `conformance_kit::mutants` through the suite of
//! this build (loom, shuttle or differential), each verdict held to the one the table states.
//! A suite that starts catching an equivalent mutant, or stops catching another, fails here;
//! the default build also checks the table on the scoreboard and the score's goal (every
//! non-equivalent mutant caught by at least two of the three suites).

use conformance_kit::mutants::{Component, Mutant};
#[cfg(any(loom, feature = "shuttle"))]
use conformance_kit::{scm::RebuildingScm, standby::PerBlockStandby, term_fencing::LockedContext};
use hadoop_ref::check::conformance::{allocation, standby, term_fencing};
use hadoop_ref::datanode::state_context::StateContextBehavior::SeedPatch;
use hadoop_ref::namenode::namesystem::NamesystemBehavior::Trunk;
use hadoop_ref::scm::ScmBehavior::Hardened;

/// Runs `catch` on every mutant (the scenario or sequence that caught it, or `None`),
/// prints the column, and fails on any verdict other than `expected`'s.
fn hold_column(
    suite: &str,
    expected: impl Fn(Mutant) -> bool,
    catch: impl Fn(Mutant) -> Option<String>,
) {
    let mut wrong = Vec::new();
    for mutant in Mutant::ALL {
        let caught = catch(mutant);
        let verdict = caught.as_deref().unwrap_or("held");
        println!(
            "  {:<34} {:<30} {verdict}",
            mutant.name(),
            mutant.component().label()
        );
        if caught.is_some() != expected(mutant) {
            wrong.push(format!(
                "{} ({}): the {suite} suite {}, the table says it {}",
                mutant.name(),
                mutant.change(),
                if caught.is_some() {
                    "caught it"
                } else {
                    "held"
                },
                if expected(mutant) {
                    "is caught"
                } else {
                    "holds"
                },
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "the {suite} suite's verdicts differ from `Mutant::expected`:\n{}",
        wrong.join("\n")
    );
}

/// The first caught case of a suite report, by name.
#[cfg(any(loom, feature = "shuttle"))]
fn first_caught(report: hadoop_ref::check::conformance::SuiteReport) -> Option<String> {
    report.caught().first().map(|c| c.scenario.to_string())
}

#[cfg(loom)] // RUSTFLAGS="--cfg loom" cargo test --release
#[test]
fn every_mutant_meets_its_loom_verdict() {
    hold_column(
        "loom",
        |m| m.expected().loom,
        |mutant| {
            first_caught(match mutant.component() {
                Component::TermFencing => {
                    term_fencing::loom_suite(LockedContext::mutated(mutant), SeedPatch)
                }
                Component::Scm => allocation::loom_suite(RebuildingScm::mutated(mutant), Hardened),
                Component::Standby => standby::loom_suite(PerBlockStandby::mutated(mutant), Trunk),
            })
        },
    );
}

#[cfg(feature = "shuttle")] // cargo test --release --features shuttle
#[test]
fn every_mutant_meets_its_shuttle_verdict() {
    let config = hadoop_ref::check::conformance::SuiteConfig::default();
    hold_column(
        "shuttle",
        |m| m.expected().shuttle,
        |mutant| {
            first_caught(match mutant.component() {
                Component::TermFencing => {
                    let factory = LockedContext::mutated(mutant);
                    term_fencing::shuttle_suite(factory, SeedPatch, &config)
                }
                Component::Scm => {
                    allocation::shuttle_suite(RebuildingScm::mutated(mutant), Hardened, &config)
                }
                Component::Standby => {
                    standby::shuttle_suite(PerBlockStandby::mutated(mutant), Trunk, &config)
                }
            })
        },
    );
}

#[cfg(not(any(loom, feature = "shuttle")))] // cargo test
mod production {
    use conformance_kit::mutants;
    use conformance_kit::{
        scm::RebuildingScm, standby::PerBlockStandby, term_fencing::LockedContext,
    };
    use hadoop_ref::check::conformance::{DifferentialConfig, DifferentialReport};

    use super::*;

    fn diverged(report: DifferentialReport) -> Option<String> {
        report
            .divergence
            .map(|d| format!("diverged at operation {}", d.length))
    }

    #[test]
    fn every_mutant_meets_its_differential_verdict() {
        let config = DifferentialConfig::default();
        hold_column(
            "differential",
            |m| m.expected().differential,
            |mutant| {
                diverged(match mutant.component() {
                    Component::TermFencing => {
                        let factory = LockedContext::mutated(mutant);
                        term_fencing::differential(factory, SeedPatch, &config)
                    }
                    Component::Scm => {
                        allocation::differential(RebuildingScm::mutated(mutant), Hardened, &config)
                    }
                    Component::Standby => {
                        standby::differential(PerBlockStandby::mutated(mutant), Trunk, &config)
                    }
                })
            },
        );
    }

    #[test]
    fn every_non_equivalent_mutant_is_caught_by_two_suites() {
        let weak: Vec<String> = Mutant::ALL
            .into_iter()
            .filter(|m| m.equivalent().is_none() && m.expected().count() < 2)
            .map(|m| format!("{} ({})", m.name(), m.change()))
            .collect();
        assert!(weak.is_empty(), "caught by fewer than two suites: {weak:?}");
        let live = Mutant::ALL.iter().filter(|m| m.equivalent().is_none());
        assert!(
            live.count() >= 20,
            "the score needs at least 20 non-equivalent mutants"
        );
    }

    /// `MUTATION_DOC=write cargo test -p conformance-kit --test mutants` rewrites the
    /// section after a change to the table.
    #[test]
    fn the_scoreboard_has_the_mutation_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scoreboard.md");
        let board = std::fs::read_to_string(path).expect("docs/scoreboard.md");
        let section = mutants::scoreboard_section();
        let updated = mutants::with_section(&board, &section);
        if std::env::var("MUTATION_DOC").as_deref() == Ok("write") {
            std::fs::write(path, updated).expect("write docs/scoreboard.md");
            return;
        }
        assert!(
            updated == board,
            "docs/scoreboard.md's mutation table is not the kit's; rewrite it with \
             MUTATION_DOC=write cargo test -p conformance-kit --test mutants"
        );
    }
}
